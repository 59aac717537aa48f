//===- Passes.td - graph passes of the Kiln dialect -------*- tablegen -*-===//
#ifndef KILN_DIALECT_KILN_TRANSFORMS_PASSES
#define KILN_DIALECT_KILN_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def ShapeInferencePass : Pass<"kiln-shape-inference", "func::FuncOp"> {
  let summary = "Refine result types of kiln ops to the shapes their operands imply";
  let description = [{
    Walks the function in order and replaces every result type that is less
    static than what InferTypeOpInterface infers, then updates the function's
    result types to match its return.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def VerifyBatchIndependencePass
    : Pass<"kiln-verify-batch-independence", "func::FuncOp"> {
  let summary = "Prove that a symbolic leading dimension is an independent batch";
  let description = [{
    Run on a graph whose symbolic leading dimension was given the probe size
    `batch` (a prime no other size of the model equals). A tensor with that
    size at exactly one axis carries the batch there. Every op must keep the
    samples apart along it: elementwise ops, transposes, reshapes that do not
    merge the batch into another dimension, concatenation, padding, slicing
    and gathering along other axes, matrix products with the batch in M, N or
    a batch dimension, convolution, pooling and batch normalization with the
    batch in N, softmax, layer normalization and reductions over other axes.
    A batched tensor made from batch-free data must be a splat or a
    broadcast, no constant may hold the probe size as data, and every output
    must lead with the batch. Each op that breaks this is reported, naming
    why; a model that passes computes each sample from its own inputs, so
    Kiln runs any batch in range as compiled batches over consecutive slices.
  }];
  let options = [
    Option<"batch", "batch", "int64_t", /*default=*/"211",
           "The probe batch size the graph was built for">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def QuantizeDynamicPass : Pass<"kiln-quantize-dynamic", "ModuleOp"> {
  let summary = "Dynamic int8: MatMul/Gemm with constant weights become kiln.dynamic_quant_matmul";
  let description = [{
    Each `kiln.matmul` or `kiln.gemm` whose weights (B) are a constant f32
    matrix `[K, N]` with N a multiple of 16 gets its weights quantized here,
    per output column, to symmetric int8 (packed for 4-byte dot products,
    see kiln.dynamic_quant_matmul) and its activations quantized at run
    time. A constant per-column bias (Gemm's C, or a `kiln.add` of a constant
    `[N]` that is the matmul's only user) moves into the op; Gemm's alpha
    and beta fold into the weight scales and the bias. Matmuls that do not
    qualify stay in f32, and one remark per function says how many were
    quantized and why the others were not.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def ObserveQuantInputsPass : Pass<"kiln-observe-quant-inputs", "ModuleOp"> {
  let summary = "Calibration: return the input of every node static int8 would convert";
  let description = [{
    The first half of --quantize=static. Every MatMul/Gemm with constant
    weights and every NHWC group-1 or depthwise convolution with a constant
    filter (the nodes --kiln-quantize-static converts, in the same order)
    gets its f32 input appended to the function's results, named `kiln.observe:<i>` for
    the i-th such node (one result per distinct tensor: `kiln.observe:3,4`
    when nodes 3 and 4 read the same one). The compiler builds this model, runs it on the
    calibration inputs and records the range of each observed tensor.
    With `all`, the first input of every f32 MatMul/Gemm/Conv is observed
    instead (the accuracy budget of --precision=bf16|fp16 and
    --quantize=dynamic ranks those nodes by what rounding does to it).
  }];
  let options = [
    Option<"all", "all", "bool", /*default=*/"false",
           "Observe the input of every f32 MatMul/Gemm/Conv">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def QuantizeStaticPass : Pass<"kiln-quantize-static", "ModuleOp"> {
  let summary = "Static int8: calibrated MatMul/Gemm and Conv become kiln.static_quant_*";
  let description = [{
    Reads the module attribute `kiln.activation_ranges` (one `[lo, hi]`
    per node that --kiln-observe-quant-inputs observed, in its order) and
    replaces each of those nodes with kiln.static_quant_matmul or
    kiln.static_quant_conv2d: weights per output column to symmetric int8,
    packed for 16-column AMX tiles / VNNI panels; a depthwise convolution
    becomes kiln.static_quant_depthwise_conv2d, its f32 filter scaled by
    the input scale. The input goes to uint8 with
    the scale and zero point that map `[min(lo, 0), max(hi, 0)]` onto
    [0, 255]. Nodes named in `kiln.keep_fp32` stay f32; one remark per
    function says how many nodes were converted and why the rest were not.
    With `lane-k` (a target without AMX, where the VNNI kernel takes K in
    4-byte lanes) K is padded to a multiple of 4 only, not to whole 64-byte
    AMX tile rows. With `depthwise=false` (AVX2 targets without VNNI, which
    have no int8 depthwise kernel) depthwise convolutions stay f32, their
    ranges unused.
  }];
  let options = [
    Option<"laneK", "lane-k", "bool", /*default=*/"false",
           "pad K to a multiple of 4 only (the VNNI kernel), not to AMX tile "
           "rows">,
    Option<"depthwise", "depthwise", "bool", /*default=*/"true",
           "also quantize depthwise convolutions (for the VNNI depthwise "
           "kernel)">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def Bf16MatmulPass : Pass<"kiln-bf16-matmul", "ModuleOp"> {
  let summary = "bf16: MatMul/Gemm with constant weights become kiln.bf16_matmul";
  let description = [{
    The same matmuls as --kiln-quantize-dynamic qualify (constant f32
    weights `[K, N]`, N a multiple of 16, constant per-column bias folded
    in). Their weights are rounded to bf16 here (nearest even, Gemm's alpha
    applied first) and packed in panels of 16 columns for AMX tiles (see
    kiln.bf16_matmul); the activations are rounded at run time and the
    products accumulate in f32. NHWC group-1 convolutions with a constant
    filter become kiln.bf16_conv2d the same way, and MatMuls of two run-time
    tensors kiln.bf16_batch_matmul. A depthwise convolution keeps its f32
    filter and reads its input rounded to bf16 (a kiln.cast pair, the
    convolution marked `kiln.bf16_input`, which the lowering reads
    through): the tensor in front of it is stored in bf16. One remark per
    function says how many were converted and why the others stay f32.
  }];
  let options = [
    Option<"runTimeProducts", "run-time-products", "bool", /*default=*/"true",
           "also convert MatMuls of two run-time tensors (AMX only)">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def FuseLayerNormPass : Pass<"kiln-fuse-layer-norm", "func::FuncOp"> {
  let summary = "Rewrite layer normalization written out as nodes into kiln.layer_norm";
  let description = [{
    Exporters before opset 17, and Paddle2ONNX, write LayerNorm as
    ReduceMean, Sub, Pow (or Mul), ReduceMean, Add(epsilon), Sqrt (or Pow
    0.5), Div, and an optional Mul(gamma) and Add(beta). The chain becomes
    one `kiln.layer_norm` when it computes exactly that: both means over the
    same trailing axes with kept dimensions of a static f32 tensor, a scalar
    constant epsilon, the centred value read only by the square and the
    division, and gamma and beta shaped like the normalized dimensions.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def QuantizeConcatPartsPass : Pass<"kiln-quantize-concat-parts", "func::FuncOp"> {
  let summary = "Take DynamicQuantizeLinear's range and quantization of a concatenation part by part";
  let description = [{
    DynamicQuantizeLinear of a concatenation (a U-Net decoder's skip
    connection, SqueezeNet's fire modules) imports as `reduce_min` and
    `reduce_max` of the concatenation and a quantizing chain on it, so the
    f32 concatenation is written only to be read twice. A `reduce_min` or
    `reduce_max` over axes that include the concatenation's becomes the same
    reduction of each part combined by `kiln.min` / `kiln.max`; a quantizing
    chain (elementwise ops, each the only user of the one before, whose other
    operands have one element, ending in a cast to an integer of at most 8
    bits) read only from the concatenation runs on each part, and the 8-bit
    results are concatenated instead. The values are the same. Done only
    when some part would be copied into the concatenation (a part read
    elsewhere too, or a function argument); parts made for the
    concatenation alone are written in place already.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def IntegerProductsInF32Pass : Pass<"kiln-integer-products-in-f32", "func::FuncOp"> {
  let summary = "Run i32 convolutions and matmuls of 8-bit data on the f32 kernels";
  let description = [{
    ConvInteger, MatMulInteger, QLinearConv and QLinearMatMul import as
    `kiln.conv2d` / `kiln.matmul` on i32 (8-bit operands widened, zero points
    subtracted), which CPUs multiply slowly. Their operands are small
    integers, exact in f32, so the product runs in f32 instead (operands
    converted by `kiln.cast`): when every user converts the result to a
    float type (the dequantization after ConvInteger and MatMulInteger) the
    f32 result replaces it, equal to the integer one until a partial sum
    passes 2^24 and within f32 rounding beyond; otherwise only when no
    partial sum can reach 2^24 (the largest activation magnitude times the
    largest sum of |w| over one output of a constant filter, or the
    reduction length times both largest magnitudes), so that the result
    converted back to i32 is exact. Operand magnitudes are bounded through
    casts from integer types of 16 bits or fewer and constants; a product of
    anything else stays i32. With `keep-vnni-products` the products that
    `kiln-integer-products-on-vnni` takes are left to it.
  }];
  let options = [
    Option<"keepVnniProducts", "keep-vnni-products", "bool", "false",
           "Leave uint8 x constant int8 products (group-1 convolutions, "
           "matmuls) in i32 for kiln-integer-products-on-vnni">,
    Option<"keepDepthwise", "keep-depthwise", "bool", "true",
           "With keep-vnni-products, also leave the depthwise convolutions "
           "(false on AVX2 targets, whose int8 kernel has no depthwise form)">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def DequantizedProductsPass : Pass<"kiln-dequantized-products", "func::FuncOp"> {
  let summary = "Run the products of a QDQ model on integers";
  let description = [{
    A QDQ model (ONNX Runtime's static quantization) multiplies dequantized
    values: `conv2d((cast(q) - zp) * s, (cast(W) - wzp) * sw)` with `q` an
    8-bit activation and `W` a constant 8-bit weight. Such an f32
    `kiln.conv2d` (NCHW, group 1, or depthwise on a multiple of 4 channels),
    `kiln.matmul` ([..., M, K] x [K, N]) or `kiln.gemm` (2-D, weights [K, N]
    or with `trans_b` [N, K], transposed; alpha folded into the scales,
    beta * C added after) becomes the i32 product of
    `q - zp` (an int8 `q` moved to uint8 with its zero point) and the
    integers `W - wzp` (the int8 constant widened, or a constant computed
    here), converted to f32 and multiplied by `s * sw` per output channel
    (then the bias added), which `kiln-integer-products-on-vnni` runs on the
    int8 kernels when `W - wzp` fits int8 (uint8 weights with zero point 128
    do). Weight zero points may be per tensor or per channel (any integer
    constant that broadcasts to the weights: they are folded into the
    constant `W - wzp`); activation zero points and scales must be one per
    tensor and weight scales per tensor or per output channel; anything
    else stays as it is. Runs before
    canonicalization folds the weights' dequantization. The compile adds it
    for every target: without AVX512-VNNI (`any-group`, which also takes
    every grouped convolution), `kiln-integer-products-in-f32` runs the
    integer product on the f32 kernels with the weights a constant filter,
    packed at compile time, where the QDQ form dequantized the weights at
    every run.
  }];
  let options = [
    Option<"anyGroup", "any-group", "bool", "false",
           "Rewrite convolutions of any group, not only those the int8 "
           "kernels take (group 1, depthwise on a multiple of 4 channels)">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def FoldConstantWeightsPass : Pass<"kiln-fold-constant-weights", "func::FuncOp"> {
  let summary = "Compute at compile time weights a model computes from constants";
  let description = [{
    Weight-only quantized models (DequantizeLinear of int8 or int4 weights
    with per-row or blocked scales, f32 activations), QDQ weights the
    integer kernels do not take, and weights an exporter transposed or
    reshaped are computed at every run, and the f32 kernels then multiply
    a run-time filter they cannot pack ahead of time. Canonicalization
    folds such expressions only for small constants, not for the resources
    large weights import as. This pass evaluates the weights (and a conv or
    gemm bias) of each f32 `kiln.conv2d`, `kiln.matmul` and `kiln.gemm`
    when they are computed from constants only (casts to f32, reshapes,
    transposes, gathers with constant indices, broadcast add, sub, mul and
    div, each rounded to f32 in the model's order) and gives the product an
    f32 constant. A result larger than its largest constant (a broadcast of
    a scalar, say) is left alone, so that the .so does not grow.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def IntegerProductsOnVnniPass : Pass<"kiln-integer-products-on-vnni", "func::FuncOp"> {
  let summary = "Run imported uint8 x int8 products on the VNNI int8 kernels";
  let description = [{
    An i32 `kiln.conv2d` (NHWC, group 1 or depthwise) or `kiln.matmul`
    whose left operand is a uint8 tensor widened to i32, minus a one-element
    zero point in [0, 255] or not, and whose right operand is a constant of
    integers in [-128, 127] (ConvInteger and MatMulInteger after
    DynamicQuantizeLinear, the products inside QLinearConv and QLinearMatMul)
    becomes a `kiln.integer_conv2d` / `kiln.integer_matmul` (a depthwise
    convolution on a multiple of 4 channels: `kiln.integer_depthwise_conv2d`,
    its filter packed 4 kernel rows per lane for the depthwise kernel): the
    uint8 input as it is, the weights packed for `vpdpbusd`, the result
    exactly the same i32 (the
    zero point's share is subtracted through the weights' column sums, and
    padding reads the zero point). A reduction longer than 65,536 (where
    i32 could overflow) stays as it is. The compile adds this pass when the
    target CPU has AVX512-VNNI, and with `depthwise=false` when it has AVX2
    without VNNI (the int8 kernel's AVX2 form, which has no depthwise
    variant: kiln-integer-products-in-f32 takes those).
  }];
  let options = [
    Option<"depthwise", "depthwise", "bool", "true",
           "Also rewrite depthwise convolutions (for the depthwise kernel)">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def WidenHalfPass : Pass<"kiln-widen-half", "func::FuncOp"> {
  let summary = "Compute an imported fp16 or bf16 model in f32";
  let description = [{
    Models converted to fp16 (or bf16) by export tools compute every node in
    the half type, which CPUs run on slow paths. This pass gives every fp16
    and bf16 tensor of the function f32 instead: half constants are widened
    here (exactly: every half value is an f32 value), function arguments are
    widened by a `kiln.cast` at entry and half results narrowed by one before
    the return, so the signature is unchanged. A `kiln.cast` the model asks
    for to a half type still rounds: it becomes a cast to the half type and
    back to f32. What changes is that intermediate results are no longer
    rounded to the half type between nodes (and cannot overflow its range),
    as ONNX Runtime's CPU provider also computes such models. Functions with
    a `kiln.bitcast` from or to a half type are left as they are.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def Fp16ComputePass : Pass<"kiln-fp16-compute", "ModuleOp"> {
  let summary = "fp16: MatMul/Gemm/Conv read fp16 operands and accumulate in f32";
  let description = [{
    Every MatMul, Gemm and Conv with f32 operands computes on fp16 values:
    constant weights are rounded to fp16 here (nearest even) and stored as
    fp16, `kiln.cast %w16 to f32` in front of the node; run-time operands are
    rounded at run time (`kiln.cast` to f16 and back, one per value however
    many nodes read it). The products of two fp16 values are exact in f32,
    and they accumulate in f32: the arithmetic of fp16 tensor cores and of
    oneDNN's f16 convolutions on CPUs without native f16 dot products.
    Linalg lowering reads the fp16 weights inside the product's kernel.
    Weights of at most `half-storage` f32 bytes, and those of nodes with 64
    or more rows (output pixels) to share each converted weight vector, are
    stored as f32 constants holding the rounded values instead (same
    numbers, no conversion in the kernel). Converted nodes are marked
    `kiln.fp16`.
    Nodes named by --keep-fp32 stay f32; one remark per function says how
    many were converted and why the others were not.
  }];
  let options = [
    Option<"halfStorage", "half-storage", "int64_t", /*default=*/"262144",
           "Weights above this many f32 bytes are stored as fp16">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def LayoutPass : Pass<"kiln-layout", "func::FuncOp"> {
  let summary = "Run 2-D convolutions and pooling channels-last, with the transposes between them cancelled";
  let description = [{
    Rewrites every NCHW kiln.conv2d into its NHWC form (`layout = "NHWC"`,
    filter permuted to HWCF at compile time) between explicit kiln.transpose
    ops, makes pooling NHWC where its input arrives NHWC, then sinks
    transposes through layout-agnostic ops (elementwise with broadcasting,
    where constants and per-channel vectors are permuted instead, concat,
    pad, slice, nearest upsampling, gathers with 1-D indices such as the
    per-axis passes of a linear or cubic Resize, reductions, batch
    normalization) so that inverse pairs cancel. A transpose that only moves dimensions of size 1 becomes a
    reshape. Ops that care about layout and are not listed keep seeing NCHW
    values.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

#endif
