//===- OnnxToKiln.h - the ONNX op table -------------------------*- C++ -*-===//
#ifndef KILN_CONVERSION_ONNXTOKILN_ONNXTOKILN_H
#define KILN_CONVERSION_ONNXTOKILN_ONNXTOKILN_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <optional>
#include <string>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace mlir::kiln {

/// What a conversion function sees of one ONNX node: its operands, attributes
/// and opset, a builder positioned at the node, and a way to fail that names
/// the node, the op type and the opset.
class OnnxNode {
public:
  OnnxNode(Operation *op, OpBuilder &builder, int64_t opset)
      : op(op), builder(builder), opset(opset) {}

  Operation *op;
  OpBuilder &builder;
  int64_t opset;

  Location loc() const { return op->getLoc(); }
  llvm::StringRef opType() const;
  std::string describe() const; ///< "node 'n' (Conv, opset 13)"

  /// Operand `i`, or null when absent or omitted (an empty ONNX input name).
  Value input(unsigned i) const;
  unsigned numInputs() const { return op->getNumOperands(); }
  /// Operand `i` as a ranked tensor; fails (with a diagnostic) otherwise.
  FailureOr<Value> rankedInput(unsigned i);
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

/// A conversion returns the values that replace the node's results, one per
/// result (null for results nobody uses).
using OnnxConversionFn =
    std::function<FailureOr<SmallVector<Value>>(OnnxNode &)>;

struct OnnxConversion {
  const char *opType;
  int64_t sinceVersion;
  OnnxConversionFn convert;
};

/// Fills `table` with every conversion Kiln knows, family by family.
void populateElementwiseConversions(std::vector<OnnxConversion> &table);
void populateNNConversions(std::vector<OnnxConversion> &table);
void populateTensorConversions(std::vector<OnnxConversion> &table);
void populateLossConversions(std::vector<OnnxConversion> &table);
void populateSignalConversions(std::vector<OnnxConversion> &table);
void populateTfIdfConversions(std::vector<OnnxConversion> &table);
void populateLegacyConversions(std::vector<OnnxConversion> &table);
void populateQuantizeConversions(std::vector<OnnxConversion> &table);
void populateShapeInputConversions(std::vector<OnnxConversion> &table);
void populateIndexingConversions(std::vector<OnnxConversion> &table);
/// Ops of the ai.onnx.preview.training domain, keyed "<domain>.<OpType>".
void populateTrainingConversions(std::vector<OnnxConversion> &table);

/// Rewrites ONNX If, Loop and Scan nodes of `func` (imported with their
/// subgraphs as regions) into straight-line onnx ops: If selects between both
/// inlined branches, Scan and Loop are unrolled to their static trip counts.
/// Nodes that cannot be rewritten are reported and added to `failedOps`;
/// returns false if there were any. `opsets` maps domains to versions.
bool inlineOnnxControlFlow(func::FuncOp func,
                           const llvm::StringMap<int64_t> &opsets,
                           llvm::DenseSet<Operation *> &failedOps);

/// Normalizes an ONNX axis (negative counts from the end) into [0, rank);
/// failure when out of range.
FailureOr<int64_t> normalizeAxis(OnnxNode &node, int64_t axis, int64_t rank);

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
