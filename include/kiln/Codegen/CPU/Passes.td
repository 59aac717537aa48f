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

def TileAndVectorizePass : Pass<"kiln-cpu-tile-and-vectorize", "func::FuncOp"> {
  let summary = "Tile linalg ops into register-sized static tiles and vectorize them";
  let description = [{
    Chooses tile sizes per op kind: matmuls and contractions get an
    `mr x nr` register tile with a unit reduction step, NHWC convolutions and
    NCHW pooling are tiled so that they decompose into vectorizable 1-D
    windows, and everything else is tiled along its innermost parallel
    dimension. Tile sizes always divide the loop ranges, so every tile is
    static and vectorizes without masks. Ops that do not vectorize stay as
    linalg ops and become scalar loops later.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes of one vector register (16 for AVX-512, 8 for AVX2)">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect",
    "::mlir::affine::AffineDialect"];
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

#endif
