//===- NodeChecks.cpp - checks every node passes before conversion -------===//
//
// Attribute values that ONNX's inference and Kiln's converters would read
// differently are refused before any converter runs.
//
//===----------------------------------------------------------------------===//
#include "kiln/Conversion/OnnxToKiln/OnnxToKiln.h"

using namespace mlir;
using namespace mlir::kiln;

LogicalResult mlir::kiln::refuseNonBinaryFlags(OnnxNode &node) {
  static const char *const kFlags[] = {"keepdims",
                                       "noop_with_empty_axes",
                                       "select_last_index",
                                       "largest",
                                       "sorted",
                                       "ceil_mode",
                                       "count_include_pad",
                                       "transA",
                                       "transB",
                                       "reverse",
                                       "exclusive",
                                       "training_mode",
                                       "align_corners",
                                       "center_point_box",
                                       "detect_negative",
                                       "detect_positive",
                                       "onesided",
                                       "inverse",
                                       "upper",
                                       "input_forget",
                                       "storage_order",
                                       "linear_before_reset",
                                       "exclude_outside"};
  for (const char *name : kFlags) {
    auto a = node.op->getAttrOfType<IntegerAttr>(name);
    if (!a)
      continue;
    int64_t v = a.getValue().getSExtValue();
    if (v != 0 && v != 1) {
      node.fail() << name << " must be 0 or 1, got " << v;
      return failure();
    }
  }
  return success();
}
