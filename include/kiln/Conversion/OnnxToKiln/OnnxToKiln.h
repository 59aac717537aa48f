//===- OnnxToKiln.h - the ONNX op table -------------------------*- C++ -*-===//
#ifndef KILN_CONVERSION_ONNXTOKILN_ONNXTOKILN_H
#define KILN_CONVERSION_ONNXTOKILN_ONNXTOKILN_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <optional>
#include <string>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace mlir::kiln {

/// What a conversion function sees of one ONNX node: its operands, attributes
/// and opset, a builder positioned at the node, and a way to fail that names
/// the node, the op type and the opset.
class SymbolicSizes;

class OnnxNode {
public:
  OnnxNode(Operation *op, OpBuilder &builder, int64_t opset)
      : op(op), builder(builder), opset(opset) {}

  Operation *op;
  OpBuilder &builder;
  int64_t opset;
  /// The symbolic sizes of the function being converted (null where a
  /// conversion runs outside the pass, e.g. inside inlined control flow).
  SymbolicSizes *sizes = nullptr;

  Location loc() const { return op->getLoc(); }
  llvm::StringRef opType() const;
  std::string describe() const; ///< "node 'n' (Conv, opset 13)"

  /// Operand `i`, or null when absent or omitted (an empty ONNX input name).
  Value input(unsigned i) const;
  unsigned numInputs() const { return op->getNumOperands(); }
  /// Operand `i` as a ranked tensor; fails (with a diagnostic) otherwise.
  FailureOr<Value> rankedInput(unsigned i);
  /// Operand `i` as a ranked tensor of static shape; fails (with a
  /// diagnostic) otherwise.
  FailureOr<Value> staticInput(unsigned i);
  /// Fails with "input shape T is not static" unless `type` is static.
  LogicalResult requireStaticShape(RankedTensorType type);
  /// Whether result `i` has any use.
  bool resultUsed(unsigned i) const;

  bool hasAttr(llvm::StringRef name) const { return (bool)op->getAttr(name); }
  int64_t intAttr(llvm::StringRef name, int64_t dflt) const;
  float floatAttr(llvm::StringRef name, float dflt) const;
  std::string strAttr(llvm::StringRef name, llvm::StringRef dflt) const;
  std::optional<SmallVector<int64_t>> intsAttr(llvm::StringRef name) const;

  /// The value of operand `i` if it is a compile-time constant.
  std::optional<DenseElementsAttr> constantInput(unsigned i) const;
  /// Operand `i` as a constant list of integers (shapes, axes, pads).
  std::optional<SmallVector<int64_t>> constantInts(unsigned i) const;
  /// Operand `i` as a constant scalar float (Clip's min/max).
  std::optional<double> constantScalar(unsigned i) const;

  /// Emits "node '..' (T, opset N): <msg>" and returns failure.
  InFlightDiagnostic fail();

private:
};

/// A converter returns the values that replace the node's results, one per
/// result (null for results nobody uses), or fails after a diagnostic.
using OnnxConverter = FailureOr<SmallVector<Value>>(OnnxNode &node);

/// One row of the ONNX op table (lib/Conversion/OnnxToKiln/OpTable.cpp): the
/// since-versions of an op type that one converter handles.
struct OnnxOpRow {
  const char *opType;
  /// Ascending; the unused entries are 0.
  std::array<int64_t, 12> since;
  /// Null for If, Loop and Scan, which inlineOnnxControlFlow rewrites when
  /// the conversion reaches them.
  OnnxConverter *convert;
  /// The file under lib/Conversion/OnnxToKiln/ that defines `convert`.
  const char *file;
  /// "" for the default domain, ai.onnx.
  const char *domain = "";

  /// The since-versions without the unused entries.
  ArrayRef<int64_t> versions() const {
    return ArrayRef<int64_t>(since).take_while([](int64_t v) { return v > 0; });
  }
};

/// Every op Kiln converts, sorted by domain and op type.
ArrayRef<OnnxOpRow> onnxOpTable();

/// One version of an ONNX operator as ONNX 1.23 defines it (generated from
/// its Changelog into lib/Conversion/OnnxToKiln/OnnxVersions.inc).
struct OnnxSpecVersion {
  const char *domain; ///< "" for ai.onnx
  const char *opType;
  int64_t since;
  bool deprecated;
};

/// Every (domain, op type, since-version) of ONNX 1.23, sorted by domain, op
/// type and version.
ArrayRef<OnnxSpecVersion> onnxSpecVersions();

/// The version of `opType` that opset `opset` of `domain` means: the one
/// with the largest since-version of ONNX 1.23 not above `opset`; null when
/// ONNX 1.23 does not define the op in that domain at or below that opset.
const OnnxSpecVersion *onnxSpecVersion(StringRef domain, StringRef opType,
                                       int64_t opset);

/// Refuses an attribute that ONNX defines as a 0/1 flag (keepdims,
/// transB, ceil_mode, ...) holding another integer: ONNX's inference reads
/// `== 1`, the converters `!= 0`, so the two would disagree on the shape.
LogicalResult refuseNonBinaryFlags(OnnxNode &node);

/// Whether `op` is an ONNX If, Loop or Scan with its subgraphs as regions.
bool isOnnxControlFlow(Operation *op);

/// Rewrites the ONNX If, Loop or Scan `op` into straight-line onnx ops before
/// it (If inlines the taken branch when its condition is a constant, onnx or
/// already converted, else both, selected with Where; Scan and Loop unroll
/// to their static trip counts) and erases it. Returns false after a
/// diagnostic when it cannot. `opsets` maps domains to versions.
/// A Loop whose trip count is known only at run time (or too long to
/// unroll) becomes a kiln.loop instead, its body still in the onnx dialect:
/// the conversion converts that body next and then calls finishOnnxLoop.
bool inlineOnnxControlFlow(Operation *op,
                           const llvm::StringMap<int64_t> &opsets,
                           SymbolicSizes &sizes);

/// After the body of a kiln.loop made by inlineOnnxControlFlow is
/// converted: its onnx.Yield becomes a kiln.yield, the scan outputs get
/// their types, and loop-carried values that change type are reported.
LogicalResult finishOnnxLoop(Operation *loop, SymbolicSizes &sizes);

/// Normalizes an ONNX axis (negative counts from the end) into [0, rank);
/// failure when out of range.
FailureOr<int64_t> normalizeAxis(OnnxNode &node, int64_t axis, int64_t rank);
/// normalizeAxis of each of `axes`, in order.
FailureOr<SmallVector<int64_t>>
normalizeAxes(OnnxNode &node, ArrayRef<int64_t> axes, int64_t rank);

/// The `axis` attribute of a gather-like node over `data` (not a scalar),
/// normalized; constant indices (input 1) outside [-n, n) are reported here,
/// run-time ones are the op's to clamp.
FailureOr<int64_t> checkedGatherAxis(OnnxNode &node, Value data);

/// A static box of a tensor: kiln.slice's attributes, one entry per
/// dimension.
struct SliceBounds {
  SmallVector<int64_t> offsets, sizes, strides;
};

/// ONNX Slice's semantics on a static shape: `axes` default to 0..n-1 and
/// `steps` to 1; negative starts and ends count from the end; both then clamp
/// to [0, dim]. Negative steps are reported as unsupported.
FailureOr<SliceBounds> resolveSlice(OnnxNode &node, ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> starts,
                                    ArrayRef<int64_t> ends,
                                    std::optional<SmallVector<int64_t>> axes,
                                    std::optional<SmallVector<int64_t>> steps);

/// Explicit [top, left, bottom, right] pads for a 2-D window from ONNX's
/// auto_pad / pads attributes.
FailureOr<SmallVector<int64_t>>
resolvePads2D(OnnxNode &node, ArrayRef<int64_t> inputHW,
              ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
              ArrayRef<int64_t> dilations);

} // namespace mlir::kiln

#endif
