//===- OpTable.cpp - every ONNX op Kiln converts, and where -----*- C++ -*-===//
//
// One row per op type and converter: the since-versions it handles, the
// function, and the file under lib/Conversion/OnnxToKiln/ that defines it.
// For a node of opset N, ConvertOnnxToKilnPass finds the version of the op
// that N means in ONNX 1.23 (the largest since-version not above N, from
// OnnxVersions.inc) and takes the row that lists exactly that version: a
// version is converted only once someone has read what it changed, so a new
// opset never runs with an older version's meaning. An op whose older
// opsets need other semantics has a row per converter (Clip 6 and Clip 11). Rows are
// sorted by domain, then by op type; docs/ops.md says what each op supports
// and docs/development.md how to add one.
//
//===----------------------------------------------------------------------===//
#include "Converters.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
constexpr const char *kMicrosoft = "com.microsoft";
constexpr const char *kTraining = "ai.onnx.preview.training";

// clang-format off
const OnnxOpRow kOnnxOps[] = {
    // op type                   since-versions                          converter                         file
    {"Abs",                      {6, 13},                                convertAbs,                       "Elementwise.cpp"},
    {"Acos",                     {7, 22},                                convertAcos,                      "Elementwise.cpp"},
    {"Acosh",                    {9, 22},                                convertAcosh,                     "Elementwise.cpp"},
    // Before opset 7, binary ops broadcast only with an explicit attribute
    // (Legacy.cpp); 7 introduced numpy broadcasting, which kiln's ops implement.
    {"Add",                      {7, 13, 14},                            convertAdd,                       "Elementwise.cpp"},
    {"Add",                      {1, 6},                                 convertAdd1,                      "Legacy.cpp"},
    {"AffineGrid",               {20},                                   convertAffineGrid,                "GridSample.cpp"},
    {"And",                      {7},                                    convertAnd,                       "Elementwise.cpp"},
    {"ArgMax",                   {1, 11, 12, 13},                        convertArgMax,                    "Reduce.cpp"},
    {"ArgMin",                   {1, 11, 12, 13},                        convertArgMin,                    "Reduce.cpp"},
    {"Asin",                     {7, 22},                                convertAsin,                      "Elementwise.cpp"},
    {"Asinh",                    {9, 22},                                convertAsinh,                     "Elementwise.cpp"},
    {"Atan",                     {7, 22},                                convertAtan,                      "Elementwise.cpp"},
    {"Atanh",                    {9, 22},                                convertAtanh,                     "Elementwise.cpp"},
    {"Attention",                {23, 24},                               convertAttention,                 "Attention.cpp"},
    // AveragePool 1 is 7 without count_include_pad (whose default is 0).
    {"AveragePool",              {1, 7, 10, 11, 19, 22},                 convertAveragePool,               "Pooling.cpp"},
    {"BatchNormalization",       {1, 6},                                 convertBatchNormalization1,       "Normalization.cpp"},
    {"BatchNormalization",       {7, 9, 14, 15},                         convertBatchNormalization,        "Normalization.cpp"},
    {"Bernoulli",                {15, 22},                               convertBernoulli,                 "Random.cpp"},
    {"BitCast",                  {26},                                   convertBitCast,                   "Bitwise.cpp"},
    {"BitShift",                 {11},                                   convertBitShift,                  "Elementwise.cpp"},
    {"BitwiseAnd",               {18},                                   convertBitwiseAnd,                "Bitwise.cpp"},
    {"BitwiseNot",               {18},                                   convertBitwiseNot,                "Bitwise.cpp"},
    {"BitwiseOr",                {18},                                   convertBitwiseOr,                 "Bitwise.cpp"},
    {"BitwiseXor",               {18},                                   convertBitwiseXor,                "Bitwise.cpp"},
    {"BlackmanWindow",           {17},                                   convertBlackmanWindow,            "Generators.cpp"},
    {"Cast",                     {6, 9, 13, 19, 21, 23, 24, 25},         convertCast,                      "Elementwise.cpp"},
    {"CastLike",                 {15, 19, 21, 23, 24, 25},               convertCastLike,                  "Elementwise.cpp"},
    {"CausalConvWithState",      {27},                                   convertCausalConvWithState,       "Conv.cpp"},
    {"Ceil",                     {6, 13},                                convertCeil,                      "Elementwise.cpp"},
    {"Celu",                     {12, 28},                               convertCelu,                      "Elementwise.cpp"},
    {"CenterCropPad",            {18},                                   convertCenterCropPad,             "Pad.cpp"},
    {"Clip",                     {6},                                    convertClip6,                     "Elementwise.cpp"},
    {"Clip",                     {11, 12, 13},                           convertClip,                      "Elementwise.cpp"},
    {"Col2Im",                   {18},                                   convertCol2Im,                    "Col2Im.cpp"},
    {"Compress",                 {9, 11},                                convertCompress,                  "Select.cpp"},
    {"Concat",                   {4, 11, 13},                            convertConcat,                    "Slice.cpp"},
    {"ConcatFromSequence",       {11},                                   nullptr,                          "Sequences.cpp"},
    {"Constant",                 {1, 9, 11, 12, 13, 19, 21, 23, 24, 25}, convertConstant,                  "Generators.cpp"},
    {"ConstantOfShape",          {9, 20, 21, 23, 24, 25},                convertConstantOfShape,           "Generators.cpp"},
    {"Conv",                     {1, 11, 22},                            convertConv,                      "Conv.cpp"},
    {"ConvInteger",              {10},                                   convertConvInteger,               "Quantize.cpp"},
    {"ConvTranspose",            {1, 11, 22},                            convertConvTranspose,             "ConvTranspose.cpp"},
    {"Cos",                      {7, 22},                                convertCos,                       "Elementwise.cpp"},
    {"Cosh",                     {9, 22},                                convertCosh,                      "Elementwise.cpp"},
    {"CumProd",                  {26},                                   convertCumProd,                   "Reduce.cpp"},
    {"CumSum",                   {11, 14},                               convertCumSum,                    "Reduce.cpp"},
    {"DeformConv",               {19, 22},                               convertDeformConv,                "GridSample.cpp"},
    {"DepthToSpace",             {1, 11, 13},                            convertDepthToSpace,              "Shape.cpp"},
    {"DequantizeLinear",         {10, 13, 19, 21, 23, 24, 25},           convertDequantizeLinear,          "Quantize.cpp"},
    {"Det",                      {11, 22},                               convertDet,                       "LinearAlgebra.cpp"},
    {"DFT",                      {17, 20},                               convertDFT,                       "Signal.cpp"},
    {"Div",                      {7, 13, 14},                            convertDiv,                       "Elementwise.cpp"},
    {"Div",                      {1, 6},                                 convertDiv1,                      "Legacy.cpp"},
    {"Dropout",                  {7, 10, 12, 13, 22},                    convertDropout,                   "Elementwise.cpp"},
    {"DynamicQuantizeLinear",    {11},                                   convertDynamicQuantizeLinear,     "Quantize.cpp"},
    {"Einsum",                   {12},                                   convertEinsum,                    "LinearAlgebra.cpp"},
    {"Elu",                      {6, 22},                                convertElu,                       "Elementwise.cpp"},
    {"Equal",                    {7, 11, 13, 19},                        convertEqual,                     "Elementwise.cpp"},
    {"Erf",                      {9, 13},                                convertErf,                       "Elementwise.cpp"},
    {"Exp",                      {6, 13},                                convertExp,                       "Elementwise.cpp"},
    {"Expand",                   {8, 13},                                convertExpand,                    "Shape.cpp"},
    {"EyeLike",                  {9, 22},                                convertEyeLike,                   "Generators.cpp"},
    {"Flatten",                  {1, 9, 11, 13, 21, 23, 24, 25},         convertFlatten,                   "Shape.cpp"},
    {"Floor",                    {6, 13},                                convertFloor,                     "Elementwise.cpp"},
    {"Gather",                   {1, 11, 13},                            convertGather,                    "Gather.cpp"},
    {"GatherElements",           {11, 13},                               convertGatherElements,            "Gather.cpp"},
    {"GatherND",                 {11, 12, 13},                           convertGatherND,                  "Gather.cpp"},
    {"Gelu",                     {20},                                   convertGelu,                      "Elementwise.cpp"},
    // Gemm 1 and 6 differ from 7 by a `broadcast` attribute for C; a valid
    // model without it already has C of the full [M, N] shape.
    {"Gemm",                     {1, 6, 7, 9, 11, 13},                   convertGemm,                      "LinearAlgebra.cpp"},
    {"GlobalAveragePool",        {1, 22},                                convertGlobalAveragePool,         "Pooling.cpp"},
    {"GlobalLpPool",             {2, 22},                                convertGlobalLpPool,              "Pooling.cpp"},
    {"GlobalMaxPool",            {1, 22},                                convertGlobalMaxPool,             "Pooling.cpp"},
    {"Greater",                  {7, 9, 13},                             convertGreater,                   "Elementwise.cpp"},
    {"GreaterOrEqual",           {12, 16},                               convertGreaterOrEqual,            "Elementwise.cpp"},
    {"GridSample",               {16, 20, 22},                           convertGridSample,                "GridSample.cpp"},
    {"GroupNormalization",       {18, 21},                               convertGroupNormalization,        "Normalization.cpp"},
    {"GRU",                      {7, 14, 22},                            convertGRU,                       "Recurrent.cpp"},
    {"HammingWindow",            {17},                                   convertHammingWindow,             "Generators.cpp"},
    {"HannWindow",               {17},                                   convertHannWindow,                "Generators.cpp"},
    {"Hardmax",                  {1, 11, 13},                            convertHardmax,                   "Softmax.cpp"},
    {"HardSigmoid",              {6, 22},                                convertHardSigmoid,               "Elementwise.cpp"},
    {"HardSwish",                {14, 22},                               convertHardSwish,                 "Elementwise.cpp"},
    {"Identity",                 {1, 13, 14, 16, 19, 21, 23, 24, 25},    convertIdentity,                  "Elementwise.cpp"},
    // If, Loop and Scan have no converter: inlineOnnxControlFlow rewrites them
    // into other onnx ops before the table is consulted.
    {"If",                       {1, 11, 13, 16, 19, 21, 23, 24, 25},    nullptr,                          "ControlFlow.cpp"},
    {"InstanceNormalization",    {6, 22},                                convertInstanceNormalization,     "Normalization.cpp"},
    {"IsInf",                    {10, 20},                               convertIsInf,                     "Elementwise.cpp"},
    {"IsNaN",                    {9, 13, 20},                            convertIsNaN,                     "Elementwise.cpp"},
    {"LayerNormalization",       {17},                                   convertLayerNormalization,        "Normalization.cpp"},
    {"LeakyRelu",                {6, 16},                                convertLeakyRelu,                 "Elementwise.cpp"},
    {"Less",                     {7, 9, 13},                             convertLess,                      "Elementwise.cpp"},
    {"LessOrEqual",              {12, 16},                               convertLessOrEqual,               "Elementwise.cpp"},
    {"LinearAttention",          {27},                                   convertLinearAttention,           "LinearAttention.cpp"},
    {"Log",                      {6, 13},                                convertLog,                       "Elementwise.cpp"},
    {"LogSoftmax",               {1, 11, 13},                            convertLogSoftmax,                "Softmax.cpp"},
    {"Loop",                     {1, 11, 13, 16, 19, 21, 23, 24, 25},    nullptr,                          "ControlFlow.cpp"},
    {"LpNormalization",          {1, 22},                                convertLpNormalization,           "Normalization.cpp"},
    {"LpPool",                   {2, 11, 18, 22},                        convertLpPool,                    "Pooling.cpp"},
    {"LRN",                      {1, 13},                                convertLRN,                       "Normalization.cpp"},
    {"LSTM",                     {7, 14, 22},                            convertLSTM,                      "Recurrent.cpp"},
    {"MatMul",                   {1, 9, 13},                             convertMatMul,                    "LinearAlgebra.cpp"},
    {"MatMulInteger",            {10},                                   convertMatMulInteger,             "Quantize.cpp"},
    {"Max",                      {8, 12, 13},                            convertMax,                       "Elementwise.cpp"},
    {"Max",                      {6},                                    convertMax6,                      "Legacy.cpp"},
    {"MaxPool",                  {1, 8, 10, 11, 12, 22},                 convertMaxPool,                   "Pooling.cpp"},
    {"MaxUnpool",                {9, 11, 22},                            convertMaxUnpool,                 "Pooling.cpp"},
    {"Mean",                     {8, 13},                                convertMean,                      "Elementwise.cpp"},
    {"MeanVarianceNormalization",{9, 13},                                convertMeanVarianceNormalization, "Normalization.cpp"},
    {"MelWeightMatrix",          {17},                                   convertMelWeightMatrix,           "Generators.cpp"},
    {"Min",                      {8, 12, 13},                            convertMin,                       "Elementwise.cpp"},
    {"Min",                      {6},                                    convertMin6,                      "Legacy.cpp"},
    {"Mish",                     {18, 22},                               convertMish,                      "Elementwise.cpp"},
    {"Mod",                      {10, 13},                               convertMod,                       "Elementwise.cpp"},
    {"Mul",                      {7, 13, 14},                            convertMul,                       "Elementwise.cpp"},
    {"Mul",                      {1, 6},                                 convertMul1,                      "Legacy.cpp"},
    {"Multinomial",              {7, 22},                                convertMultinomial,               "Random.cpp"},
    {"Neg",                      {6, 13},                                convertNeg,                       "Elementwise.cpp"},
    {"NegativeLogLikelihoodLoss",{12, 13, 22},                           convertNegativeLogLikelihoodLoss, "Loss.cpp"},
    {"NonMaxSuppression",        {10, 11},                               convertNonMaxSuppression,         "Select.cpp"},
    {"NonZero",                  {9, 13},                                convertNonZero,                   "Select.cpp"},
    {"Not",                      {1},                                    convertNot,                       "Elementwise.cpp"},
    {"OneHot",                   {9, 11},                                convertOneHot,                    "Generators.cpp"},
    {"Optional",                 {15},                                   convertOptional,                  "Optional.cpp"},
    {"OptionalGetElement",       {15, 18},                               convertOptionalGetElement,        "Optional.cpp"},
    {"OptionalHasElement",       {15, 18},                               convertOptionalHasElement,        "Optional.cpp"},
    {"Or",                       {7},                                    convertOr,                        "Elementwise.cpp"},
    {"Pad",                      {2, 11, 13, 18, 19, 21, 23, 24, 25},    convertPad,                       "Pad.cpp"},
    {"Pow",                      {7, 12, 13, 15},                        convertPow,                       "Elementwise.cpp"},
    {"Pow",                      {1},                                    convertPow1,                      "Legacy.cpp"},
    {"PRelu",                    {7, 9, 16},                             convertPRelu,                     "Elementwise.cpp"},
    {"PRelu",                    {1, 6},                                 convertPRelu1,                    "Legacy.cpp"},
    {"QLinearConv",              {10},                                   convertQLinearConv,               "Quantize.cpp"},
    {"QLinearMatMul",            {10, 21},                               convertQLinearMatMul,             "Quantize.cpp"},
    {"QuantizeLinear",           {10, 13, 19, 21, 23, 24, 25},           convertQuantizeLinear,            "Quantize.cpp"},
    {"RandomNormal",             {1, 22},                                convertRandomNormal,              "Random.cpp"},
    {"RandomNormalLike",         {1, 22},                                convertRandomNormalLike,          "Random.cpp"},
    {"RandomUniform",            {1, 22},                                convertRandomUniform,             "Random.cpp"},
    {"RandomUniformLike",        {1, 22},                                convertRandomUniformLike,         "Random.cpp"},
    {"Range",                    {11, 27},                               convertRange,                     "Generators.cpp"},
    {"Reciprocal",               {6, 13},                                convertReciprocal,                "Elementwise.cpp"},
    {"ReduceL1",                 {1, 11, 13, 18},                        convertReduceL1,                  "Reduce.cpp"},
    {"ReduceL2",                 {1, 11, 13, 18},                        convertReduceL2,                  "Reduce.cpp"},
    {"ReduceLogSum",             {1, 11, 13, 18},                        convertReduceLogSum,              "Reduce.cpp"},
    {"ReduceLogSumExp",          {1, 11, 13, 18},                        convertReduceLogSumExp,           "Reduce.cpp"},
    {"ReduceMax",                {1, 11, 12, 13, 18, 20},                convertReduceMax,                 "Reduce.cpp"},
    {"ReduceMean",               {1, 11, 13, 18},                        convertReduceMean,                "Reduce.cpp"},
    {"ReduceMin",                {1, 11, 12, 13, 18, 20},                convertReduceMin,                 "Reduce.cpp"},
    {"ReduceProd",               {1, 11, 13, 18},                        convertReduceProd,                "Reduce.cpp"},
    {"ReduceSum",                {1, 11, 13},                            convertReduceSum,                 "Reduce.cpp"},
    {"ReduceSumSquare",          {1, 11, 13, 18},                        convertReduceSumSquare,           "Reduce.cpp"},
    {"Relu",                     {6, 13, 14},                            convertRelu,                      "Elementwise.cpp"},
    {"Reshape",                  {1, 5, 13, 14, 19, 21, 23, 24, 25},     convertReshape,                   "Shape.cpp"},
    {"Resize",                   {10, 11, 13, 18, 19},                   convertResize,                    "Resize.cpp"},
    {"ReverseSequence",          {10},                                   convertReverseSequence,           "Slice.cpp"},
    {"RMSNormalization",         {23},                                   convertRMSNormalization,          "Normalization.cpp"},
    {"RNN",                      {7, 14, 22},                            convertRNN,                       "Recurrent.cpp"},
    {"RoiAlign",                 {10, 16, 22},                           convertRoiAlign,                  "GridSample.cpp"},
    {"RotaryEmbedding",          {23},                                   convertRotaryEmbedding,           "Attention.cpp"},
    {"Round",                    {11, 22},                               convertRound,                     "Elementwise.cpp"},
    {"Scan",                     {8, 9, 11, 16, 19, 21, 23, 24, 25},     nullptr,                          "ControlFlow.cpp"},
    // Scatter is ScatterElements without a reduction (deprecated in opset 11).
    {"Scatter",                  {9, 11},                                convertScatterElements,           "Scatter.cpp"},
    {"ScatterElements",          {11, 13, 16, 18},                       convertScatterElements,           "Scatter.cpp"},
    {"ScatterND",                {11, 13, 16, 18},                       convertScatterND,                 "Scatter.cpp"},
    {"Selu",                     {6, 22},                                convertSelu,                      "Elementwise.cpp"},
    {"SequenceAt",               {11},                                   nullptr,                          "Sequences.cpp"},
    {"SequenceConstruct",        {11},                                   nullptr,                          "Sequences.cpp"},
    {"SequenceEmpty",            {11},                                   nullptr,                          "Sequences.cpp"},
    {"SequenceErase",            {11},                                   nullptr,                          "Sequences.cpp"},
    {"SequenceInsert",           {11},                                   nullptr,                          "Sequences.cpp"},
    {"SequenceLength",           {11},                                   nullptr,                          "Sequences.cpp"},
    {"SequenceMap",              {17},                                   nullptr,                          "Sequences.cpp"},
    {"Shape",                    {1, 13, 15, 19, 21, 23, 24, 25},        convertShape,                     "Shape.cpp"},
    {"Shrink",                   {9},                                    convertShrink,                    "Elementwise.cpp"},
    {"Sigmoid",                  {6, 13},                                convertSigmoid,                   "Elementwise.cpp"},
    {"Sign",                     {9, 13},                                convertSign,                      "Elementwise.cpp"},
    {"Sin",                      {7, 22},                                convertSin,                       "Elementwise.cpp"},
    {"Sinh",                     {9, 22},                                convertSinh,                      "Elementwise.cpp"},
    {"Size",                     {1, 13, 19, 21, 23, 24, 25},            convertSize,                      "Shape.cpp"},
    {"Slice",                    {1, 10, 11, 13},                        convertSlice,                     "Slice.cpp"},
    {"Softmax",                  {1, 11, 13},                            convertSoftmax,                   "Softmax.cpp"},
    {"SoftmaxCrossEntropyLoss",  {12, 13},                               convertSoftmaxCrossEntropyLoss,   "Loss.cpp"},
    {"Softplus",                 {1, 22},                                convertSoftplus,                  "Elementwise.cpp"},
    {"Softsign",                 {1, 22},                                convertSoftsign,                  "Elementwise.cpp"},
    {"SpaceToDepth",             {1, 13},                                convertSpaceToDepth,              "Shape.cpp"},
    {"Split",                    {2, 11, 13, 18},                        convertSplit,                     "Slice.cpp"},
    {"SplitToSequence",          {11, 24},                               nullptr,                          "Sequences.cpp"},
    {"Sqrt",                     {6, 13},                                convertSqrt,                      "Elementwise.cpp"},
    {"Squeeze",                  {1, 11, 13, 21, 23, 24, 25},            convertSqueeze,                   "Shape.cpp"},
    {"STFT",                     {17},                                   convertSTFT,                      "Signal.cpp"},
    {"Sub",                      {7, 13, 14},                            convertSub,                       "Elementwise.cpp"},
    {"Sub",                      {1, 6},                                 convertSub1,                      "Legacy.cpp"},
    {"Sum",                      {8, 13},                                convertSum,                       "Elementwise.cpp"},
    {"Sum",                      {6},                                    convertSum6,                      "Legacy.cpp"},
    {"SwiGLU",                   {28},                                   convertSwiGLU,                    "Swish.cpp"},
    {"Swish",                    {24},                                   convertSwish,                     "Swish.cpp"},
    {"Tan",                      {7, 22},                                convertTan,                       "Elementwise.cpp"},
    {"Tanh",                     {6, 13},                                convertTanh,                      "Elementwise.cpp"},
    {"TensorScatter",            {24},                                   convertTensorScatter,             "Scatter.cpp"},
    {"TfIdfVectorizer",          {9},                                    convertTfIdfVectorizer,           "TfIdf.cpp"},
    {"ThresholdedRelu",          {10, 22},                               convertThresholdedRelu,           "Elementwise.cpp"},
    {"Tile",                     {6, 13},                                convertTile,                      "Shape.cpp"},
    {"TopK",                     {1, 10, 11, 24},                        convertTopK,                      "Select.cpp"},
    {"Transpose",                {1, 13, 21, 23, 24, 25},                convertTranspose,                 "Shape.cpp"},
    {"Trilu",                    {14},                                   convertTrilu,                     "Elementwise.cpp"},
    {"Unique",                   {11},                                   convertUnique,                    "Select.cpp"},
    {"Unsqueeze",                {1, 11, 13, 21, 23, 24, 25},            convertUnsqueeze,                 "Shape.cpp"},
    {"Upsample",                 {7, 9},                                 convertUpsample,                  "Resize.cpp"},
    {"Where",                    {9, 16},                                convertWhere,                     "Elementwise.cpp"},
    {"Xor",                      {7},                                    convertXor,                       "Elementwise.cpp"},

    // ai.onnx.preview.training
    {"Adagrad",                  {1},                                    convertAdagrad,                   "Training.cpp", kTraining},
    {"Adam",                     {1},                                    convertAdam,                      "Training.cpp", kTraining},
    {"Momentum",                 {1},                                    convertMomentum,                  "Training.cpp", kTraining},

    // com.microsoft: ONNX Runtime's contrib ops, version 1: those its
    // transformer optimizer writes, and its QOperator quantization.
    // LayerNormalization and SimplifiedLayerNormalization are registered by
    // ONNX Runtime in the default domain, where opsets before 17 define no
    // LayerNormalization and none defines SimplifiedLayerNormalization: the
    // pass takes a default-domain node of an op its opset does not define
    // from these rows.
    {"Attention",                {1},                                    convertMsAttention,               "MsAttention.cpp", kMicrosoft},
    {"BiasAdd",                  {1},                                    convertBiasAdd,                   "Microsoft.cpp", kMicrosoft},
    {"BiasGelu",                 {1},                                    convertBiasGelu,                  "Microsoft.cpp", kMicrosoft},
    {"EmbedLayerNormalization",  {1},                                    convertEmbedLayerNormalization,   "Microsoft.cpp", kMicrosoft},
    {"FastGelu",                 {1},                                    convertFastGelu,                  "Microsoft.cpp", kMicrosoft},
    {"FusedMatMul",              {1},                                    convertFusedMatMul,               "Microsoft.cpp", kMicrosoft},
    {"Gelu",                     {1},                                    convertMsGelu,                    "Microsoft.cpp", kMicrosoft},
    {"LayerNormalization",       {1},                                    convertLayerNormalization,        "Normalization.cpp", kMicrosoft},
    {"MatMulNBits",              {1},                                    convertMatMulNBits,               "Microsoft.cpp", kMicrosoft},
    {"QAttention",               {1},                                    convertQAttention,                "MsAttention.cpp", kMicrosoft},
    {"QGemm",                    {1},                                    convertQGemm,                     "Quantize.cpp", kMicrosoft},
    {"QLinearAdd",               {1},                                    convertQLinearAdd,                "Quantize.cpp", kMicrosoft},
    {"QLinearAveragePool",       {1},                                    convertQLinearAveragePool,        "Quantize.cpp", kMicrosoft},
    {"QLinearConcat",            {1},                                    convertQLinearConcat,             "Quantize.cpp", kMicrosoft},
    {"QLinearGlobalAveragePool", {1},                                    convertQLinearGlobalAveragePool,  "Quantize.cpp", kMicrosoft},
    {"QLinearLeakyRelu",         {1},                                    convertQLinearLeakyRelu,          "Quantize.cpp", kMicrosoft},
    {"QLinearMul",               {1},                                    convertQLinearMul,                "Quantize.cpp", kMicrosoft},
    {"QLinearSigmoid",           {1},                                    convertQLinearSigmoid,            "Quantize.cpp", kMicrosoft},
    {"QLinearSoftmax",           {1},                                    convertQLinearSoftmax,            "Quantize.cpp", kMicrosoft},
    {"QuickGelu",                {1},                                    convertQuickGelu,                 "Microsoft.cpp", kMicrosoft},
    {"SimplifiedLayerNormalization", {1},                                convertSimplifiedLayerNormalization, "Normalization.cpp", kMicrosoft},
    {"SkipLayerNormalization",   {1},                                    convertSkipLayerNormalization,    "Microsoft.cpp", kMicrosoft},
    {"SkipSimplifiedLayerNormalization", {1},                            convertSkipSimplifiedLayerNormalization, "Microsoft.cpp", kMicrosoft},
};
// clang-format on
} // namespace

ArrayRef<OnnxOpRow> mlir::kiln::onnxOpTable() { return kOnnxOps; }

namespace {
const OnnxSpecVersion kSpecVersions[] = {
#include "OnnxVersions.inc"
};
} // namespace

ArrayRef<OnnxSpecVersion> mlir::kiln::onnxSpecVersions() {
  return kSpecVersions;
}

const OnnxSpecVersion *mlir::kiln::onnxSpecVersion(StringRef domain,
                                                   StringRef opType,
                                                   int64_t opset) {
  const OnnxSpecVersion *found = nullptr;
  for (const OnnxSpecVersion &v : kSpecVersions)
    if (domain == v.domain && opType == v.opType && v.since <= opset)
      found = &v; // ascending
  return found;
}
