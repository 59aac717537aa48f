//===- KilnOps.td - Kiln graph ops ------------------------*- tablegen -*-===//
//
// Over 1,000 lines on purpose: this is the graph dialect's one op list, as
// MLIR dialects keep theirs (one `-gen-op-decls` / `-gen-op-defs` unit, one
// generated docs page); the ops' C++ is split by family under
// lib/Dialect/Kiln/IR/, and the op types stay findable by searching here.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_KILN_OPS
#define KILN_DIALECT_KILN_OPS

include "kiln/Dialect/Kiln/IR/KilnBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Results are inferred from operands and attributes; a result type may be less
// static than the inferred one until --kiln-shape-inference refines it.
def Kiln_Inferred : TraitList<[
  Pure, InferTypeOpAdaptorWithIsCompatible]>;

def Kiln_FloatTensor : RankedTensorOf<[AnyFloat]>;
// Floats, signless integers (signed; i1 is bool) and unsigned integers (ONNX's
// uint8..uint64, which keep their `ui` types up to KilnToLinalg): the element
// types of arithmetic, comparisons and kiln.cast.
def Kiln_NumericTensor
    : RankedTensorOf<[AnyFloat, AnySignlessInteger, AnyUnsignedInteger]>;
// Matrix products and convolutions: floats, or i32 accumulating in i32 (the
// integer ops of ONNX's quantization, after widening and zero points).
def Kiln_MatMulTensor : RankedTensorOf<[AnyFloat, I32]>;
def Kiln_IndexTensor : RankedTensorOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// Constants and data movement
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Kiln_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let description = [{
    ```mlir
    %c = kiln.constant dense<1.0> : tensor<4xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

def Kiln_IdentityOp : Kiln_Op<"identity", [Pure, SameOperandsAndResultType]> {
  let summary = "returns its operand";
  let description = [{
    ```mlir
    %y = kiln.identity %x : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Kiln_ReshapeOp : Kiln_Op<"reshape", [Pure]> {
  let summary = "reinterprets a tensor with another shape of the same size";
  let description = [{
    The target shape is the result type. ONNX Reshape, Flatten, Squeeze and
    Unsqueeze all become this op.

    ```mlir
    %y = kiln.reshape %x : tensor<1x64x1x1xf32> to tensor<1x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Kiln_TransposeOp : Kiln_Op<"transpose", [Kiln_Inferred]> {
  let summary = "permutes dimensions";
  let description = [{
    Result dimension `i` is input dimension `perm[i]`.

    ```mlir
    %y = kiln.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x4x5xf32> -> tensor<1x4x5x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kiln_ConcatOp : Kiln_Op<"concat", [Kiln_Inferred]> {
  let summary = "joins tensors along one axis";
  let description = [{
    ```mlir
    %y = kiln.concat %a, %b {axis = 1 : i64} : (tensor<1x2xf32>, tensor<1x3xf32>) -> tensor<1x5xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $result)";
  let hasFolder = 1;
}

def Kiln_PadOp : Kiln_Op<"pad", [Kiln_Inferred]> {
  let summary = "pads with a constant value";
  let description = [{
    `pads` holds the amount added before each dimension, then after each
    dimension (ONNX order); all are non-negative.

    ```mlir
    %y = kiln.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 0.0 : f32}
       : tensor<1x3x4x4xf32> -> tensor<1x3x6x6xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<F32Attr, "0.0">:$value);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Kiln_UpsampleNearestOp : Kiln_Op<"upsample_nearest", [Kiln_Inferred]> {
  let summary = "nearest-neighbour upsampling by whole factors";
  let description = [{
    Result element i is input element i floordiv scales (per dimension):
    each input element repeated `scales[d]` times along dimension d. ONNX
    Resize in nearest mode with whole scales whose coordinate mode maps
    output o to input o floordiv scale (asymmetric with floor, the
    half-pixel modes with rounding); the conversion uses it where sizes are
    symbolic (docs/shapes.md), the output size then the input's times the
    scale.

    ```mlir
    %y = kiln.upsample_nearest %x {scales = array<i64: 1, 1, 2, 2>}
       : tensor<1x3x?x?xf32> -> tensor<1x3x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$scales);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Kiln_GatherOp : Kiln_Op<"gather", [Kiln_Inferred]> {
  let summary = "picks slices along one axis by index (ONNX Gather)";
  let description = [{
    The result is `input.shape[:axis] + indices.shape + input.shape[axis+1:]`;
    each index selects one slice of `input` along `axis`. Negative indices
    count from the end, as in ONNX. Indices outside `[-n, n)` are an error in
    ONNX with undefined behavior at run time; here they are clamped to
    `[0, n - 1]` after wrapping, so that no index ever reads outside `input`.
    (OnnxToKiln reports out-of-range constant indices at compile time.)

    ```mlir
    %y = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<8000x256xf32>, tensor<1x128xi64>) -> tensor<1x128x256xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Kiln_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_SliceOp : Kiln_Op<"slice", [Kiln_Inferred]> {
  let summary = "a strided box of a tensor, static in every dimension";
  let description = [{
    Result dimension `d` has `sizes[d]` elements, taken from input positions
    `offsets[d] + i * strides[d]`. There is one entry per dimension; offsets
    and sizes are non-negative, strides positive, and every position read lies
    inside the input. ONNX Slice (after its clamping rules) and Split become
    this op.

    ```mlir
    %y = kiln.slice %x {offsets = array<i64: 0, 256>, sizes = array<i64: 128, 256>, strides = array<i64: 1, 1>}
       : tensor<128x768xf32> -> tensor<128x256xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$offsets,
                   DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Kiln_CastOp : Kiln_Op<"cast", [Kiln_Inferred]> {
  let summary = "converts every element to another element type (ONNX Cast)";
  let description = [{
    Between floating-point, signless and unsigned integer types; `i1` is
    ONNX's bool. Signless integers are signed except `i1`, which converts as
    0 or 1; `ui` types are unsigned. Floats convert to integers rounding
    toward zero (out-of-range values are undefined, as in ONNX before
    opset 19); anything converts to `i1` as "not zero".

    ONNX's narrow types convert the way ONNX's Cast tables say: to the
    float8 formats round to nearest even and saturate to the largest finite
    value (`no_saturate`: overflow becomes the format's infinity or NaN);
    to float4 (e2m1) round to nearest even and saturate; to f8E8M0 (a power
    of two) round as `round_mode` says (`up`, the default, `down` or
    `nearest`); to the 4-bit and 2-bit integers convert like any integer and
    keep the low bits.

    ```mlir
    %y = kiln.cast %x to f32 : tensor<1x128xi64> -> tensor<1x128xf32>
    %q = kiln.cast %x to f8E4M3FN {no_saturate} : tensor<8xf32> -> tensor<8xf8E4M3FN>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input,
                   TypeAttrOf<AnyTypeOf<[AnyFloat, AnySignlessInteger,
                                         AnyUnsignedInteger]>>:$to,
                   UnitAttr:$no_saturate,
                   OptionalAttr<StrAttr>:$round_mode);
  let results = (outs Kiln_NumericTensor:$result);
  let builders = [
    // The common cast: saturating, rounding up to f8E8M0.
    OpBuilder<(ins "Type":$result, "Value":$input, "TypeAttr":$to), [{
      build($_builder, $_state, result, input, to, UnitAttr(), StringAttr());
    }]>
  ];
  let assemblyFormat = "$input `to` $to attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Kiln_BitCastOp : Kiln_Op<"bitcast", [Kiln_Inferred]> {
  let summary = "reinterprets the bits of every element (ONNX BitCast)";
  let description = [{
    Between element types of the same width, where `i1` (ONNX's bool) counts
    as a byte holding 0 or 1: a bool becomes 0 or 1 and a byte becomes a bool
    "not zero". The shape is unchanged.

    ```mlir
    %y = kiln.bitcast %x to i32 : tensor<2x3xf32> -> tensor<2x3xi32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input,
                   TypeAttrOf<AnyTypeOf<[AnyFloat, AnySignlessInteger,
                                         AnyUnsignedInteger]>>:$to);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$input `to` $to attr-dict `:` type($input) `->` type($result)";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Kiln_UnaryOp<string mnemonic, string doc,
                   Type tensor = Kiln_FloatTensor>
    : Kiln_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = doc;
  let description = [{
    Elementwise on a floating-point tensor (neg, abs and sign also on signed
    integers, wrapping at the minimum value).
  }];
  let arguments = (ins tensor:$input);
  let results = (outs tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Kiln_ReluOp : Kiln_UnaryOp<"relu", "max(x, 0)">;
def Kiln_SigmoidOp : Kiln_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", "hyperbolic tangent">;
def Kiln_ExpOp : Kiln_UnaryOp<"exp", "exponential">;
def Kiln_LogOp : Kiln_UnaryOp<"log", "natural logarithm">;
def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", "square root">;
def Kiln_NegOp : Kiln_UnaryOp<"neg", "negation", Kiln_NumericTensor> {
  let hasFolder = 1;
}
def Kiln_AbsOp : Kiln_UnaryOp<"abs", "absolute value", Kiln_NumericTensor> {
  let hasFolder = 1;
}
def Kiln_ErfOp : Kiln_UnaryOp<"erf", "error function">;

// Reciprocal, Neg, Abs and the roundings fold on constants: exporters compute
// sizes in floating point (torchvision pads an image to ceil(h / 32) * 32 and
// resizes it by min(min_size / min(h, w), max_size / max(h, w))).
def Kiln_ReciprocalOp : Kiln_UnaryOp<"reciprocal", "1 / x"> {
  let hasFolder = 1;
}
def Kiln_FloorOp : Kiln_UnaryOp<"floor", "largest integer not above x"> {
  let hasFolder = 1;
}
def Kiln_CeilOp : Kiln_UnaryOp<"ceil", "smallest integer not below x"> {
  let hasFolder = 1;
}
def Kiln_RoundOp : Kiln_UnaryOp<"round", "nearest integer, halves to even"> {
  let hasFolder = 1;
}
def Kiln_SignOp : Kiln_UnaryOp<"sign", "-1, 0 or 1 by the sign of x (NaN stays NaN)",
                                Kiln_NumericTensor>;
def Kiln_SoftplusOp : Kiln_UnaryOp<"softplus", "log(1 + exp(x))">;
def Kiln_SoftsignOp : Kiln_UnaryOp<"softsign", "x / (1 + |x|)">;
def Kiln_HardSwishOp : Kiln_UnaryOp<"hard_swish", "x * max(0, min(1, x / 6 + 1 / 2))">;
def Kiln_MishOp : Kiln_UnaryOp<"mish", "x * tanh(softplus(x))">;
def Kiln_SinOp : Kiln_UnaryOp<"sin", "sine">;
def Kiln_CosOp : Kiln_UnaryOp<"cos", "cosine">;
def Kiln_TanOp : Kiln_UnaryOp<"tan", "tangent">;
def Kiln_AsinOp : Kiln_UnaryOp<"asin", "arcsine">;
def Kiln_AcosOp : Kiln_UnaryOp<"acos", "arccosine">;
def Kiln_AtanOp : Kiln_UnaryOp<"atan", "arctangent">;
def Kiln_SinhOp : Kiln_UnaryOp<"sinh", "hyperbolic sine">;
def Kiln_CoshOp : Kiln_UnaryOp<"cosh", "hyperbolic cosine">;
def Kiln_AsinhOp : Kiln_UnaryOp<"asinh", "inverse hyperbolic sine">;
def Kiln_AcoshOp : Kiln_UnaryOp<"acosh", "inverse hyperbolic cosine">;
def Kiln_AtanhOp : Kiln_UnaryOp<"atanh", "inverse hyperbolic tangent">;

// Activations with scalar parameters; `alpha` and `beta` mean what the ONNX
// op of the same name calls alpha and beta (Selu's gamma is `beta`).
class Kiln_ParamUnaryOp<string mnemonic, string doc>
    : Kiln_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = doc;
  let description = [{
    Elementwise on a floating-point tensor, with ONNX's scalar parameters.

    ```mlir
    %y = kiln.leaky_relu %x {alpha = 0.01 : f32, beta = 0.0 : f32} : tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, F32Attr:$alpha,
                   DefaultValuedAttr<F32Attr, "0.0">:$beta);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Kiln_LeakyReluOp : Kiln_ParamUnaryOp<"leaky_relu", "x < 0 ? alpha * x : x">;
def Kiln_EluOp : Kiln_ParamUnaryOp<"elu", "x < 0 ? alpha * (exp(x) - 1) : x">;
def Kiln_SeluOp : Kiln_ParamUnaryOp<"selu",
    "beta * (x <= 0 ? alpha * (exp(x) - 1) : x) (beta is ONNX's gamma)">;
def Kiln_HardSigmoidOp : Kiln_ParamUnaryOp<"hard_sigmoid",
    "max(0, min(1, alpha * x + beta))">;
def Kiln_CeluOp : Kiln_ParamUnaryOp<"celu",
    "max(0, x) + min(0, alpha * (exp(x / alpha) - 1))">;
def Kiln_ThresholdedReluOp : Kiln_ParamUnaryOp<"thresholded_relu",
    "x > alpha ? x : 0">;

def Kiln_BoolTensor : RankedTensorOf<[I1]>;
// Bools and integers of any signedness: the operands of the bit operations
// (and, or, xor, not, bitshift), which are logical on bools.
def Kiln_IntTensor : RankedTensorOf<[AnySignlessInteger, AnyUnsignedInteger]>;

def Kiln_NotOp : Kiln_Op<"not", [Pure, SameOperandsAndResultType]> {
  let summary = "bitwise negation (logical on a bool tensor)";
  let description = [{
    Flips every bit: ONNX Not on bools, BitwiseNot on integers.

    ```mlir
    %y = kiln.not %x : tensor<4xi1>
    ```
  }];
  let arguments = (ins Kiln_IntTensor:$input);
  let results = (outs Kiln_IntTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Kiln_ClipOp : Kiln_Op<"clip", [Pure, SameOperandsAndResultType]> {
  let summary = "clamps to [min, max]";
  let description = [{
    ```mlir
    %y = kiln.clip %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, F32Attr:$min, F32Attr:$max);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasCanonicalizer = 1;
  let hasVerifier = 1;
}

class Kiln_BinaryOp<string mnemonic, string doc,
                    Type tensor = Kiln_NumericTensor>
    : Kiln_Op<mnemonic, [Kiln_Inferred]> {
  let summary = doc;
  let description = [{
    Elementwise with ONNX (numpy) multidirectional broadcasting, on floats
    and (except pow) on integers. Signless integers are signed, `ui` types
    unsigned: division truncates toward zero and max/min compare by that
    signedness.

    ```mlir
    %y = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins tensor:$lhs, tensor:$rhs);
  let results = (outs tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_AddOp : Kiln_BinaryOp<"add", "lhs + rhs">;
def Kiln_SubOp : Kiln_BinaryOp<"sub", "lhs - rhs">;
def Kiln_MulOp : Kiln_BinaryOp<"mul", "lhs * rhs">;
def Kiln_DivOp : Kiln_BinaryOp<"div", "lhs / rhs">;
def Kiln_PowOp : Kiln_BinaryOp<"pow", "lhs ^ rhs", Kiln_FloatTensor>;
def Kiln_MaxOp : Kiln_BinaryOp<"max", "max(lhs, rhs)">;
def Kiln_MinOp : Kiln_BinaryOp<"min", "min(lhs, rhs)">;
def Kiln_PReluOp : Kiln_BinaryOp<"prelu", "lhs < 0 ? rhs * lhs : lhs",
                                Kiln_FloatTensor>;

def Kiln_ModOp : Kiln_Op<"mod", [Kiln_Inferred]> {
  let summary = "remainder of lhs / rhs (ONNX Mod)";
  let description = [{
    With ONNX broadcasting. With `fmod` the remainder has the sign of `lhs`
    (C fmod; floats need it); without it, integers only, the sign of `rhs`
    (Python %).

    ```mlir
    %y = kiln.mod %a, %b {fmod = true} : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$fmod);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

class Kiln_CompareOp<string mnemonic, string doc>
    : Kiln_Op<mnemonic, [Kiln_Inferred]> {
  let summary = doc;
  let description = [{
    Elementwise comparison with ONNX multidirectional broadcasting; both
    operands have the same element type (float or integer: signless integers
    compare as signed, `ui` types as unsigned, bool as 0/1) and the result is bool (`i1`). Float
    comparisons with NaN are false (equal) as in ONNX.

    ```mlir
    %y = kiln.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs);
  let results = (outs Kiln_BoolTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Kiln_EqualOp : Kiln_CompareOp<"equal", "lhs == rhs">;
def Kiln_LessOp : Kiln_CompareOp<"less", "lhs < rhs">;
def Kiln_LessEqualOp : Kiln_CompareOp<"less_equal", "lhs <= rhs">;
def Kiln_GreaterOp : Kiln_CompareOp<"greater", "lhs > rhs">;
def Kiln_GreaterEqualOp : Kiln_CompareOp<"greater_equal", "lhs >= rhs">;

// On bools these are ONNX's logical And, Or, Xor; on integers its BitwiseAnd,
// BitwiseOr, BitwiseXor.
def Kiln_AndOp : Kiln_BinaryOp<"and", "bitwise and (logical on bools)", Kiln_IntTensor>;
def Kiln_OrOp : Kiln_BinaryOp<"or", "bitwise or (logical on bools)", Kiln_IntTensor>;
def Kiln_XorOp : Kiln_BinaryOp<"xor", "bitwise xor (logical on bools)", Kiln_IntTensor>;

def Kiln_WhereOp : Kiln_Op<"where", [Kiln_Inferred]> {
  let summary = "cond ? lhs : rhs, elementwise with 3-way broadcasting";
  let description = [{
    ```mlir
    %y = kiln.where %c, %a, %b : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$condition, AnyRankedTensor:$lhs,
                   AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$condition `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

def Kiln_MatMulOp : Kiln_Op<"matmul", [Kiln_Inferred]> {
  let summary = "numpy matmul: batched, broadcasting, 1-D operands promoted";
  let description = [{
    ```mlir
    %y = kiln.matmul %a, %b : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
    ```

    On i32 the products accumulate in i32, wrapping (ONNX MatMulInteger).
  }];
  let arguments = (ins Kiln_MatMulTensor:$lhs, Kiln_MatMulTensor:$rhs);
  let results = (outs Kiln_MatMulTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Kiln_GemmOp : Kiln_Op<"gemm", [Kiln_Inferred]> {
  let summary = "alpha * op(A) op(B) + beta * C, C broadcast to the result";
  let description = [{
    ```mlir
    %y = kiln.gemm %a, %b, %c {trans_b = true} : (tensor<1x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<1x10xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$a, Kiln_FloatTensor:$b,
                   Optional<Kiln_FloatTensor>:$c,
                   DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                   DefaultValuedAttr<F32Attr, "1.0">:$beta,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)";
}

// The data layout of a 2-D window op: "NCHW" (ONNX's; convolution filters
// FCHW) or "NHWC" (channels last; filters HWCF), which --kiln-layout picks.
def Kiln_LayoutAttr : DefaultValuedAttr<StrAttr, "\"NCHW\"">;

def Kiln_Conv2DOp : Kiln_Op<"conv2d", [Kiln_Inferred]> {
  let summary = "2-D convolution, NCHW input, FCHW filter, optional bias";
  let description = [{
    Pads are explicit (`[top, left, bottom, right]`); ONNX's auto_pad is
    resolved on import. Grouped and depthwise convolutions set `group`.
    On i32 the products accumulate in i32 (ONNX ConvInteger, after the zero
    points are subtracted; padding is 0). With `layout = "NHWC"` the input
    and result are channels-last and the filter is `[KH, KW, C / group, F]`
    (HWCF); `--kiln-layout` chooses it.

    ```mlir
    %y = kiln.conv2d %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
                                 pads = array<i64: 1, 1, 1, 1>, group = 1 : i64}
       : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_MatMulTensor:$input, Kiln_MatMulTensor:$filter,
                   Optional<Kiln_MatMulTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads, I64Attr:$group,
                   Kiln_LayoutAttr:$layout);
  let results = (outs Kiln_MatMulTensor:$result);
  let extraClassDeclaration = [{
    bool isNHWC() { return getLayout() == "NHWC"; }
  }];
  let assemblyFormat = "$input `,` $filter (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Pooling and reductions
//===----------------------------------------------------------------------===//

class Kiln_Pool2DOp<string mnemonic, string doc, dag extra>
    : Kiln_Op<mnemonic, [Kiln_Inferred]> {
  let summary = doc;
  let description = [{
    NCHW pooling with explicit pads `[top, left, bottom, right]`, or NHWC
    with `layout = "NHWC"`. With `ceil_mode` the output size rounds up;
    windows then may extend past the bottom/right padding, and those
    positions never count.
  }];
  let arguments = !con((ins Kiln_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode), extra,
                       (ins Kiln_LayoutAttr:$layout));
  let results = (outs Kiln_FloatTensor:$result);
  let extraClassDeclaration = [{
    bool isNHWC() { return getLayout() == "NHWC"; }
  }];
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Kiln_MaxPool2DOp : Kiln_Pool2DOp<"max_pool2d", "2-D max pooling", (ins)>;
def Kiln_AvgPool2DOp : Kiln_Pool2DOp<"avg_pool2d", "2-D average pooling",
    (ins DefaultValuedAttr<BoolAttr, "false">:$count_include_pad)>;

def Kiln_GlobalAvgPoolOp : Kiln_Op<"global_avg_pool", [Kiln_Inferred]> {
  let summary = "mean over every spatial dimension, kept as size 1";
  let description = [{
    Canonicalizes to `kiln.reduce_mean` over dimensions 2.. with keepdims.

    ```mlir
    %y = kiln.global_avg_pool %x : tensor<1x64x7x7xf32> -> tensor<1x64x1x1xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasCanonicalizer = 1;
}

// Sums, products, maxima and minima also take signless integers (a mask's
// count of tokens, a shape's element count); the mean takes floats.
def Kiln_ReducibleTensor : RankedTensorOf<[AnyFloat, AnySignlessInteger]>;

class Kiln_ReduceOp<string mnemonic, string doc,
                    Type tensor = Kiln_ReducibleTensor>
    : Kiln_Op<mnemonic, [Kiln_Inferred]> {
  let summary = doc;
  let description = [{
    Reduces over `axes` (sorted, non-negative; empty = no-op as in ONNX's
    noop_with_empty_axes, which OnnxToKiln resolves); `keepdims` keeps reduced
    dimensions with size 1.

    ```mlir
    %y = kiln.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = false} : tensor<1x8x4x4xf32> -> tensor<1x8xf32>
    ```
  }];
  let arguments = (ins tensor:$input, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Kiln_ReduceMeanOp
    : Kiln_ReduceOp<"reduce_mean", "mean over axes", Kiln_FloatTensor>;
// Maxima and minima of constants fold, and integer sums and products (a
// shape's largest side, its element count); float sums are left to run time,
// whose order of additions they would not repeat.
def Kiln_ReduceSumOp : Kiln_ReduceOp<"reduce_sum", "sum over axes"> {
  let hasFolder = 1;
}
def Kiln_ReduceMaxOp : Kiln_ReduceOp<"reduce_max", "maximum over axes"> {
  let hasFolder = 1;
}
def Kiln_ReduceMinOp : Kiln_ReduceOp<"reduce_min", "minimum over axes"> {
  let hasFolder = 1;
}
def Kiln_ReduceProdOp : Kiln_ReduceOp<"reduce_prod", "product over axes"> {
  let hasFolder = 1;
}

class Kiln_ArgReduceOp<string mnemonic, string doc>
    : Kiln_Op<mnemonic, [Kiln_Inferred]> {
  let summary = doc;
  let description = [{
    The index (i64) along `axis` (non-negative) of the extreme element: the
    first one, or the last one with `select_last_index`. `keepdims` keeps
    the axis with size 1.

    ```mlir
    %i = kiln.arg_max %x {axis = 1 : i64, keepdims = false} : tensor<2x5xf32> -> tensor<2xi64>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                   DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Kiln_ArgMaxOp : Kiln_ArgReduceOp<"arg_max", "index of the maximum along an axis">;
def Kiln_ArgMinOp : Kiln_ArgReduceOp<"arg_min", "index of the minimum along an axis">;

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def Kiln_BatchNormOp : Kiln_Op<"batch_norm", [Kiln_Inferred]> {
  let summary = "inference batch normalization over dimension 1";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * scale + bias`, per channel.

    ```mlir
    %y = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32}
       : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                   Kiln_FloatTensor:$bias, Kiln_FloatTensor:$mean,
                   Kiln_FloatTensor:$variance, F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:` functional-type(operands, results)";
}

def Kiln_LayerNormOp : Kiln_Op<"layer_norm", [Kiln_Inferred]> {
  let summary = "layer normalization over the trailing dimensions from `axis`";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * scale + bias`, with the mean and the
    (biased) variance taken over dimensions `axis..rank-1` of each leading
    index. `scale` and the optional `bias` broadcast to those trailing
    dimensions (ONNX LayerNormalization's Y output).

    With `rms`, the mean is not subtracted: `x / sqrt(mean(x^2) + epsilon) *
    scale` (ONNX RMSNormalization), and there is no bias.

    ```mlir
    %y = kiln.layer_norm %x, %s, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32}
       : (tensor<1x128x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<1x128x256xf32>
    %r = kiln.layer_norm %x, %s {axis = 2 : i64, epsilon = 1.0e-05 : f32, rms}
       : (tensor<1x128x256xf32>, tensor<256xf32>) -> tensor<1x128x256xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                   Optional<Kiln_FloatTensor>:$bias, I64Attr:$axis,
                   F32Attr:$epsilon, UnitAttr:$rms);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

def Kiln_SoftmaxOp : Kiln_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "softmax along one axis (ONNX opset 13 semantics)";
  let description = [{
    ```mlir
    %y = kiln.softmax %x {axis = 1 : i64} : tensor<2x10xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Per-element gathers (lowered in LowerGatherElements.cpp)
//===----------------------------------------------------------------------===//

def Kiln_GatherElementsOp : Kiln_Op<"gather_elements", [Kiln_Inferred]> {
  let summary = "picks one element per index along one axis (ONNX GatherElements)";
  let description = [{
    The result has the shape of `indices` (same rank as `input`, no larger in
    any dimension but `axis`): element `p` is `input[p with p[axis] replaced
    by indices[p]]`. Negative indices count from the end, as in ONNX. Indices
    outside `[-n, n)` are an error in ONNX with undefined behavior at run
    time; here they are clamped to `[0, n - 1]` after wrapping, so that no
    index ever reads outside `input`.

    ```mlir
    %y = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x1xi64>) -> tensor<3x1xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Kiln_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Integer bit operations
//===----------------------------------------------------------------------===//

def Kiln_BitShiftOp : Kiln_Op<"bitshift", [Kiln_Inferred]> {
  let summary = "lhs << rhs or lhs >> rhs (ONNX BitShift)";
  let description = [{
    Elementwise with ONNX broadcasting on integers of one type. The right
    shift is logical on `ui` types and arithmetic on signless ones; a shift
    by the bit width or more gives 0 (or the sign for an arithmetic right
    shift), never undefined behavior.

    ```mlir
    %y = kiln.bitshift %a, %b {left = true} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
    ```
  }];
  let arguments = (ins Kiln_IntTensor:$lhs, Kiln_IntTensor:$rhs, BoolAttr:$left);
  let results = (outs Kiln_IntTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}


//===----------------------------------------------------------------------===//
// Run-time shape checks and broadcasting (lowered in LowerShapeOps.cpp)
//===----------------------------------------------------------------------===//

def Kiln_GuardOp : Kiln_Op<"guard", [MemoryEffects<[MemWrite]>]> {
  let summary = "a run-time check that every element of a bool tensor is true";
  let description = [{
    Kiln compiles one static shape. When a shape-like argument (Reshape's
    shape, Split's sizes, Range's bounds, ...) arrives as a graph input, the
    conversion specializes for the shape the model declares and adds a guard
    that the input's values produce exactly that shape. A guard that sees a
    false element makes `kiln_run` fail with KILN_INVALID_ARGUMENT and
    `message` (which names the node and the graph input); the computation is
    still memory-safe whatever the values, but its outputs are not returned
    as a result.

    ```mlir
    kiln.guard %ok {message = "node 'r' (Reshape): input 'shape' ..."} : tensor<3xi1>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$condition, StrAttr:$message);
  let assemblyFormat = "$condition attr-dict `:` type($condition)";
  let hasCanonicalizer = 1;
}

def Kiln_ParallelIfOp : Kiln_Op<"parallel_if", [MemoryEffects<[MemWrite]>]> {
  let summary = "whether a loop made for threads pays for a fork at the run-time sizes";
  let description = [{
    Not a graph op: a contract between two code generation passes
    (docs/shapes.md). --kiln-cpu-tile-and-vectorize decides to share an op
    of a symbolic dimension among threads from its work at the symbols'
    maxima, makes its outer loop an `scf.forall` marked
    `{kiln.parallel_if = loop}`, and puts this op before it in the same
    block, with `worth` true where the op's work at the run-time sizes
    reaches the same threshold. --kiln-outline-parallel-loops runs the
    outlined loop on the calling thread where `worth` is false, and erases
    this op. (Its write effect only keeps it alive until then.)

    ```mlir
    kiln.parallel_if %worth {loop = 3}
    ```
  }];
  let arguments = (ins I1:$worth, I64Attr:$loop);
  let assemblyFormat = "$worth attr-dict";
}

def Kiln_LoopOp : Kiln_Op<"loop", [RecursiveMemoryEffects]> {
  let summary = "a loop over a run-time trip count with loop-carried values and stacked outputs (ONNX Loop)";
  let description = [{
    Runs `body` `trip_count` times (a rank-0 i64; none when it is 0 or
    negative). The body's arguments are the iteration number (rank-0 i64,
    from 0) and the loop-carried values, which start as `inits`; it yields
    the next loop-carried values (of the same types) and then one slice per
    scan output. The results are the last loop-carried values (the inits
    when no iteration runs) and the scan outputs: each yielded slice stacked
    along a new axis 0, `trip_count` rows (dynamic), at most `scan_bound`
    (the rows the arena reserves; the conversion refuses a trip count above
    it).

    With `early_exit` the body computes its own condition, as an ONNX Loop's
    may: it yields a rank-0 i1 first, and the loop stops after the first
    iteration that yields false (or after `trip_count`). The scan outputs
    then have one row per iteration run.

    ```mlir
    %h, %ys = "kiln.loop"(%m, %h0) ({
    ^bb0(%i: tensor<i64>, %h: tensor<1x8xf32>):
      ...
      "kiln.yield"(%h2, %y) : (tensor<1x8xf32>, tensor<1x8xf32>) -> ()
    }) {scan_bound = 512 : i64}
       : (tensor<i64>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<?x1x8xf32>)
    ```
  }];
  let arguments = (ins 0DTensorOf<[I64]>:$trip_count,
                   Variadic<AnyRankedTensor>:$inits,
                   I64Attr:$scan_bound,
                   UnitAttr:$early_exit);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    unsigned getNumCarried() { return getInits().size(); }
    unsigned getNumScans() { return getNumResults() - getNumCarried(); }
    /// The yielded values that are not the early-exit condition.
    ValueRange getYieldedResults();
  }];
}

def Kiln_YieldOp : Kiln_Op<"yield",
    [Pure, Terminator, HasParent<"LoopOp">]> {
  let summary = "ends a kiln.loop body: the condition (early_exit only), the next loop-carried values, then the scan slices";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def Kiln_ExpandOp : Kiln_Op<"expand", [Pure]> {
  let summary = "broadcasts a tensor to the result shape (ONNX Expand)";
  let description = [{
    Numpy broadcasting, right-aligned: every input dimension is 1 or equals
    the result dimension; the result may have more (leading) dimensions.

    ```mlir
    %y = kiln.expand %x : tensor<3x1xf32> to tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Sizes computed in the graph (docs/shapes.md, "Shapes the graph computes")
//
// A model with symbolic dimensions computes the shape arguments of Reshape,
// Expand, Slice and ConstantOfShape from Shape at run time. The conversion
// tracks those computations symbolically and gives these ops each run-time
// size as an `index` operand (tensor.dim of a graph value, and arith on
// those), so the lowering, the arena's bounds and the runtime all see one
// size. The other data-movement ops never carry such operands, so a pass
// that rebuilds them cannot drop a size.
//===----------------------------------------------------------------------===//

def Kiln_ShapeOfOp : Kiln_Op<"shape_of", [Pure]> {
  let summary = "the run-time sizes of dimensions start..end-1 (ONNX Shape)";
  let description = [{
    ```mlir
    %s = kiln.shape_of %x {start = 0 : i64, end = 2 : i64} : tensor<?x?x64xf32> -> tensor<2xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$start, I64Attr:$end);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_SizedReshapeOp : Kiln_Op<"sized_reshape", [Pure]> {
  let summary = "a reshape whose symbolic result sizes are operands";
  let description = [{
    One `index` operand per dynamic result dimension, in order; the element
    count must be the input's at run time (the conversion proves it).

    ```mlir
    %y = kiln.sized_reshape %x [%b, %t] : tensor<?x?x64xf32> to tensor<?x?x4x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Variadic<Index>:$sizes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$input `[` $sizes `]` attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

def Kiln_SizedExpandOp : Kiln_Op<"sized_expand", [Pure]> {
  let summary = "kiln.expand whose symbolic result sizes are operands";
  let description = [{
    Numpy broadcasting as kiln.expand; one `index` operand per dynamic result
    dimension. An input dimension is static 1 (broadcast) or has the result's
    size (a dynamic input dimension is never broadcast).

    ```mlir
    %y = kiln.sized_expand %x [%b] : tensor<1x?xi64> to tensor<?x?xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Variadic<Index>:$sizes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$input `[` $sizes `]` attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

def Kiln_SizedSliceOp : Kiln_Op<"sized_slice", [Pure, AttrSizedOperandSegments]> {
  let summary = "a strided box whose offsets and sizes are run-time operands";
  let description = [{
    One offset and one size operand per dimension, static `strides`; a static
    result dimension has a constant size operand. Element `i` along a
    dimension reads `offset + i * stride`: a negative stride (a reversed
    slice) reads backwards from `offset`. Every position read lies inside
    the input (the conversion clamps as ONNX Slice does).

    ```mlir
    %y = kiln.sized_slice %x offsets(%c0, %c0) sizes(%c1, %t) {strides = array<i64: 1, 1>}
       : tensor<1x512xi64> -> tensor<1x?xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Variadic<Index>:$offsets,
                   Variadic<Index>:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `offsets` `(` $offsets `)` `sizes` `(` $sizes "
                       "`)` attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Indexing, scanning and selection (lowered in LowerIndexing.cpp)
//===----------------------------------------------------------------------===//

// How a scatter combines an update with the element already there.
def Kiln_ScatterReductionAttr : DefaultValuedAttr<StrAttr, "\"none\"">;

def Kiln_ScatterElementsOp : Kiln_Op<"scatter_elements", [Kiln_Inferred]> {
  let summary = "writes updates into a copy of data along one axis (ONNX ScatterElements)";
  let description = [{
    The result is a copy of `data` where, for every position `u` of
    `updates`, the element at `u` with dimension `axis` replaced by
    `indices[u]` becomes `updates[u]` (`reduction` = "none"), or that element
    combined with it ("add", "mul", "max", "min"). Updates apply in row-major
    order, so with duplicate indices the last one wins for "none". Negative
    indices count from the end; an index outside `[-n, n)` writes nothing
    (it never writes outside the result).

    ```mlir
    %y = kiln.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "add"}
       : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$data, Kiln_IndexTensor:$indices,
                   Kiln_NumericTensor:$updates, I64Attr:$axis,
                   Kiln_ScatterReductionAttr:$reduction);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
}

def Kiln_ScatterNDOp : Kiln_Op<"scatter_nd", [Kiln_Inferred]> {
  let summary = "writes slices into a copy of data at index tuples (ONNX ScatterND)";
  let description = [{
    `indices` has shape `[..., q]` with `q <= rank(data)`; each tuple of `q`
    indices names a slice `data[i_0, ..., i_{q-1}, :, ...]`, and `updates`
    has shape `indices.shape[:-1] + data.shape[q:]`. Tuples apply in
    row-major order (the last duplicate wins for "none"); `reduction` is as
    for kiln.scatter_elements. Negative indices count from the end; a tuple
    with any index outside `[-n, n)` writes nothing.

    ```mlir
    %y = kiln.scatter_nd %d, %i, %u {reduction = "none"}
       : (tensor<4x4x4xf32>, tensor<2x1xi64>, tensor<2x4x4xf32>) -> tensor<4x4x4xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$data, Kiln_IndexTensor:$indices,
                   Kiln_NumericTensor:$updates,
                   Kiln_ScatterReductionAttr:$reduction);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
}

def Kiln_GatherNDOp : Kiln_Op<"gather_nd", [Kiln_Inferred]> {
  let summary = "picks slices of data by index tuples (ONNX GatherND)";
  let description = [{
    With `b = batch_dims` and `indices` of shape `[..., q]`, the result has
    shape `indices.shape[:-1] + data.shape[b + q:]`; each tuple indexes
    dimensions `b .. b+q-1` of `data` within the batch given by the first `b`
    indices of its position. Negative indices count from the end; indices
    out of range are clamped to the dimension (never read outside `data`).

    ```mlir
    %y = kiln.gather_nd %d, %i {batch_dims = 1 : i64}
       : (tensor<2x2x2xi32>, tensor<2x1xi64>) -> tensor<2x2xi32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, Kiln_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
}

// Running sums and products along an axis given as a tensor.
class Kiln_CumulativeOp<string mnemonic, string doc>
    : Kiln_Op<mnemonic, [Kiln_Inferred]> {
  let summary = doc;
  let description = [{
    `axis` is a one-element integer tensor, read at run time (a constant folds
    away); negative values count from the end and values outside
    `[-rank, rank)` are clamped. `exclusive` leaves out the element itself
    (the first result is 0 for a sum, 1 for a product), `reverse` runs from
    the end.

    ```mlir
    %y = kiln.}] # mnemonic # [{ %x, %axis {exclusive = false, reverse = true}
       : (tensor<2x3xf64>, tensor<i32>) -> tensor<2x3xf64>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input, Kiln_IndexTensor:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                   DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$input `,` $axis attr-dict `:` functional-type(operands, results)";
}

def Kiln_CumSumOp : Kiln_CumulativeOp<"cumsum",
    "running sum along an axis (ONNX CumSum)">;
def Kiln_CumProdOp : Kiln_CumulativeOp<"cumprod",
    "running product along an axis (ONNX CumProd)">;

def Kiln_TopKOp : Kiln_Op<"top_k", [Kiln_Inferred]> {
  let summary = "the k largest (or smallest) elements along an axis, sorted (ONNX TopK)";
  let description = [{
    `values` and `indices` (i64) have the input's shape with dimension
    `axis` replaced by `k`, best first; equal values keep the lower index
    first, as ONNX's reference does. With a `k_size` operand, k is that
    run-time size (a model's `k` computed from shapes or data, checked
    against the axis by a guard before the op), the results are dynamic
    along the axis, and the `k` attribute is not used.

    ```mlir
    %v, %i = kiln.top_k %x {k = 3 : i64, axis = 1 : i64, largest = true}
       : tensor<3x4xf32> -> tensor<3x3xf32>, tensor<3x3xi64>
    %v, %i = kiln.top_k %x size %k {k = 0 : i64, axis = 1 : i64}
       : tensor<3x4xf32> -> tensor<3x?xf32>, tensor<3x?xi64>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input, Optional<Index>:$k_size,
                   I64Attr:$k, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$largest);
  let results = (outs Kiln_NumericTensor:$values,
                 RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = "$input (`size` $k_size^)? attr-dict `:` type($input) `->` type($values) `,` type($indices)";
}

def Kiln_ReverseSequenceOp : Kiln_Op<"reverse_sequence", [Kiln_Inferred]> {
  let summary = "reverses the first lengths[b] steps of every batch entry (ONNX ReverseSequence)";
  let description = [{
    Result `[.., b at batch_axis, .., t at time_axis, ..]` is the input at
    time `lengths[b] - 1 - t` when `t < lengths[b]`, else at `t`. Lengths are
    clamped to `[0, time steps]`.

    ```mlir
    %y = kiln.reverse_sequence %x, %lens {batch_axis = 0 : i64, time_axis = 1 : i64}
       : (tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Kiln_IndexTensor:$lengths,
                   I64Attr:$batch_axis, I64Attr:$time_axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `,` $lengths attr-dict `:` functional-type(operands, results)";
}

def Kiln_DetOp : Kiln_Op<"det", [Kiln_Inferred]> {
  let summary = "determinant of each trailing square matrix (ONNX Det)";
  let description = [{
    Input `[..., M, M]`, result `[...]`: LU decomposition with partial
    pivoting per matrix.

    ```mlir
    %y = kiln.det %x : tensor<3x2x2xf32> -> tensor<3xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Kiln_CompressOp : Kiln_Op<"compress", [Pure]> {
  let summary = "the slices along an axis where a bool condition holds (ONNX Compress)";
  let description = [{
    The number of selected slices depends on the data, so the result type
    is given (from the model's declared shape): it holds the first
    `result.shape[axis]` slices whose condition entry is true, in order, and
    zeros where fewer are true. Condition entries past the axis are ignored.

    ```mlir
    %y = kiln.compress %x, %c {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3xi1>) -> tensor<2x2xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input, RankedTensorOf<[I1]>:$condition,
                   I64Attr:$axis);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$input `,` $condition attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_NonZeroOp : Kiln_Op<"non_zero", [Pure]> {
  let summary = "coordinates of the non-zero elements, row-major (ONNX NonZero)";
  let description = [{
    The result `[rank, n]` (i64) is given (from the model's declared shape):
    it holds the coordinates of the first `n` non-zero elements in row-major
    order, and zeros where there are fewer.

    ```mlir
    %y = kiln.non_zero %x : tensor<2x2xi1> -> tensor<2x3xi64>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_RandomOp : Kiln_Op<"random", [MemoryEffects<[MemWrite]>]> {
  let summary = "random numbers, new on every run (ONNX RandomUniform, RandomNormal, their Like forms, Bernoulli)";
  let description = [{
    Fills the result with independent draws from `distribution`: `uniform`
    on [0, 1) or `normal` (mean 0, standard deviation 1), in f32 or f64.
    Each execution of the op asks the runtime for a fresh 64-bit key
    (`__kiln_random_key`, runtime/src/runtime.c): from `seed` when `seeded`
    is set, so that a new session repeats the same sequence of runs, else
    from entropy drawn when the session was created; the key advances on
    every draw, so runs (and loop iterations) get new numbers. Element i is
    a 64-bit hash (splitmix64) of the key and i. The op writes the runtime's
    state, so it is neither folded, merged nor hoisted. With `like`, the
    result has that tensor's shape (its symbolic dimensions included).

    ```mlir
    %u = kiln.random {distribution = "uniform", seed = 0 : i64, seeded = false} -> tensor<2x3xf32>
    %z = kiln.random %x : tensor<?x8xf16> {distribution = "normal", seed = 7 : i64, seeded = true} -> tensor<?x8xf32>
    ```
  }];
  let arguments = (ins Optional<AnyRankedTensor>:$like, StrAttr:$distribution,
                   I64Attr:$seed, BoolAttr:$seeded);
  let results = (outs RankedTensorOf<[F32, F64]>:$result);
  let assemblyFormat = "($like^ `:` type($like))? attr-dict `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_NonMaxSuppressionOp : Kiln_Op<"non_max_suppression", [Pure]> {
  let summary = "greedy non-maximum suppression of boxes, per batch and class (ONNX NonMaxSuppression)";
  let description = [{
    For each batch entry `b` and class `c`, boxes `[B, N, 4]` whose score in
    `scores[b, c]` (`[B, C, N]`) passes `score_threshold` (strictly greater;
    every box when it is absent) are taken best score first (equal scores:
    lower box index first); a box is kept unless its intersection over union
    with a box kept before it in the same class is strictly greater than
    `iou_threshold`, and at most `max_per_class` (clamped to 0) are kept.
    Boxes are `[y1, x1, y2, x2]` corners in any order, or with
    `center_point_box` `[x_center, y_center, width, height]`. The result
    `[count, 3]` (i64; the count depends on the data, at most
    `B * C * min(N, max_per_class)`) lists `[b, c, box]` by batch, class and
    then order of selection, and `count` (rank-0 i64) is that count. A static
    result `[k, 3]` (a shape the model declares, which a guard on `count`
    checks) holds the first k rows. The thresholds are one-element tensors.

    ```mlir
    %s, %n = kiln.non_max_suppression %boxes, %scores, %max, %iou score %t
       {center_point_box = false}
       : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> (tensor<?x3xi64>, tensor<i64>)
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$boxes, RankedTensorOf<[F32]>:$scores,
                   RankedTensorOf<[I64]>:$max_per_class,
                   RankedTensorOf<[F32]>:$iou_threshold,
                   Optional<RankedTensorOf<[F32]>>:$score_threshold,
                   DefaultValuedAttr<BoolAttr, "false">:$center_point_box);
  let results = (outs RankedTensorOf<[I64]>:$result, 0DTensorOf<[I64]>:$count);
  let assemblyFormat = "$boxes `,` $scores `,` $max_per_class `,` $iou_threshold (`score` $score_threshold^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_UniqueOp : Kiln_Op<"unique", [Pure]> {
  let summary = "the distinct slices along an axis, with where they occur (ONNX Unique)";
  let description = [{
    Slices of `input` along `axis` are compared whole (lexicographically in
    row-major order). The result types are given (from the model's declared
    shapes): `values` (the input with `m` slices along the axis), `indices`
    `[m]` (the first occurrence of each), `inverse` `[n]` (for each input
    slice, its position in `values`) and `counts` `[m]`. Distinct slices
    are in order of first occurrence, or ascending with `sorted`; those past
    `m` are left out and missing ones are zeros.

    ```mlir
    %y, %i, %v, %c = kiln.unique %x {axis = 0 : i64, sorted = true}
       : tensor<6xf32> -> tensor<4xf32>, tensor<4xi64>, tensor<6xi64>, tensor<4xi64>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs Kiln_NumericTensor:$values, RankedTensorOf<[I64]>:$indices,
                 RankedTensorOf<[I64]>:$inverse, RankedTensorOf<[I64]>:$counts);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($values) `,` type($indices) `,` type($inverse) `,` type($counts)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dynamic int8 quantization (--quantize=dynamic, Transforms/QuantizeDynamic.cpp)
//===----------------------------------------------------------------------===//

def Kiln_Bf16BatchMatMulOp : Kiln_Op<"bf16_batch_matmul", [Pure]> {
  let summary = "Product of two run-time f32 tensors in bf16, accumulated in f32";
  let description = [{
    `lhs [B, M, K]` times `rhs [B, K, N]` (both f32, computed at run time,
    e.g. attention's `Q K^T` and `P V`), each rounded to bf16 (nearest even)
    at run time; the products accumulate in f32. The lowering packs `rhs`
    like kiln.bf16_matmul's weights, once per batch.

    ```mlir
    %y = kiln.bf16_batch_matmul %q, %k
       : (tensor<4x128x64xf32>, tensor<4x64x128xf32>) -> tensor<4x128x128xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$lhs, RankedTensorOf<[F32]>:$rhs);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_Bf16Conv2DOp : Kiln_Op<"bf16_conv2d", [Pure]> {
  let summary = "NHWC convolution with bf16 weights, accumulated in f32";
  let description = [{
    A `kiln.conv2d` (NHWC, group 1) whose filter `[KH, KW, C, F]` was rounded
    to bf16 at compile time and packed like kiln.bf16_matmul's weights, for
    `K = KH * KW * C` in (kh, kw, c) order: `[ceil(F / 16), Kp / 2, 32]`.
    `kernel` is `[KH, KW]`; strides, dilations and pads (`[top, left,
    bottom, right]`) are as for kiln.conv2d. The input is rounded to bf16 at
    run time; products accumulate in f32 and `bias [F]` is added.

    ```mlir
    %y = kiln.bf16_conv2d %x, %w, %b {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>,
                                      dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>}
       : (tensor<1x56x56x64xf32>, tensor<4x288x32xbf16>, tensor<64xf32>) -> tensor<1x56x56x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input,
                   RankedTensorOf<[BF16]>:$weights,
                   Optional<RankedTensorOf<[F32]>>:$bias,
                   DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$input `,` $weights (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_DynamicQuantMatMulOp : Kiln_Op<"dynamic_quant_matmul", [Pure]> {
  let summary = "f32 x int8 weights, the activations quantized at run time";
  let description = [{
    `input [..., M, K]` (f32) times a weight matrix `W [K, N]` that was
    quantized at compile time, per output column, to symmetric int8:
    `W[k, n] ~ weight_scales[n] * q[k, n]`, `q` in [-127, 127]. Each row of
    the input is quantized at run time to asymmetric uint8 (scale and zero
    point mapping `[min(row, 0), max(row, 0)]` onto [0, 255]); the products
    accumulate in i32 and the result is
    `scale_row * weight_scales[n] * (acc - zero_point_row * weight_sums[n]) + bias[n]`
    with `weight_sums[n] = sum_k q[k, n]`.

    `weights` holds `q` packed for 4-byte dot products, in panels of `R`
    columns: `[N / R, ceil(K / 4), 4 * R]`, with `q[k, n]` at
    `[n / R, k / 4, 4 * (n % R) + k % 4]` (zero past K).

    ```mlir
    %y = kiln.dynamic_quant_matmul %x, %w, %s, %sums, %b
       : (tensor<128x256xf32>, tensor<24x64x128xi8>, tensor<768xf32>, tensor<768xi32>, tensor<768xf32>) -> tensor<128x768xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input,
                   RankedTensorOf<[I8]>:$weights,
                   RankedTensorOf<[F32]>:$weight_scales,
                   RankedTensorOf<[I32]>:$weight_sums,
                   Optional<RankedTensorOf<[F32]>>:$bias);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$input `,` $weights `,` $weight_scales `,` $weight_sums (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_Bf16MatMulOp : Kiln_Op<"bf16_matmul", [Pure]> {
  let summary = "f32 activations times bf16 weights, accumulated in f32";
  let description = [{
    `input [..., M, K]` (f32) times a weight matrix `W [K, N]` that was
    rounded to bf16 at compile time. The input is rounded to bf16 (nearest
    even) at run time; the products accumulate in f32 and `bias [N]` (f32)
    is added to the result.

    `weights` holds `W` packed for pairs of k, in panels of 16 columns:
    `[ceil(N / 16), Kp / 2, 32]` with `Kp` = K rounded up to a multiple of 32
    and `W[k, n]` at `[n / 16, k / 2, 2 * (n % 16) + k % 2]` (zero past K and
    past N): each `[16, 32]` block of a panel is one AMX B tile.

    ```mlir
    %y = kiln.bf16_matmul %x, %w, %b
       : (tensor<128x256xf32>, tensor<48x128x32xbf16>, tensor<768xf32>) -> tensor<128x768xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input,
                   RankedTensorOf<[BF16]>:$weights,
                   Optional<RankedTensorOf<[F32]>>:$bias);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$input `,` $weights (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_StaticQuantMatMulOp : Kiln_Op<"static_quant_matmul", [Pure]> {
  let summary = "f32 x int8 weights, the activations quantized with a calibrated scale";
  let description = [{
    `input [..., M, K]` (f32) times a weight matrix `W [K, N]` quantized at
    compile time per output column to symmetric int8 (`W[k, n] ~
    weight_scales[n] * q[k, n]`, `q` in [-127, 127]). The input is quantized
    at run time with the fixed `input_scale` and `input_zero_point` that
    calibration chose (`u = clamp(round(x / input_scale) + zero_point, 0,
    255)`, uint8); products accumulate in i32 and the result is
    `input_scale * weight_scales[n] * (acc - zero_point * weight_sums[n]) +
    bias[n]` with `weight_sums[n] = sum_k q[k, n]`.

    `weights` holds `q` packed in panels of 16 columns, 4 consecutive k of a
    column in one 32-bit lane: `[ceil(N / 16), Kp / 4, 64]` with `Kp` = K
    rounded up to a multiple of 64 and `q[k, n]` at `[n / 16, k / 4, 4 *
    (n % 16) + k % 4]` (zero past K and N). Each `[16, 64]` block of a panel
    is one AMX B tile; the same layout is a VNNI panel of R = 16.

    ```mlir
    %y = kiln.static_quant_matmul %x, %w, %s, %sums, %b {input_scale = 0.02 : f32, input_zero_point = 128 : i64}
       : (tensor<128x256xf32>, tensor<48x64x64xi8>, tensor<768xf32>, tensor<768xi32>, tensor<768xf32>) -> tensor<128x768xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input,
                   RankedTensorOf<[I8]>:$weights,
                   RankedTensorOf<[F32]>:$weight_scales,
                   RankedTensorOf<[I32]>:$weight_sums,
                   Optional<RankedTensorOf<[F32]>>:$bias,
                   F32Attr:$input_scale, I64Attr:$input_zero_point);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$input `,` $weights `,` $weight_scales `,` $weight_sums (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_StaticQuantConv2DOp : Kiln_Op<"static_quant_conv2d", [Pure]> {
  let summary = "NHWC convolution with int8 weights and calibrated int8 activations";
  let description = [{
    A `kiln.conv2d` (NHWC, group 1) whose filter `[KH, KW, C, F]` was
    quantized per output channel to symmetric int8 at compile time and
    packed like kiln.static_quant_matmul's weights for `K = KH * KW * C` in
    (kh, kw, c) order. The input is quantized with the calibrated
    `input_scale` and `input_zero_point` (padding reads the zero point, i.e.
    an exact 0); the rest is as for kiln.static_quant_matmul. `kernel` is
    `[KH, KW]`; strides, dilations and pads (`[top, left, bottom, right]`)
    are as for kiln.conv2d.

    ```mlir
    %y = kiln.static_quant_conv2d %x, %w, %s, %sums, %b {input_scale = 0.02 : f32, input_zero_point = 0 : i64,
             kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>}
       : (tensor<1x56x56x64xf32>, tensor<4x144x64xi8>, tensor<64xf32>, tensor<64xi32>, tensor<64xf32>) -> tensor<1x56x56x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input,
                   RankedTensorOf<[I8]>:$weights,
                   RankedTensorOf<[F32]>:$weight_scales,
                   RankedTensorOf<[I32]>:$weight_sums,
                   Optional<RankedTensorOf<[F32]>>:$bias,
                   F32Attr:$input_scale, I64Attr:$input_zero_point,
                   DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$input `,` $weights `,` $weight_scales `,` $weight_sums (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_StaticQuantDepthwiseConv2DOp
    : Kiln_Op<"static_quant_depthwise_conv2d", [Pure]> {
  let summary = "NHWC depthwise convolution with int8 weights and calibrated int8 activations";
  let description = [{
    A `kiln.conv2d` (NHWC) with one group per channel (`group = C = F`)
    whose filter `[KH, KW, 1, C]` was quantized per channel to symmetric
    int8 at compile time (`q[kh, kw, c]`, scale `weight_scales[c]`, `sums[c]
    = sum over (kh, kw) of q[kh, kw, c]`) and whose input is quantized with
    the calibrated `input_scale` and `input_zero_point` as for
    kiln.static_quant_conv2d (`u = clamp(round(x / input_scale) +
    input_zero_point, 0, 255)`; padding reads the zero point, an exact 0).
    The result is

      `y[n, oh, ow, c] = input_scale * weight_scales[c] * (acc -
      input_zero_point * weight_sums[c]) + bias[c]`, with `acc` the i32 sum
      over (kh, kw) of `u[n, oh s0 + kh d0, ow s1 + kw d1, c] * q[kh, kw, c]`.

    `weights` holds `q` with 4 consecutive kernel rows of a channel in one
    32-bit lane, as AVX512-VNNI's vpdpbusd multiplies them: `[ceil(KH / 4),
    KW, C, 4]`, `q[kh, kw, c]` at `[kh / 4, kw, c, kh % 4]`, zero past KH.
    `kernel` is `[KH, KW]`; strides, dilations and pads (`[top, left,
    bottom, right]`) are as for kiln.conv2d.

    ```mlir
    %y = kiln.static_quant_depthwise_conv2d %x, %w, %s, %sums, %b {input_scale = 0.02 : f32, input_zero_point = 0 : i64,
             kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>}
       : (tensor<1x112x112x96xf32>, tensor<1x3x96x4xi8>, tensor<96xf32>, tensor<96xi32>, tensor<96xf32>) -> tensor<1x112x112x96xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input,
                   RankedTensorOf<[I8]>:$weights,
                   RankedTensorOf<[F32]>:$weight_scales,
                   RankedTensorOf<[I32]>:$weight_sums,
                   Optional<RankedTensorOf<[F32]>>:$bias,
                   F32Attr:$input_scale, I64Attr:$input_zero_point,
                   DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$input `,` $weights `,` $weight_scales `,` $weight_sums (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_IntegerMatMulOp : Kiln_Op<"integer_matmul", [Pure]> {
  let summary = "uint8 activations times packed int8 weights, exactly in i32";
  let description = [{
    The integer product of an imported int8 model (MatMulInteger, the i32
    part of QLinearMatMul) on the int8 kernels: `input [..., M, K]` (uint8,
    e.g. DynamicQuantizeLinear's output) minus its `input_zero_point` (one
    element, i32, known at run time only) times a constant int8 matrix
    `q [K, N]`, accumulated exactly in i32:
    `result[..., m, n] = sum_k (input[..., m, k] - zero_point) * q[k, n]`,
    computed as `acc - zero_point * weight_sums[n]` with `weight_sums[n] =
    sum_k q[k, n]`.

    `weights` holds `q` packed like kiln.static_quant_matmul's for the VNNI
    kernel: `[ceil(N / 16), ceil(K / 4), 64]`, `q[k, n]` at `[n / 16, k / 4,
    4 * (n % 16) + k % 4]` (zero past K and N).

    ```mlir
    %y = kiln.integer_matmul %x, %zp, %w, %sums
       : (tensor<128x256xui8>, tensor<i32>, tensor<48x64x64xi8>, tensor<768xi32>) -> tensor<128x768xi32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[UI8]>:$input,
                   RankedTensorOf<[I32]>:$input_zero_point,
                   RankedTensorOf<[I8]>:$weights,
                   RankedTensorOf<[I32]>:$weight_sums);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "$input `,` $input_zero_point `,` $weights `,` $weight_sums attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_IntegerConv2DOp : Kiln_Op<"integer_conv2d", [Pure]> {
  let summary = "NHWC convolution of uint8 activations with int8 weights, exactly in i32";
  let description = [{
    The integer convolution of an imported int8 model (ConvInteger, the i32
    part of QLinearConv) on the int8 kernels: an NHWC `input` (uint8) minus
    its run-time `input_zero_point` (one element, i32) convolved (group 1)
    with a constant int8 filter `q [KH, KW, C, F]`, exactly in i32; padding
    reads the zero point (it contributes 0). `weights` and `weight_sums` are
    as for kiln.integer_matmul with `K = KH * KW * C` in (kh, kw, c) order;
    `kernel` is `[KH, KW]`; strides, dilations and pads (`[top, left,
    bottom, right]`) are as for kiln.conv2d.

    ```mlir
    %y = kiln.integer_conv2d %x, %zp, %w, %sums {kernel = array<i64: 3, 3>,
             strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>}
       : (tensor<1x56x56x64xui8>, tensor<i32>, tensor<4x144x64xi8>, tensor<64xi32>) -> tensor<1x56x56x64xi32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[UI8]>:$input,
                   RankedTensorOf<[I32]>:$input_zero_point,
                   RankedTensorOf<[I8]>:$weights,
                   RankedTensorOf<[I32]>:$weight_sums,
                   DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "$input `,` $input_zero_point `,` $weights `,` $weight_sums attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_IntegerDepthwiseConv2DOp
    : Kiln_Op<"integer_depthwise_conv2d", [Pure]> {
  let summary = "NHWC depthwise convolution of uint8 activations with int8 weights, exactly in i32";
  let description = [{
    The depthwise integer convolution of an imported int8 model (a
    ConvInteger, QLinearConv or QDQ Conv with one group per channel): an
    NHWC `input` (uint8, C channels) minus its run-time `input_zero_point`
    (one element, i32) convolved channel by channel with a constant int8
    filter `q[kh, kw, c]`, exactly in i32; padding reads the zero point (it
    contributes 0):

      `y[n, oh, ow, c] = sum over (kh, kw) of (x[n, oh s0 + kh d0 - top,
      ow s1 + kw d1 - left, c] - zp) * q[kh, kw, c]`,

    computed as `acc - zp * weight_sums[c]`. `weights` holds `q` packed as
    for kiln.static_quant_depthwise_conv2d (`[ceil(KH / 4), KW, C, 4]`, 4
    kernel rows of a channel in one 32-bit lane, zero past KH);
    `weight_sums[c]` is the sum of q over the channel's taps. `kernel` is
    `[KH, KW]`; strides, dilations and pads (`[top, left, bottom, right]`)
    are as for kiln.conv2d.

    ```mlir
    %y = kiln.integer_depthwise_conv2d %x, %zp, %w, %sums {kernel = array<i64: 3, 3>,
             strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>}
       : (tensor<1x56x56x144xui8>, tensor<i32>, tensor<1x3x144x4xi8>, tensor<144xi32>) -> tensor<1x56x56x144xi32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[UI8]>:$input,
                   RankedTensorOf<[I32]>:$input_zero_point,
                   RankedTensorOf<[I8]>:$weights,
                   RankedTensorOf<[I32]>:$weight_sums,
                   DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "$input `,` $input_zero_point `,` $weights `,` $weight_sums attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // KILN_DIALECT_KILN_OPS
