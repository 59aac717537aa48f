//===- SafeInference.h - ONNX's shape inference, crash-proof ----*- C++ -*-===//
//
// Part of the ONNX importer: ONNX's own shape inference run on a model that
// may be malformed, without letting that library's crashes end the caller.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_IMPORT_ONNX_SAFEINFERENCE_H
#define KILN_LIB_IMPORT_ONNX_SAFEINFERENCE_H

#include <onnx/onnx_pb.h>

namespace mlir::kiln {
/// Runs ONNX's shape inference on `model` (types and shapes added as
/// value_info; its errors ignored), with data propagation where that
/// survives the model. ONNX 1.12's data propagators crash on some malformed
/// graphs (a Resize whose scales do not match its input's rank followed by a
/// Shape: SIGSEGV), so the inference first runs in a forked child; where the
/// child dies, it runs without data propagation, or not at all. Returns
/// false when it did not run. A valid model takes the inference as before.
bool inferShapesSafely(::onnx::ModelProto &model);
} // namespace mlir::kiln

#endif // KILN_LIB_IMPORT_ONNX_SAFEINFERENCE_H
