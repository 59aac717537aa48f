//===- Passes.td - CPU code generation passes -------------*- tablegen -*-===//
#ifndef KILN_CODEGEN_CPU_PASSES
#define KILN_CODEGEN_CPU_PASSES

include "mlir/Pass/PassBase.td"

def TileAndVectorizePass : Pass<"kiln-cpu-tile-and-vectorize", "func::FuncOp"> {
  let summary = "Tile linalg ops into register-sized static tiles and vectorize them";
  let description = [{
    Chooses tile sizes per op kind (TileStrategy.cpp): matmuls and contractions get an
    `mr x nr` register tile with a unit reduction step, NHWC convolutions and
    NCHW pooling are tiled so that they decompose into vectorizable 1-D
    windows, and everything else is tiled along its innermost parallel
    dimension. Every tile is static and vectorizes without masks: tile
    sizes divide the loop ranges, except AVX2's 6-row product tiles over an
    M with no divisor near 6 and the columns of an unpacked right-hand side
    that are no whole number of registers (1000 or 40 columns: two-register
    tiles, not 40-lane vectors LLVM would assemble from pieces), whose loop
    is split into its full tiles and one static last tile of the rest
    (PartialTiles.cpp). A loop of
    run-time extent (a symbolic dimension) is tiled as a long static loop
    would be, then split into its full tiles, whose size is constant, and
    the indices left, one at a time (in a product's register tile loop, as
    a 4-row tile when the rest holds 4, then one tile of exactly the rest
    mod 4; in an innermost loop of vector columns of an op of rank 2 or
    more that computes, first in whole registers): those tiles are static
    too. In ops big enough to share among threads, the outermost loop over
    tiles is an `scf.forall`
    (`kiln-outline-parallel-loops` turns it into a thread-pool call). An op
    of run-time extent is big enough when it is at the symbols' maxima; a
    `kiln.parallel_if` before its loop then tests its work at the run-time
    sizes against the same threshold, and the loop runs on the calling
    thread where the test fails.
    The tiles of static int8's depthwise product (`kiln.int8_depthwise`)
    get a vpdpbusd kernel instead of linalg's vectorizer. A tensor's
    minimum and maximum in one pass (DynamicQuantizeLinear's range, marked
    `kiln.min_max_partials`) is taken, when an `scf.forall` of static
    tiles makes the tensor, inside that loop from each tile as it is
    written (one more shared output of per-tile partials, then one short
    loop over them), instead of a pass over the tensor. Ops that do not
    vectorize stay as linalg ops and become scalar loops later. Products
    marked for the AMX kernels (`kiln.bf16_matmul`, `kiln.amx_int8_matmul`)
    and their `kiln.amx_epilogue` are left whole, as are fills marked
    `kiln.fill_border`. The rewrites that prepare ops for their kernels run
    before it, in the order of `buildCPUTilingPipeline`
    (lib/Pipeline/PassPipelines.cpp), which `kiln-cpu-tiling-pipeline`
    runs alone.

    Example: a 64 x 64 x 64 matmul with vector-width 16 becomes `scf.for`
    loops over 8 x 32 tiles of the output and a unit reduction step, each
    tile one `vector.contract` on `vector<8x1xf32>` and `vector<1x32xf32>`
    accumulating into `vector<8x32xf32>`.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes of one vector register (16 for AVX-512, 8 for AVX2)">,
    Option<"parallelWork", "parallel-work", "int64_t", /*default=*/"32768",
           "ops with at least this many loop iterations get their outermost "
           "tiled parallel loop as an scf.forall for the thread pool "
           "(0: none)">,
    Option<"l2Bytes", "l2-bytes", "int64_t", /*default=*/"1048576",
           "L2 cache bytes of one core of the target: a product whose "
           "weights do not fit takes its output channels outermost">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect",
    "::mlir::affine::AffineDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::kiln::KilnDialect"];
}

//===----------------------------------------------------------------------===//
// Rewrites that prepare linalg ops for the CPU kernels, run right before
// --kiln-cpu-tile-and-vectorize (buildCPUTilingPipeline).
//===----------------------------------------------------------------------===//

def DropAmxZeroFillsPass : Pass<"kiln-cpu-drop-amx-zero-fills", "func::FuncOp"> {
  let summary = "Start the products the AMX kernels take from their empty tensor";
  let description = [{
    The AMX kernels (--kiln-cpu-amx-matmul) start their accumulators from
    zero tiles: the zero fill of a product marked `kiln.bf16_matmul` or
    `kiln.amx_int8_matmul` would only be a memset nobody reads. The product
    reads the fill's empty tensor instead. Only for targets with AMX: no
    other lowering of such a product would then compute it correctly.

    ```mlir
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<128x4x16xf32>) -> ...
    %p = linalg.generic {...} ins(%a, %b : ...) outs(%z : ...) {kiln.bf16_matmul}
    // becomes
    %p = linalg.generic {...} ins(%a, %b : ...) outs(%e : ...) {kiln.bf16_matmul}
    ```
  }];
}

def ReadHalfWeightsPass : Pass<"kiln-cpu-read-half-weights", "func::FuncOp"> {
  let summary = "Matmuls and convolutions read fp16 constant weights and widen them in the kernel";
  let description = [{
    --precision=fp16 stores constant weights as fp16 and widens them with an
    elementwise op in front of each product, which would write an f32 copy
    of every weight to the arena on each run. A `linalg.matmul`,
    `linalg.conv_2d_nhwc_hwcf` or `linalg.depthwise_conv_2d_nhwc_hwc` whose
    weights are such a widened fp16 constant (through reshapes) reads the
    fp16 constant instead and widens each value in its body: the weights are
    read at half the bytes.

    ```mlir
    %w = linalg.generic {...} ins(%cst : tensor<64x32xf16>) ... { arith.extf }
    %y = linalg.matmul ins(%x, %w : tensor<8x64xf32>, tensor<64x32xf32>) ...
    // becomes
    %y = linalg.matmul ins(%x, %cst : tensor<8x64xf32>, tensor<64x32xf16>) ...
    ```
  }];
}

def SplitConvChannelsPass : Pass<"kiln-cpu-split-conv-channels", "func::FuncOp"> {
  let summary = "Split a convolution's output channels into whole registers and the rest";
  let description = [{
    A convolution whose output channels are not a multiple of the register
    (1000 classes: only of half a register) ran all of its tiles on half
    registers or on vectors LLVM assembles from pieces. It is split along
    its output channels into the largest multiple of the register (992) and
    the rest (8): two convolutions, each writing its part of one output.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes of one vector register (16 for AVX-512, 8 for AVX2)">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def ConvLanePartialsPass : Pass<"kiln-cpu-conv-lane-partials", "func::FuncOp"> {
  let summary = "Sum a convolution with few output channels in vector lanes of input channels";
  let description = [{
    A convolution's register tiles hold output channels in vector lanes; one
    with at most a quarter register of them (a 1-channel mask, an RGB image)
    ran as scalar FMAs. When its input channels are a multiple of the
    register, it becomes a linalg.generic marked `kiln.lane_partials` that
    keeps one partial sum per lane (lane l adds input channels cb * L + l)
    for each output pixel and channel, and a second generic that adds the
    lanes into the convolution's output, which keeps its initial value.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes of one vector register (16 for AVX-512, 8 for AVX2)">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def HoistInvariantSubsetsPass : Pass<"kiln-cpu-hoist-invariant-subsets", "func::FuncOp"> {
  let summary = "Move loop-invariant subset reads and writes out of loops";
  let description = [{
    MLIR's loop-invariant subset hoisting (a vector read of an iter_arg's
    tile before a reduction loop, its write after it), innermost loops
    first, except that a tile loop of run-time extent holding other loops
    (the loops over a symbolic dimension, docs/shapes.md), and any loop
    around one, is not tried. Its tiles' slices move with it; comparing
    them through its run-time bound costs seconds of Presburger arithmetic
    per encoder block (a batched product with a mask over two symbolic
    sizes: 6.6 s). For static shapes it is the upstream pass. Before it,
    each loop gives up its invariant element reads: a `tensor.extract`, or
    a `vector.transfer_read` whose lanes all take one element, at constant
    positions within the static shape of a tensor defined outside the loop
    (a run-time scale or zero point, read again by every iteration). The
    element is extracted before the loop and broadcast where the read was.
    Out of an `scf.forall` it reaches the outlined task as a scalar
    argument; left inside, it is a load from a buffer that the task's
    stores may alias, repeated for every vector.
  }];
}

def PackConstantRhsPass : Pass<"kiln-cpu-pack-constant-rhs", "func::FuncOp"> {
  let summary = "Lay out a matmul's constant right-hand side in panels of one register tile";
  let description = [{
    A matmul with a constant right-hand side B[K, N] (the weights of Gemm and
    MatMul) reads B by rows of N, one register tile at a time: for each k,
    the next few cache lines of the tile lie N elements further on, which
    hardware prefetchers do not follow. B is packed at compile time into
    panels P[N / nt][K][nt] of one register tile's columns (nt from
    TileStrategy's panelWidth), so that every tile reads one contiguous
    stream. The matmul becomes a generic over (m, panel, column, k) marked
    `kiln.packed_rhs`, writing the output as [M][N / nt][nt], a view of the
    same buffer.

    ```mlir
    %y = linalg.matmul ins(%x, %w : tensor<1x784xf32>, tensor<784x1024xf32>) ...
    // becomes
    %p = arith.constant dense<...> : tensor<16x784x64xf32>
    %g = linalg.generic {...} ins(%x, %p) outs(%e : tensor<1x16x64xf32>) {kiln.packed_rhs}
    %y = tensor.collapse_shape %g [[0], [1, 2]] : ... into tensor<1x1024xf32>
    ```
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes of one vector register (16 for AVX-512, 8 for AVX2)">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def MarkBorderFillsPass : Pass<"kiln-cpu-mark-border-fills", "func::FuncOp"> {
  let summary = "Mark the fills of padded tensors whose interior is overwritten";
  let description = [{
    A padded tensor is a fill of the whole tensor, then its interior
    overwritten (insert_slice, or a producer writing into an interior slice
    after --kiln-write-into-destinations). Only the border needs the fill:
    for a 3x3 depthwise convolution at 112x112 it is 3.5% of the tensor. Such
    a fill is marked `kiln.fill_border = array<i64: offsets..., sizes...>`
    with its interior box and left whole by tiling; after bufferization
    --kiln-cpu-fill-borders fills the border alone.
  }];
}

def MarkAmxEpiloguesPass : Pass<"kiln-cpu-mark-amx-epilogues", "func::FuncOp"> {
  let summary = "Mark the elementwise epilogues the AMX kernels apply to their tiles";
  let description = [{
    The elementwise generic that reads an AMX product's accumulators
    [M, P, 16] (through reshapes only, its sole reader) in the form
    --kiln-cpu-amx-matmul applies to each block of them (every loop
    parallel, identity maps for the accumulators and the result, a body of
    one-instruction arith and math ops) is marked `kiln.amx_epilogue` and
    left whole by tiling; the product (with its reshapes) moves right before
    it, so that after bufferization nothing runs between the two. bf16
    products only with at least `min-bytes` of accumulators (smaller ones
    stay in L2, and the epilogue as a pass of its own is as fast); int8
    products at any size. Only for targets with AMX.
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"1048576",
           "a bf16 product whose accumulators take at least this many bytes "
           "applies its epilogue per block; int8 products always do">,
  ];
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
    With `avx2=true` (targets with AVX2 and no avx512vnni) the int8
    products get the same kernel on 256-bit registers: each 16 bytes of
    weights (4 columns x 4 k) are sign-extended to 16 bits, the row's 4 bytes
    zero-extended and broadcast, and `llvm.x86.avx2.pmadd.wd` adds pairs of
    products exactly into 32-bit lanes (two per column, summed after the k
    loop). Same data layout, same epilogues and consumers.
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
    Option<"avx2", "avx2", "bool", /*default=*/"false",
           "build the int8 kernel for AVX2 (vpmaddwd on bytes widened to "
           "16 bits) instead of vpdpbusd">,
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
    by --kiln-cpu-mark-amx-epilogues) applies that generic to each
    block of accumulators from a per-thread stack scratch, 16 channels at a
    time, and its own result buffer is no longer used. Runs after
    bufferization (tiles address memory), before the arena is planned, and
    only for targets with amx-bf16 (amx-int8 for the int8 products). A
    marked generic it cannot match is an error:
    after --kiln-cpu-drop-amx-zero-fills its zero fill is gone, so no
    other lowering would compute it correctly.
  }];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::amx::AMXDialect",
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::vector::VectorDialect", "::mlir::math::MathDialect"];
}

def CheapFloatOpsPass : Pass<"kiln-cpu-cheap-float-ops", "func::FuncOp"> {
  let summary = "Float operations in the forms x86 runs in one instruction";
  let description = [{
    Five rewrites, run late (after the AMX kernels have built their
    epilogues, before the conversion to LLVM):
    - `arith.divf(x, d)` by a constant f32 `d` (a scalar, splat or
      broadcast scalar): a multiply by 1/d when `d` is a power of two;
      otherwise, when the quotient is only rounded (`math.roundeven`) and
      then clamped from both sides against finite constants, with at most a
      constant added between (a quantization's `x / scale`),
      `fma(x, hi, x * lo)`, hi near 1/d and lo the rest, if that rounds
      exactly as the division for every x (checked at compile time over
      all 2^23 significands of x in [1, 2): a power of two scales every x
      alike; lo takes hi's sign so that infinities stay infinities). A
      divisor some x would round differently keeps its division (about 7%
      of scales). A `vdivps` costs more than a whole int8 product of small
      K that it requantizes.
    - The same division where no such pair exists (with |d| in
      [2^-60, 2^60]), and any division of a vector by a run-time scalar
      broadcast to it (a quantization's scale, a softmax's sum): `q0 = x *
      r` with r = 1/d, then two corrections `q = q + fma(-q, d, x) * r`,
      which give the division's float32 bit for bit while quotient and
      remainders stay normal (Markstein's theorem). A run-time divisor
      outside [2^-20, 2^20], or a vector with an x neither 0 nor within
      [2^-100, 2^100], divides (a branch); a zero x takes q0, the zero of
      the quotient's sign. Where the quotient is only rounded and
      saturated (a quantization; the zero point added between may then be
      a run-time scalar), a divisor in [2^-60, 2^60] needs no test of x, as
      a constant one: q0 where a correction is NaN (an infinite x, an
      overflow: an infinity, saturated as the division's quotient is) or x
      is zero. A run-time divisor outside that range, or a run-time f32
      zero point that is not finite, divides (one scalar branch).
    - A quantization's end, `fptosi`/`fptoui(clamp(roundeven(q) + zp, lo,
      hi))` (the clamp by `maximumf` and `minimumf`) to 8 or 16 bits with
      lo and hi integral constants within the integer's range, optionally
      followed by an xor with the sign bit: `trunci(bitcast(clamp(q, lo -
      zp, hi - zp) + 1.5 * 2^23) + zp [+ 2^(N-1)])`. In [2^23, 2^24) floats
      are the integers, so the add rounds to nearest even (1.5 * 2^23 is
      even) and the low bits of the significand are the rounded q: two
      clamps, an add and a truncation instead of a vrndscaleps (two uops),
      an add, two clamps and a conversion. A constant even zp joins the
      float add; an odd one, or a run-time one (a scalar broadcast: an
      integer of at most 16 bits converted to f32, or an f32 checked to be
      an integer of at most 2^21 by one scalar branch), is an integer add.
    - `arith.maximumf` / `arith.minimumf` get the `nsz` flag: NaN still
      propagates, but the sign of a zero result is not kept. Against a
      constant that is not NaN (ReLU, Clip and ReLU6, the clamps of a
      quantization) each becomes one `vmaxps` / `vminps` instead of three
      instructions (the compare and masked move that order -0 below +0);
      between two values (max pooling, Max, ReduceMax) three instead of six.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def FillBordersPass : Pass<"kiln-cpu-fill-borders", "func::FuncOp"> {
  let summary = "Fill only the border of a padded buffer whose interior is written later";
  let description = [{
    After bufferization: a `linalg.fill` marked `kiln.fill_border =
    array<i64: offsets..., sizes...>` (by --kiln-cpu-mark-border-fills,
    which proved that the box at those offsets and sizes is overwritten
    before anything reads it) becomes one fill per border slab of its
    buffer: for each dimension in turn, the part before and after the box,
    within the box in the dimensions before it.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def RestrideGathersPass : Pass<"kiln-cpu-restride-gathers", "func::FuncOp"> {
  let summary = "Make vector.gather offsets follow the strides of a non-contiguous memref";
  let description = [{
    After bufferization: linalg's vectorizer turns an N-d `tensor.extract`
    into a `vector.gather` whose offsets are linear in the tensor's shape,
    which is right only where the buffer is contiguous. A tensor that
    bufferizes into a strided or partial view (a Slice with a step, a box
    of a larger buffer) would be read at the wrong places (the LLVM 22
    lowering adds the offsets to the innermost dimension): `x[::2]` then an
    edge Pad gave wrong numbers, and a 1-D strided source failed to lower.
    Every gather from a memref that is not contiguous row-major gets its
    offsets split by the shape and multiplied by the memref's strides, and
    reads a 1-D view of the same memory. Gathers from contiguous buffers,
    boxes of whole rows included, are left as they are.

    ```mlir
    %v = memref.subview %x[0, 0] [6, 5] [2, 1]
       : memref<11x5xf32> to memref<6x5xf32, strided<[10, 1]>>
    %g = vector.gather %v[%c0, %c0] [%i], %m, %p : ...
    // becomes, after canonicalization,
    %pos = arith.addi (arith.remui %i, 5), (arith.muli (arith.divui %i, 5), 10)
    %flat = memref.reinterpret_cast %x to offset: [0], sizes: [55], strides: [1]
    %g = vector.gather %flat[%c0] [%pos], %m, %p : memref<?xf32, ...>, ...
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
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

def PointerArgumentsPass : Pass<"kiln-cpu-pointer-arguments", "func::FuncOp"> {
  let summary = "Functions of hundreds of buffer arguments take them as pointers";
  let description = [{
    Run after the memref lowering, before convert-func-to-llvm: each statically
    shaped memref argument of a function with at least `min-arguments` of
    them becomes an `!llvm.ptr` (what the bare-pointer calling convention
    passes) with its descriptor built at the top of the body. The result is
    the code convert-func-to-llvm writes, but in one pass over the arguments:
    the conversion's own handling costs a walk of the block per argument, 3.7 s
    of a 9 s compile for a Sum of 5,000 graph inputs and quadratic beyond.
  }];
  let options = [
    Option<"minArguments", "min-arguments", "unsigned", "256",
           "rewrite functions with at least this many memref arguments">];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif
