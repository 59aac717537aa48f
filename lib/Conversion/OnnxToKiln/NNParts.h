//===- NNParts.h - the neural-network conversion files ----------*- C++ -*-===//
//
// populateNNConversions (NN.cpp) pulls in the families that live in their
// own files.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CONVERSION_ONNXTOKILN_NNPARTS_H
#define KILN_LIB_CONVERSION_ONNXTOKILN_NNPARTS_H

#include "kiln/Conversion/OnnxToKiln/OnnxToKiln.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <vector>

namespace mlir::kiln {
/// Resize and Upsample (Resize.cpp).
void populateResizeConversions(std::vector<OnnxConversion> &table);
/// ConvTranspose (ConvTranspose.cpp).
void populateConvTransposeConversions(std::vector<OnnxConversion> &table);
/// RNN, GRU and LSTM unrolled over time (Recurrent.cpp).
void populateRecurrentConversions(std::vector<OnnxConversion> &table);
/// GridSample (GridSample.cpp).
void populateGridSampleConversions(std::vector<OnnxConversion> &table);
/// Normalizations, rearrangements and Einsum (NNMisc.cpp).
void populateNNMiscConversions(std::vector<OnnxConversion> &table);

/// Depth tap `k` of a constant 3-D filter [A, B, KD, KH, KW]: the
/// [A, B, KH, KW] plane (ConvTranspose.cpp; 3-D Conv uses it too).
DenseElementsAttr depthTap(DenseElementsAttr w, int64_t k);
} // namespace mlir::kiln

#endif
