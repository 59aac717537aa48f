//===- Converters.h - the converter of each ONNX op -------------*- C++ -*-===//
//
// The functions OpTable.cpp's rows name, by the file that defines them, each
// declared through the OnnxConverter function type:
//
//   FailureOr<SmallVector<Value>> convertX(OnnxNode &node);
//
// The converter of op X is convertX. An op whose older opsets need another
// converter has convertX<since> for those (convertClip6 for Clip 6,
// convertClip for Clip 11 and later).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CONVERSION_ONNXTOKILN_CONVERTERS_H
#define KILN_LIB_CONVERSION_ONNXTOKILN_CONVERTERS_H

#include "kiln/Conversion/OnnxToKiln/OnnxToKiln.h"

namespace mlir::kiln {

// Attention.cpp
OnnxConverter convertAttention, convertRotaryEmbedding;
// Bitwise.cpp
OnnxConverter convertBitCast, convertBitwiseAnd, convertBitwiseNot,
    convertBitwiseOr, convertBitwiseXor;
// Col2Im.cpp
OnnxConverter convertCol2Im;
// Conv.cpp
OnnxConverter convertCausalConvWithState, convertConv;
// ConvTranspose.cpp
OnnxConverter convertConvTranspose;
// Elementwise.cpp
OnnxConverter convertAbs, convertAcos, convertAcosh, convertAdd, convertAnd,
    convertAsin, convertAsinh, convertAtan, convertAtanh, convertBitShift,
    convertCast, convertCastLike, convertCeil, convertCelu, convertClip,
    convertClip6, convertCos, convertCosh, convertDiv, convertDropout,
    convertElu, convertEqual, convertErf, convertExp, convertFloor,
    convertGelu, convertGreater, convertGreaterOrEqual, convertHardSigmoid, convertHardSwish,
    convertIdentity, convertIsInf, convertIsNaN, convertLeakyRelu, convertLess,
    convertLessOrEqual, convertLog, convertMax, convertMean, convertMin,
    convertMish, convertMod, convertMul, convertNeg, convertNot, convertOr,
    convertPow, convertPRelu, convertReciprocal, convertRelu, convertRound,
    convertSelu, convertShrink, convertSigmoid, convertSign, convertSin,
    convertSinh, convertSoftplus, convertSoftsign, convertSqrt, convertSub,
    convertSum, convertTan, convertTanh, convertThresholdedRelu, convertTrilu,
    convertWhere, convertXor;
// Gather.cpp
OnnxConverter convertGather, convertGatherElements, convertGatherND;
// Generators.cpp
OnnxConverter convertBlackmanWindow, convertConstant, convertConstantOfShape,
    convertEyeLike, convertHammingWindow, convertHannWindow,
    convertMelWeightMatrix, convertOneHot, convertRange;
// GridSample.cpp
OnnxConverter convertAffineGrid, convertDeformConv, convertGridSample,
    convertRoiAlign;
// Legacy.cpp
OnnxConverter convertAdd1, convertDiv1, convertMax6, convertMin6, convertMul1,
    convertPow1, convertPRelu1, convertSub1, convertSum6;
// LinearAttention.cpp
OnnxConverter convertLinearAttention;
// LinearAlgebra.cpp
OnnxConverter convertDet, convertEinsum, convertGemm, convertMatMul;
/// A 0-or-1 attribute (Gemm's transA and transB), default 0; another value
/// fails the node.
FailureOr<bool> flagAttr(OnnxNode &node, StringRef name);
// Loss.cpp
OnnxConverter convertNegativeLogLikelihoodLoss, convertSoftmaxCrossEntropyLoss;
// Microsoft.cpp
// (com.microsoft's transformer and weight-only ops, and ONNX Runtime's
// default-domain SimplifiedLayerNormalization)
OnnxConverter convertBiasAdd, convertBiasGelu, convertEmbedLayerNormalization,
    convertFastGelu, convertFusedMatMul, convertMatMulNBits, convertMsGelu,
    convertQuickGelu, convertSimplifiedLayerNormalization,
    convertSkipLayerNormalization, convertSkipSimplifiedLayerNormalization;
// MsAttention.cpp
// (com.microsoft's Attention and QAttention)
OnnxConverter convertMsAttention, convertQAttention;
// Normalization.cpp
// (and ONNX Runtime's default-domain SimplifiedLayerNormalization)
OnnxConverter convertBatchNormalization, convertBatchNormalization1,
    convertGroupNormalization, convertInstanceNormalization,
    convertLayerNormalization, convertLpNormalization, convertLRN,
    convertMeanVarianceNormalization, convertRMSNormalization,
    convertSimplifiedLayerNormalization;
// Optional.cpp
OnnxConverter convertOptional, convertOptionalGetElement,
    convertOptionalHasElement;
// Pad.cpp
OnnxConverter convertCenterCropPad, convertPad;
// Pooling.cpp
OnnxConverter convertAveragePool, convertGlobalAveragePool, convertGlobalLpPool,
    convertGlobalMaxPool, convertLpPool, convertMaxPool, convertMaxUnpool;
/// AveragePool of `x` (NCHW) with the node's pooling attributes
/// (kernel_shape, strides, pads, auto_pad, ceil_mode, count_include_pad).
FailureOr<Value> averagePoolOf(OnnxNode &node, Value x);
// Quantize.cpp
OnnxConverter convertConvInteger, convertDequantizeLinear,
    convertDynamicQuantizeLinear, convertMatMulInteger, convertQLinearConv,
    convertQLinearMatMul, convertQuantizeLinear;
// (com.microsoft's QOperator ops)
OnnxConverter convertQGemm, convertQLinearAdd, convertQLinearAveragePool,
    convertQLinearConcat, convertQLinearGlobalAveragePool,
    convertQLinearLeakyRelu, convertQLinearMul, convertQLinearSigmoid,
    convertQLinearSoftmax;
// Random.cpp
OnnxConverter convertBernoulli, convertMultinomial, convertRandomNormal,
    convertRandomNormalLike, convertRandomUniform, convertRandomUniformLike;
// Sequences.cpp: sequences as compile-time lists of tensors, converted in
// the conversion's walk (they keep no value of their own).
using SequenceLists = llvm::DenseMap<Value, SmallVector<Value>>;
/// Whether `opType` builds or reads a sequence as a compile-time list.
bool isSequenceListOp(StringRef opType);
/// Converts one such node: a sequence result is recorded in `lists` (the op
/// stays until its users are converted), a tensor result replaces the op.
/// std::nullopt when the sequence it reads is no such list (a Loop's).
std::optional<LogicalResult> convertSequenceOp(OnnxNode &node,
                                               SequenceLists &lists);
/// SequenceMap over compile-time lists: the body is copied before the node
/// once per element (onnx ops, for the walk to convert next) and each output
/// becomes a SequenceConstruct of the copies' results; the node is erased.
/// Returns the first op made.
FailureOr<Operation *> unrollSequenceMap(OnnxNode &node,
                                         const SequenceLists &lists);
// Recurrent.cpp
OnnxConverter convertGRU, convertLSTM, convertRNN;
// Reduce.cpp
OnnxConverter convertArgMax, convertArgMin, convertCumProd, convertCumSum,
    convertReduceL1, convertReduceL2, convertReduceLogSum,
    convertReduceLogSumExp, convertReduceMax, convertReduceMean,
    convertReduceMin, convertReduceProd, convertReduceSum,
    convertReduceSumSquare;
// Resize.cpp
OnnxConverter convertResize, convertUpsample;
// Scatter.cpp
OnnxConverter convertScatterElements, convertScatterND, convertTensorScatter;
// Select.cpp
OnnxConverter convertCompress, convertNonMaxSuppression, convertNonZero,
    convertTopK, convertUnique;
// Shape.cpp
OnnxConverter convertDepthToSpace, convertExpand, convertFlatten,
    convertReshape, convertShape, convertSize, convertSpaceToDepth,
    convertSqueeze, convertTile, convertTranspose, convertUnsqueeze;
// Signal.cpp
OnnxConverter convertDFT;
OnnxConverter convertSTFT;
// Slice.cpp
OnnxConverter convertConcat, convertReverseSequence, convertSlice, convertSplit;
// Softmax.cpp
OnnxConverter convertHardmax, convertLogSoftmax, convertSoftmax;
// Swish.cpp
OnnxConverter convertSwiGLU, convertSwish;
// TfIdf.cpp
OnnxConverter convertTfIdfVectorizer;
// Training.cpp
OnnxConverter convertAdagrad, convertAdam, convertMomentum;

} // namespace mlir::kiln

#endif
