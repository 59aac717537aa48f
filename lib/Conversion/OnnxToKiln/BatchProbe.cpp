//===- BatchProbe.cpp - a batch size read as data ---------------*- C++ -*-===//
//
// proveBatchIndependence (lib/Pipeline/BatchVariants.cpp) converts the model
// at a probe batch size P (kBatchProbeAttr on the module). A model that reads
// its batch size as a value, not as a dimension, is not an independent batch:
// each batch variant would see its own size. The conversion keeps P from
// vanishing into a fold (min(P, 3) is 3) and reports a constant holding P
// that reaches an op as data.
//
//===----------------------------------------------------------------------===//
#include "Build.h"
#include "SymbolicSizes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include <functional>

using namespace mlir;
using namespace mlir::kiln;

/// Whether `value` is a small constant holding `probe` (an integer, or a
/// float of that whole value).
static bool holdsProbe(Attribute value, int64_t probe) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(value);
  if (!dense || dense.getNumElements() > SymbolicSizes::kMaxContents)
    return false;
  Type elt = dense.getElementType();
  if (elt.isInteger(64) || elt.isInteger(32))
    return llvm::any_of(dense.getValues<APInt>(), [&](const APInt &v) {
      return v.getSExtValue() == probe;
    });
  if (isa<FloatType>(elt))
    return llvm::any_of(dense.getValues<APFloat>(), [&](const APFloat &v) {
      return v.isExactlyValue((double)probe);
    });
  return false;
}

/// At a probe batch size (kBatchProbeAttr), a fold that computes a value
/// without the probe from an operand holding it (min(P, 3), P == 1) would
/// hide that the model reads its batch size; a selection (Shape(x)[1]) may
/// drop it.
bool mlir::kiln::hidesBatchProbe(Operation *op, Attribute folded) {
  auto module = op->getParentOfType<ModuleOp>();
  auto probe =
      module ? module->getAttrOfType<IntegerAttr>(kBatchProbeAttr) : nullptr;
  if (!probe || isa<GatherOp, SliceOp>(op) ||
      holdsProbe(folded, probe.getInt()))
    return false;
  return llvm::any_of(op->getOperands(), [&](Value v) {
    auto c = v.getDefiningOp<ConstantOp>();
    return c && holdsProbe(c.getValue(), probe.getInt());
  });
}

/// Whether a constant holding `probe` (the batch size of a probe compile,
/// kBatchProbeAttr) reaches an op as data, past the shape plumbing that
/// only carries sizes: the model reads its batch size as a value. Reported
/// at that op (named as its ONNX node by the caller).
bool mlir::kiln::readsBatchProbe(Operation *module, int64_t probe) {
  // The first op that takes `v` as data, following shape plumbing
  // (Concat, Gather, Slice, Reshape, integer Casts, and the index
  // arithmetic of run-time sizes) to its ends; guards only check.
  llvm::DenseSet<Value> seen;
  std::function<Operation *(Value)> dataUser = [&](Value v) -> Operation * {
    if (!seen.insert(v).second)
      return nullptr;
    for (Operation *u : v.getUsers()) {
      bool plumbing =
          isa<ConcatOp, GatherOp, SliceOp, ReshapeOp, IdentityOp>(u) ||
          (isa<CastOp>(u) &&
           isa<IntegerType>(typeOf(u->getResult(0)).getElementType())) ||
          !isa<KilnDialect>(u->getDialect());
      if (isa<GuardOp>(u))
        continue;
      if (!plumbing)
        return u;
      for (Value r : u->getResults())
        if (Operation *d = dataUser(r))
          return d;
    }
    return nullptr;
  };
  bool found = false;
  module->walk([&](kiln::ConstantOp c) {
    if (found || !holdsProbe(c.getValue(), probe))
      return;
    Operation *user = dataUser(c.getResult());
    if (!user)
      return;
    user->emitError() << "reads the batch size as a value (the probe size "
                      << probe
                      << " reaches it as data, not as a dimension): each "
                         "batch variant would see its own size";
    found = true;
  });
  return found;
}
