//===- Passes.td - target-neutral code generation passes --*- tablegen -*-===//
//
// Passes on linalg, tensors, vectors and buffers that every target runs: the
// fusion and requantization rewrites of the linalg phase, the vector
// lowerings, bufferization's helpers and the one arena. Target passes live in
// Codegen/CPU and Codegen/GPU.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_COMMON_PASSES
#define KILN_CODEGEN_COMMON_PASSES

include "mlir/Pass/PassBase.td"

def VerifyCodegenInputPass : Pass<"kiln-verify-codegen-input", "ModuleOp"> {
  let summary = "Check what code generation assumes of the linalg it is given";
  let description = [{
    The contract between the lowering to linalg and code generation, checked
    where one phase ends and the next begins; every code generation pass may
    rely on it instead of re-checking:
    - every op is linalg on tensors or an op of the dialects around it
      (builtin, func, arith, math, tensor, scf, affine, index, complex, ub,
      bufferization): no graph or import op is left;
    - every argument and result of a public function is a tensor of static
      shape, so that the arena can be planned;
    - every `kiln.*` marker is on the op it describes
      (kiln/Dialect/Kiln/IR/Contract.h): `kiln.int8_matmul` on a
      `linalg.generic` computing i8 x i8 -> i32 into a static tensor of rank
      3 (or 4, with a batch first), `kiln.bf16_matmul` bf16 x bf16 -> f32
      likewise, `kiln.int8_depthwise` i8 x i8 -> i32 into rank 4, `kiln.int8_epilogue` on a
      `linalg.generic`, `kiln.requant` on a `math.roundeven`,
      `kiln.unread_padding` on a `linalg.fill`.
    The Kiln dialect's attribute verifier has already checked that every
    `kiln.*` attribute is one the contract declares, with a value of the
    right kind. A violation is an internal error: it names the op.

    ```mlir
    // error: 'linalg.matmul' op is marked kiln.int8_matmul but is not a linalg.generic
    %0 = linalg.matmul {kiln.int8_matmul} ins(...) outs(...)
    ```
  }];
}

def FuseElementwisePass : Pass<"kiln-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuse chains of elementwise linalg ops into one loop nest";
  let description = [{
    linalg's elementwise fusion, restricted: a producer is fused only into a
    consumer without reduction loops (fusing into a matmul or a reduction
    would recompute the producer once per reduction step), only when the
    consumer is its one user, and only while the fused body holds at most 128
    operations (a longer chain becomes several loop nests, which keeps LLVM's
    code generation time linear in the number of nodes).
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

def LowerVectorOpsPass : Pass<"kiln-lower-vector-ops", "func::FuncOp"> {
  let summary = "Lower contractions to outer products and math to polynomials";
  let description = [{
    Contractions become outer products (FMAs on whole registers), transfer
    permutations become transposes, multi-reductions become inner reductions,
    and exp/tanh/erf/log become vectorizable polynomial approximations.
    Vector reads used only element by element (a convolution's input pixels,
    broadcast into FMAs) become scalar loads: broadcasts from memory.
    The f32-to-i32 conversions the approximations create carry no poison:
    LLVM defines `fptosi` of a NaN as poison, and exp's conversion of its
    exponent k is NaN for a NaN input; where LLVM sees the NaN coming (a
    softmax of rows masked whole by constants) it dropped the stores that
    depend on it. exp's 2^k, `(fptosi(k) + 127) << 23`, becomes
    `bitcast(k + 2^23 + 127) << 23`, the same bits for its integral k in
    [-127, 127]; any other new conversion reads 0 for a NaN.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

def SplitEmptyTensorsPass : Pass<"kiln-split-empty-tensors", "func::FuncOp"> {
  let summary = "Give every use of a tensor.empty its own tensor.empty";
  let description = [{
    CSE merges identical `tensor.empty` ops; bufferization then gives the
    ops that fill them one buffer whose life spans all of them. Run right
    before bufferization, this pass undoes the merge so that every buffer
    lives only as long as its own value and the arena planner can reuse it.
    The uses inside the branches of one `scf.if` share one empty made
    before the if, so that both branches write the buffer the if returns
    (an empty in each branch would be a buffer yielded out of a region,
    which the arena cannot hold).
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def MarkInputsReadOnlyPass : Pass<"kiln-mark-inputs-read-only", "func::FuncOp"> {
  let summary = "Mark every function argument not writable for bufferization";
  let description = [{
    A public function's arguments are the graph's inputs, which belong to
    the caller (kiln_run takes them const). Sets `bufferization.writable =
    false` on every argument, so that one-shot bufferization copies an
    argument, or a view of one, before any op writes into it rather than
    writing the caller's buffer. The code generator avoids such writes
    (an elementwise op never reuses an argument or a reshaped or sliced view
    of one as its destination); this makes any it misses cost a copy
    instead of corrupting the caller's input.

    A public function of at least `min-memref-arguments` tensor arguments
    instead takes them as identity-layout memrefs, each read through a
    `bufferization.to_tensor restrict` (not writable either): one-shot
    bufferization removes its argument attributes one by one, rebuilding the
    array of all of them each time, which made a graph of 50,000 inputs
    spend 62 s there.
  }];
  let options = [
    Option<"minMemrefArguments", "min-memref-arguments", "unsigned", "256",
           "take the arguments as memrefs from this many tensor arguments">];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def EliminateEmptyTensorsPass
    : Pass<"kiln-eliminate-empty-tensors", "ModuleOp"> {
  let summary = "Empty-tensor elimination, unless sizes make it exponential";
  let description = [{
    Runs upstream `eliminate-empty-tensors` (slices computed into the
    tensors they are inserted into), except in a module with symbolic
    dimensions where some run-time size (an affine.apply, min or max) holds
    more than `max-divisions` floor divisions, ceiling divisions or
    modulos. One-shot analysis compares slices' subsets with ValueBounds,
    whose Presburger systems grow exponentially in them: Swin's window
    sizes (each stage padded to a multiple of 7 after patch mergings) hold
    9, and the upstream pass took 200 s there. The slices stay copies, and
    a remark says why. Static modules always take the upstream pass.
  }];
  let options = [
    Option<"maxDivisions", "max-divisions", "int64_t", /*default=*/"6",
           "The most divisions a run-time size may hold">,
  ];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DropInPlaceMaterializePass
    : Pass<"kiln-drop-in-place-materialize", "func::FuncOp"> {
  let summary = "Drop the copies of loop-carried values already computed in place";
  let description = [{
    A graph loop (kiln.loop lowered, `kiln.graph_loop`) copies each
    iteration's loop-carried value into its iter_arg with
    `bufferization.materialize_in_destination`, so that empty-tensor
    elimination makes the producer write there. Once it has, the value is
    the iter_arg updated in place (through destination-style ops,
    insert_slice, transfer_write and loops tied to it), and the copy, which
    one-shot bufferization must place in the iter_arg too, only makes its
    analysis see a conflict it cannot resolve. Run after empty-tensor
    elimination, this pass yields such a value directly.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def DistinctResultsPass : Pass<"kiln-distinct-results", "func::FuncOp"> {
  let summary = "Give every result of a function its own tensor";
  let description = [{
    Two graph outputs may compute the same value (CSE merges identical
    nodes; Unique of one element returns [0] as both indices and inverse
    indices), and a function then returns one tensor twice. Each result is a
    caller-owned output buffer, and bufferization's out-parameter promotion
    assumes distinct results (it crashed). Run right before bufferization,
    this pass returns a copy for every repeat.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def ExpandShapesByStridesPass
    : Pass<"kiln-expand-shapes-by-strides", "func::FuncOp"> {
  let summary = "Rewrite the memref views expand-strided-metadata crashes on";
  let description = [{
    MLIR's `expand-strided-metadata` crashes on two kinds of view. Run right
    before it, this pass rewrites both.

    A `memref.expand_shape` that splits one dimension into several of
    run-time size (`memref<?x64xf32>` into `memref<?x?x64xf32>`, as a
    batched matmul over a symbolic batch and sequence writes its result)
    becomes `memref.extract_strided_metadata` of its source and a
    `memref.reinterpret_cast` whose strides it computes: within a group the
    innermost dimension keeps the source dimension's stride and each outer
    one is the next inner stride times the next inner size.

    A `memref.subview` that drops unit dimensions and steps through some
    dimension (a stride other than 1) becomes a subview that keeps every
    dimension and a rank-reducing subview of it with unit strides. MLIR
    finds the dropped dimensions by matching the source type's strides
    against the result's, and a stepped dimension's result stride (source
    stride times step) may equal another's source stride: `x[:, ::2]` of a
    `[2, 2, 128, 16]` tensor read one row at a time by a pooling.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def BindSymbolicShapesPass : Pass<"kiln-bind-symbolic-shapes", "ModuleOp"> {
  let summary = "Give an entry function with symbolic dimensions its run-time sizes";
  let description = [{
    After bufferization, an entry function marked `kiln.symbol_bounds`
    (inputs marked `kiln.symbols` per axis) takes its symbolic sizes from a
    new trailing argument, `dims` (`memref<Nxi64>`): entry s holds symbol s,
    bounded by `affine.min` to its maximum so that every buffer size has an
    upper bound. Each dynamically shaped input becomes a byte buffer viewed
    at those sizes; each result becomes an output argument (a byte buffer
    for a dynamic one) that the function writes, and the function stores
    every output's shape into `dims` after the symbols. The function records
    `kiln.output_symbols` and `kiln.output_bounds` for the model descriptor.
    Functions without `kiln.symbol_bounds` are left alone.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect"];
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
    module records the largest arena. A buffer of dynamic shape (a symbolic
    dimension) gets the space of its largest shape, traced back to the
    symbols' ranges (--kiln-bind-symbolic-shapes); one without an upper
    bound is an error.
    memref.copy ops become linalg.copy so that no runtime library call is
    left. Allocations inside loops are an error. A failing run-time guard
    (kiln.guard) stores its number into the status word at the start of the
    arena and, when its check sits at the top of a function without
    results, returns at once: the ops after it would compute on sizes it
    found inconsistent (a Concat of 20 rows into 16). With
    `return-at-failed-guard=false` (the GPU target, whose shapes are static
    and whose host cannot branch on a flag in device memory) the check stays
    an `scf.if` that only stores the status, which the runtime reports after
    the run.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "byte alignment of every buffer">,
    Option<"returnAtFailedGuard", "return-at-failed-guard", "bool",
           /*default=*/"true",
           "end the function at a failed top-level guard">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def OutlineParallelLoopsPass : Pass<"kiln-outline-parallel-loops", "ModuleOp"> {
  let summary = "Move the body of each top-level scf.forall into a function the thread pool runs";
  let description = [{
    After bufferization and arena planning, each one-dimensional scf.forall
    at the top of a function (the loop over an op's tiles that
    kiln-cpu-tile-and-vectorize chose for threads) becomes a private function
    `@F_parN(%begin, %end, captured...)` that runs those iterations, called
    through a declared launcher `@__kiln_parallel_launch.F_parN(%count,
    captured...)` that kiln-cpu-lower-parallel-launches lowers. Constants and
    view-like ops are cloned into the body; scalars and static identity-layout
    memrefs are passed. Any other scf.forall becomes an scf.for. A loop
    marked `kiln.parallel_if` (an op of run-time extent) launches only where
    the `kiln.parallel_if` before it holds; where it does not, the caller
    calls `@F_parN(0, %count, captured...)` itself. Those ops are erased.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect", "::mlir::LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// Rewrites that let ops write where their results go, so that bufferization
// makes no copies. The CPU pipeline runs them before tiling.
//===----------------------------------------------------------------------===//

def SplitSharedFillsPass : Pass<"kiln-split-shared-fills", "func::FuncOp"> {
  let summary = "Give each reduction that starts from a shared fill its own fill";
  let description = [{
    CSE shares one zero-filled tensor between every matmul that starts from
    zero; each user gets its own clone of the fill (and of its empty
    tensor), so that the fill can be fused into the user's tiles and its
    buffer need not live long. A fill whose tensor is sliced or inserted
    into (a padded tensor) stays one tensor.

    ```mlir
    %z = linalg.fill ins(%c0) outs(%e)
    %a = linalg.matmul ins(...) outs(%z)
    %b = linalg.matmul ins(...) outs(%z)
    // becomes
    %z = linalg.fill ins(%c0) outs(%e)
    %a = linalg.matmul ins(...) outs(%z)
    %e2 = tensor.empty() ...
    %z2 = linalg.fill ins(%c0) outs(%e2)
    %b = linalg.matmul ins(...) outs(%z2)
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def SplitSharedDestinationsPass : Pass<"kiln-split-shared-destinations", "func::FuncOp"> {
  let summary = "Give each insert into a shared fill or empty tensor a tensor of its own";
  let description = [{
    CSE merges identical fills of one shape, and identical empty tensors
    with the slices taken from them: the zero-padded rows of two int8 1x1
    convolutions with the same K, the padded inputs or unfolded windows of
    two 3x3 ones, the results of two concatenations of one shape that their
    producers write in place. Every insert into the shared tensor but the
    first would then bufferize as a copy of the whole tensor. Each further
    insert gets a tensor of its own (a clone of the fill and its empty
    tensor, or of the empty tensor, the latter marked `kiln.distinct_empty`
    so that CSE keeps it apart), created right before the op that writes its
    source, with the slices and reshapes that op writes through rebuilt on
    it.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def WriteIntoDestinationsPass : Pass<"kiln-write-into-destinations", "func::FuncOp"> {
  let summary = "Producers write straight into the slice their result is copied or inserted into";
  let description = [{
    A padded tensor is built as fill(padded) + copy(x into its interior
    slice); when x comes from an op that only the copy reads and that never
    reads its own empty init (an elementwise epilogue, a transpose, an int8
    kernel with its requantization), that op writes into the interior slice
    of a fresh clone of the fill instead, and the copy disappears. The slice
    may be seen through a reshape (static int8's K-padded rows). The same
    for an op whose result is inserted directly into a slice of a
    constant-filled tensor (static int8's unfolded windows). The fill may
    also be of a run-time value known before the producer (dynamic int8's
    zero point, which pads the next convolution's input); the pure ops that
    compute it move above the producer with it.

    ```mlir
    %p = linalg.fill ins(%c0) outs(%e : tensor<1x114x114x32xf32>)
    %s = tensor.extract_slice %p[0, 1, 1, 0] [1, 112, 112, 32] [1, 1, 1, 1]
    %x = linalg.generic {...} outs(%e2 : tensor<1x112x112x32xf32>)   // ReLU
    %c = linalg.copy ins(%x) outs(%s)
    %i = tensor.insert_slice %c into %p[0, 1, 1, 0] ...
    // becomes
    %p = linalg.fill ins(%c0) outs(%e)
    %s = tensor.extract_slice %p[0, 1, 1, 0] ...
    %x = linalg.generic {...} outs(%s)
    %i = tensor.insert_slice %x into %p[0, 1, 1, 0] ...
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def WriteConcatInPlacePass : Pass<"kiln-write-concat-in-place", "func::FuncOp"> {
  let summary = "The parts of a concatenation write straight into their slices";
  let description = [{
    A concatenation is lowered as a chain over one empty tensor E:
    D0 = E; Di = insert_slice(copy(xi into extract_slice(Di-1)), Di-1).
    When every xi comes from an elementwise generic that only the copy reads
    (int8's dequantizing epilogues) or from an int8 kernel with its
    requantization (a loop marked `kiln.overwritten_outs`), each writes
    straight into its slice instead and the copies, a pass over the whole
    result, disappear: a fresh E goes above the first producer, each slice
    right before its producer and each insert right after it. The producers
    must run in the order of the concatenation.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

#endif
