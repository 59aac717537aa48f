//===- Conv.h - convolution and pooling windows -----------------*- C++ -*-===//
//
// Shared by Conv.cpp, Pooling.cpp, ConvTranspose.cpp and Quantize.cpp (the
// integer convolutions).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CONVERSION_ONNXTOKILN_CONV_H
#define KILN_LIB_CONVERSION_ONNXTOKILN_CONV_H

#include "Build.h"

namespace mlir::kiln {

/// Window attributes of a Conv or pooling node, in 2-D form.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
  bool oneD = false; ///< a 1-D window lifted to 2-D with a unit height
};

/// Reads kernel/strides/dilations/pads for an input of rank 3 (1-D) or 4
/// (2-D); 1-D windows become 2-D windows of height 1. A convolution's
/// channels size its filter and must be static (`staticChannels`); a
/// pooling's may be symbolic. With the input `value`, a window that no
/// run-time size in range fits is refused too.
FailureOr<Window> readWindow(OnnxNode &node, RankedTensorType input,
                             SmallVector<int64_t> kernel,
                             bool staticChannels = true, Value value = {});
/// [N, C, W] -> [N, C, 1, W] for 1-D windows.
FailureOr<Value> liftTo2D(OnnxNode &node, Value v);
/// [N, C, 1, W] -> [N, C, W]: back from liftTo2D.
FailureOr<Value> lowerTo1D(OnnxNode &node, FailureOr<Value> v);

/// kiln.conv2d from a Conv-like node's attributes (kernel_shape, strides,
/// dilations, pads, auto_pad, group; 1-D lifted to 2-D) on the given
/// operands: Conv itself, ConvInteger and QLinearConv.
FailureOr<Value> buildConv(OnnxNode &node, Value x, Value w, Value bias);

/// Depth tap `k` of a constant 3-D filter [A, B, KD, KH, KW]: the
/// [A, B, KH, KW] plane (ConvTranspose.cpp; 3-D Conv uses it too).
DenseElementsAttr depthTap(DenseElementsAttr w, int64_t k);

} // namespace mlir::kiln

#endif
