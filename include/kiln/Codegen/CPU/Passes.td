//===- Passes.td - CPU code generation passes -------------*- tablegen -*-===//
#ifndef KILN_CODEGEN_CPU_PASSES
#define KILN_CODEGEN_CPU_PASSES

include "mlir/Pass/PassBase.td"

def FuseElementwisePass : Pass<"kiln-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuse chains of elementwise linalg ops into one loop nest";
  let description = [{
    linalg's elementwise fusion, restricted: a producer is fused only into a
    consumer without reduction loops (fusing into a matmul or a reduction
    would recompute the producer once per reduction step), and only when the
    consumer is its one user.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FoldRequantizationPass : Pass<"kiln-fold-requantization", "func::FuncOp"> {
  let summary = "Static int8: fold requantization into one multiply-add and clamp";
  let description = [{
    In an elementwise linalg.generic, a quantization marked `kiln.requant`
    (static int8's `roundeven(y * inv) + zp`, clamped and converted) whose
    input `y` is clamped to constants and affine in per-channel values
    (`y = f * a[c] + b[c]`, the fused dequantization) becomes
    `roundeven(clamp(fma(f, a[c] * inv, b[c] * inv + zp), lo, hi))`: the
    scale and zero point move through the clamps (inv > 0, zp integral) and
    rounding commutes with clamps to integral bounds. The intermediate
    roundings differ in the last bit; unmarked quantizations (QDQ,
    QLinear*) are left exact.
  }];
  let dependentDialects = ["::mlir::math::MathDialect",
                           "::mlir::arith::ArithDialect"];
}

def HoistRequantizationPass : Pass<"kiln-hoist-requantization", "func::FuncOp"> {
  let summary = "Static int8: quantize before max pooling and concatenation";
  let description = [{
    An elementwise generic holding a quantization marked `kiln.requant`
    whose input is a concatenation (the lowering's chain of copies into
    slices) is applied to each piece instead, and the pieces concatenated as
    bytes. One whose input is a `linalg.pooling_nhwc_max`, when its body is
    non-decreasing and ends in bytes of [0, 255], is applied to the pooling's
    input (a -inf padding becoming 0) and followed by
    `linalg.pooling_nhwc_max_unsigned`. The quantization then fuses into the
    epilogues that made the f32 values, which write bytes.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileAndVectorizePass : Pass<"kiln-cpu-tile-and-vectorize", "func::FuncOp"> {
  let summary = "Tile linalg ops into register-sized static tiles and vectorize them";
  let description = [{
    Chooses tile sizes per op kind: matmuls and contractions get an
    `mr x nr` register tile with a unit reduction step, NHWC convolutions and
    NCHW pooling are tiled so that they decompose into vectorizable 1-D
    windows, and everything else is tiled along its innermost parallel
    dimension. Tile sizes always divide the loop ranges, so every tile is
    static and vectorizes without masks. In ops big enough to share among
    threads, the outermost loop over tiles is an `scf.forall`
    (`kiln-cpu-outline-parallel-loops` turns it into a thread-pool call).
    The tiles of static int8's depthwise product (`kiln.int8_depthwise`)
    get a vpdpbusd kernel instead of linalg's vectorizer. Ops that do not
    vectorize stay as linalg ops and become scalar loops later.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes of one vector register (16 for AVX-512, 8 for AVX2)">,
    Option<"amx", "amx", "bool", /*default=*/"false",
           "products marked kiln.bf16_matmul become AMX kernels later "
           "(--kiln-cpu-amx-matmul), which start from zero tiles: drop their "
           "zero fills">,
    Option<"parallelWork", "parallel-work", "int64_t", /*default=*/"32768",
           "ops with at least this many loop iterations get their outermost "
           "tiled parallel loop as an scf.forall for the thread pool "
           "(0: none)">,
    Option<"amxEpilogueBytes", "amx-epilogue-bytes", "int64_t",
           /*default=*/"1048576",
           "with amx, a bf16 AMX product whose accumulators take at least "
           "this many bytes applies its elementwise epilogue per block "
           "(kiln.amx_epilogue); smaller ones stay in L2 and keep the "
           "epilogue as a pass of its own. int8 products always apply it">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect",
    "::mlir::affine::AffineDialect", "::mlir::LLVM::LLVMDialect"];
}

def VnniMatmulPass : Pass<"kiln-cpu-vnni-matmul", "func::FuncOp"> {
  let summary = "The int8 product of dynamic quantization as an AVX512-VNNI micro-kernel";
  let description = [{
    Replaces each linalg.generic marked `kiln.int8_matmul` (uint8 rows
    `[M, K4, 4]` times int8 weights packed `[P, K4, R, 4]`, accumulated into
    a zero-filled i32 `[M, P, R]`) with loops over `mr x R` output tiles
    whose inner loop over K4 keeps `mr * R / 16` accumulators in registers:
    each step loads the panel's `R / 16` weight vectors (64 bytes each),
    broadcasts 4 bytes of each row and issues one
    `llvm.x86.avx512.vpdpbusd.512` per accumulator. When the product's only
    user is its epilogue (marked `kiln.int8_epilogue`: zero-point correction,
    scales, bias), the kernel applies it to the registers and writes f32, so
    the i32 accumulators never reach memory. LLVM does not form
    vpdpbusd from the vectorized ext/mul/add contraction, hence the
    intrinsic. Only for targets with avx512vnni (the pipeline runs the pass
    only then); other generics are left to the generic tiling. With
    `amx=true` (targets with amx-int8) a product with 16-column panels and
    K4 a multiple of 16 is re-marked `kiln.amx_int8_matmul` instead and
    left for --kiln-cpu-amx-matmul (tdpbusd). A product of at least
    `parallel-work` multiply-adds with two or more row tiles takes its row
    tiles in an scf.forall, which the thread pool splits. With `bf16=true`
    (targets with avx512bf16 and no AMX) the bf16 products
    (`kiln.bf16_matmul`: bf16 `[M, K2, 2]` x `[P, K2, 16, 2]` -> f32) get the
    same kernel with `llvm.x86.avx512bf16.dpbf16ps.512` on pairs of k.
  }];
  let options = [
    Option<"maxRows", "max-rows", "int64_t", /*default=*/"8",
           "rows per register tile (the largest divisor of M up to this)">,
    Option<"parallelWork", "parallel-work", "int64_t", /*default=*/"1000000",
           "multiply-adds from which the row tiles are shared by the threads "
           "(0: never)">,
    Option<"amx", "amx", "bool", /*default=*/"false",
           "leave the products that fit AMX tiles to --kiln-cpu-amx-matmul">,
    Option<"bf16", "bf16", "bool", /*default=*/"false",
           "also run the kiln.bf16_matmul products on vdpbf16ps">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect"];
}

def AmxMatmulPass : Pass<"kiln-cpu-amx-matmul", "ModuleOp"> {
  let summary = "bf16 and int8 products as AMX tile loops";
  let description = [{
    Replaces each linalg.generic on buffers marked `kiln.bf16_matmul` (bf16
    rows `[M, K2, 2]` times weights packed `[P, K2, 16, 2]` into f32
    `[M, P, 16]`, see kiln.bf16_matmul) or `kiln.amx_int8_matmul` (u8 rows
    `[M, K4, 4]` times s8 weights `[P, K4, 16, 4]` into i32 `[M, P, 16]`)
    with loops of `amx.tile_load`, `amx.tile_mulf` (tdpbf16ps) or
    `amx.tile_muli` (tdpbusd) and `amx.tile_store` over blocks of 32 rows x
    2 panels: four f32 accumulator tiles carried through the k loop, two A
    and two B tiles loaded per step. Blocks are independent and become one
    `scf.forall`. Each group of blocks with one tile height goes into a
    private noinline function `<func>_amxN` (called with the three buffers)
    when they are static identity-layout memrefs: LLVM fixes the shape of
    each tile register per function. A product whose only reader is an
    elementwise generic marked `kiln.amx_epilogue` (placed right after it
    by --kiln-cpu-tile-and-vectorize{amx}) applies that generic to each
    block of accumulators from a per-thread stack scratch, 16 channels at a
    time, and its own result buffer is no longer used. Runs after
    bufferization (tiles address memory), before the arena is planned, and
    only for targets with amx-bf16 (amx-int8 for the int8 products). A
    marked generic it cannot match is an error:
    with --kiln-cpu-tile-and-vectorize{amx} its zero fill is gone, so no
    other lowering would compute it correctly.
  }];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::amx::AMXDialect",
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::vector::VectorDialect", "::mlir::math::MathDialect"];
}

def LowerVectorOpsPass : Pass<"kiln-cpu-lower-vector-ops", "func::FuncOp"> {
  let summary = "Lower contractions to outer products and math to polynomials";
  let description = [{
    Contractions become outer products (FMAs on whole registers), transfer
    permutations become transposes, multi-reductions become inner reductions,
    and exp/tanh/erf/log become vectorizable polynomial approximations.
    Vector reads used only element by element (a convolution's input pixels,
    broadcast into FMAs) become scalar loads: broadcasts from memory.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

def CheapFloatOpsPass : Pass<"kiln-cpu-cheap-float-ops", "func::FuncOp"> {
  let summary = "Float operations in the forms x86 runs in one instruction";
  let description = [{
    Two rewrites, run late (after the AMX kernels have built their
    epilogues, before the conversion to LLVM):
    - `arith.fptosi(math.roundeven(x))` from f32 to i32 becomes
      `llvm.intr.lrint`, the same value under the default rounding mode
      (nearest, ties to even) that compiled code assumes: one `vcvtps2dq`
      where the pair takes a `vrndscaleps` and a `vcvttps2dq`. Static int8's
      requantizations end so. Vectors of more than one dimension are
      rewritten row by row.
    - `arith.maximumf` / `arith.minimumf` get the `nsz` flag: NaN still
      propagates, but the sign of a zero result is not kept. Against a
      constant that is not NaN (ReLU, Clip and ReLU6, the clamps of a
      quantization) each becomes one `vmaxps` / `vminps` instead of three
      instructions (the compare and masked move that order -0 below +0);
      between two values (max pooling, Max, ReduceMax) three instead of six.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def SplitEmptyTensorsPass : Pass<"kiln-cpu-split-empty-tensors", "func::FuncOp"> {
  let summary = "Give every use of a tensor.empty its own tensor.empty";
  let description = [{
    CSE merges identical `tensor.empty` ops; bufferization then gives the
    ops that fill them one buffer whose life spans all of them. Run right
    before bufferization, this pass undoes the merge so that every buffer
    lives only as long as its own value and the arena planner can reuse it.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def FillBordersPass : Pass<"kiln-cpu-fill-borders", "func::FuncOp"> {
  let summary = "Fill only the border of a padded buffer whose interior is written later";
  let description = [{
    After bufferization: a `linalg.fill` marked `kiln.fill_border =
    array<i64: offsets..., sizes...>` (by --kiln-cpu-tile-and-vectorize,
    which proved that the box at those offsets and sizes is overwritten
    before anything reads it) becomes one fill per border slab of its
    buffer: for each dimension in turn, the part before and after the box,
    within the box in the dimensions before it.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def PrefetchPanelsPass : Pass<"kiln-cpu-prefetch-panels", "func::FuncOp"> {
  let summary = "Fetch the weight panel the next parallel iteration reads while this one computes";
  let description = [{
    After bufferization: where each iteration of a 1-D `scf.forall` reads a
    panel `%global[f(%iv), ...]` of a constant global several times (inside
    static `scf.for` loops, one of which does not index it), the innermost
    of those loops prefetches lines of panel `f(%iv + step)`, spread evenly
    over all of the iterations, into L2. Panels above `max-panel-bytes`
    would push the current panel out of L2 and are left alone.
  }];
  let options = [
    Option<"maxPanelBytes", "max-panel-bytes", "int64_t", /*default=*/"1048576",
           "largest panel worth fetching ahead">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def ArenaAllocationPass : Pass<"kiln-arena-allocation", "ModuleOp"> {
  let summary = "Place every intermediate buffer at a static offset of one arena";
  let description = [{
    After bufferization, every `memref.alloc` of each function becomes a
    `memref.view` into a new trailing `memref<Nxi8>` argument, the arena.
    Offsets come from the memory planner on liveness intervals (steps are the
    function's top-level ops; views and loop-carried values extend a
    buffer's life), aligned to `alignment` bytes. Each function records
    `kiln.arena_bytes`, `kiln.arena_lower_bound` and `kiln.memory_plan`; the
    module records the largest arena. memref.copy ops become linalg.copy so
    that no runtime library call is left. Allocations inside loops are an
    error.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "byte alignment of every buffer">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def OutlineParallelLoopsPass : Pass<"kiln-cpu-outline-parallel-loops", "ModuleOp"> {
  let summary = "Move the body of each top-level scf.forall into a function the thread pool runs";
  let description = [{
    After bufferization and arena planning, each one-dimensional scf.forall
    at the top of a function (the loop over an op's tiles that
    kiln-cpu-tile-and-vectorize chose for threads) becomes a private function
    `@F_parN(%begin, %end, captured...)` that runs those iterations, called
    through a declared launcher `@__kiln_parallel_launch.F_parN(%count,
    captured...)` that kiln-cpu-lower-parallel-launches lowers. Constants and
    view-like ops are cloned into the body; scalars and static identity-layout
    memrefs are passed. Any other scf.forall becomes an scf.for.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect", "::mlir::LLVM::LLVMDialect"];
}

def LowerParallelLaunchesPass : Pass<"kiln-cpu-lower-parallel-launches", "ModuleOp"> {
  let summary = "Lower parallel-loop launchers to calls of the runtime's __kiln_parallel_for";
  let description = [{
    In the LLVM dialect: every call of `@__kiln_parallel_launch.F` stores its
    captured values into a stack context of 8-byte slots and calls
    `__kiln_parallel_for(@F.task, ctx, count)`; `@F.task(ctx, begin, end)` is
    a new trampoline that loads the values back and calls `@F`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif
