//===- Passes.td - NVIDIA GPU code generation passes ------*- tablegen -*-===//
#ifndef KILN_CODEGEN_GPU_PASSES
#define KILN_CODEGEN_GPU_PASSES

include "mlir/Pass/PassBase.td"

def PackWeightsPass : Pass<"kiln-gpu-pack-weights", "ModuleOp"> {
  let summary = "Move every constant memref.global into one weights blob argument";
  let description = [{
    Kernels cannot read host globals, so the weights go to the device as one
    blob that the runtime copies there when a session is created. Every
    constant `memref.global` gets a 64-byte aligned offset in the blob; each
    entry function gains a trailing `memref<Nxi8>` argument (`kiln.weights`,
    after the arena) and every `memref.get_global` becomes a `memref.view`
    of it. The globals are replaced by one `@__kiln_weights` global holding
    the packed bytes as a resource. Runs after `kiln-arena-allocation`.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def MapToLaunchPass : Pass<"kiln-gpu-map-to-launch", "func::FuncOp"> {
  let summary = "Turn every top-level op of a bufferized function into a gpu.launch";
  let description = [{
    The generic GPU mapping. Each `linalg.generic` on memrefs (run
    `linalg-generalize-named-ops` first) becomes a 1-D grid with one thread
    per point of its parallel iteration space (the innermost parallel
    dimension varies fastest, so neighbouring threads touch neighbouring
    elements); reduction loops stay sequential inside the thread with the
    accumulators in registers; such a kernel gives each thread `coarsen`
    outputs along a parallel dimension that an input does not depend on, so
    that input is loaded once for all of them. A contraction with two
    memref inputs (a matmul, a batched matmul, a convolution) whose output
    tile is at least 16x16 instead gets shared-memory tiles: each block
    copies 16-wide slices of its A and B tiles into workgroup memory
    between two `gpu.barrier`s and accumulates a 64x64 (or smaller) output
    tile from there, 4x4 outputs per thread. An fp16 contraction whose
    payload is a multiply-add instead runs on tensor cores: 4 warps per
    block, each computing 16x16 fragments with `gpu.subgroup_mma_compute`
    from the shared tiles, accumulating in fp32. A `linalg.generic` whose output depends on a
    reduction dimension, and every other op with side effects (scalar loops,
    run-time guards), runs in a one-thread kernel. Side-effect free ops
    (constants, views) are cloned into the kernels that use them, so every
    kernel captures only the function's arguments: inputs, outputs, arena
    and weights. All launches go into one `gpu.module`.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "threads per block of the parallel kernels">,
    Option<"coarsen", "coarsen", "int64_t", /*default=*/"4",
           "outputs per thread of a kernel with a reduction, along a "
           "parallel dimension some input does not depend on (1: off)">,
    Option<"tile", "tile", "bool", /*default=*/"true",
           "contractions (matmuls, convolutions as implicit GEMMs) get "
           "shared-memory tiles: 16x16-thread blocks, up to 64x64 outputs "
           "per block, K in slices of 16 staged in shared memory">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"true",
           "with tile: fp16 contractions whose payload is a multiply-add run "
           "on tensor cores (warp-level 16x16x16 gpu.subgroup_mma ops, fp32 "
           "accumulation)">,
    Option<"moduleName", "module-name", "std::string", /*default=*/"\"kiln_kernels\"",
           "name of the gpu.module that receives the kernels">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AlignWorkgroupPass : Pass<"kiln-gpu-align-workgroup", "ModuleOp"> {
  let summary = "Align every shared-memory buffer of the outlined kernels";
  let description = [{
    Runs after `gpu-kernel-outlining`: sets `llvm.align` on every workgroup
    attribution of every `gpu.func`, which `convert-gpu-to-nvvm` gives the
    `.shared` array it creates. Without it an array is aligned to its
    element only (2 bytes for fp16), while a wmma fragment load needs 32
    bytes and a 16-byte vector access 16.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"32",
           "alignment in bytes">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def EmulateOnHostPass : Pass<"kiln-gpu-emulate-on-host", "ModuleOp"> {
  let summary = "Run the kernels of kiln-gpu-map-to-launch as host loops (testing)";
  let description = [{
    Checks the GPU mapping without a GPU. A `gpu.launch` without barriers
    or workgroup memory becomes six nested loops over its blocks and threads
    with the body inlined (sequential threads compute the same result). One
    with them becomes three loops over the blocks around an `scf.forall`
    over the block's threads marked `kiln.fibers`, with `gpu.barrier` as a
    call of `__kiln_emu_barrier` and each workgroup buffer as one host
    `memref.alloca` before the loops; kiln-outline-parallel-loops hands
    that forall to the runtime's `__kiln_emu_fibers`, which runs the threads
    as fibers that switch at each barrier. The weights argument of
    `kiln-gpu-pack-weights` becomes a `memref.get_global` of the packed
    blob. The CPU lowering then finishes the job, so the numbers can be
    compared with reference outputs.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif
