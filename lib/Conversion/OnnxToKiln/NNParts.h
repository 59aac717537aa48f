//===- NNParts.h - shared by the neural-network conversions ----*- C++ -*-===//
#ifndef KILN_LIB_CONVERSION_ONNXTOKILN_NNPARTS_H
#define KILN_LIB_CONVERSION_ONNXTOKILN_NNPARTS_H

#include "kiln/Conversion/OnnxToKiln/OnnxToKiln.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <vector>

namespace mlir::kiln {
/// Depth tap `k` of a constant 3-D filter [A, B, KD, KH, KW]: the
/// [A, B, KH, KW] plane (ConvTranspose.cpp; 3-D Conv uses it too).
DenseElementsAttr depthTap(DenseElementsAttr w, int64_t k);
} // namespace mlir::kiln

#endif
