//===- ChannelInvariance.cpp - per-channel values of a generic body -------===//
#include "kiln/Codegen/Common/ChannelInvariance.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

bool mlir::kiln::isPerChannel(linalg::GenericOp g, Value v,
                              llvm::DenseMap<Value, bool> &memo) {
  auto it = memo.find(v);
  if (it != memo.end())
    return it->second;
  Block &body = g.getRegion().front();
  bool result;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    unsigned channels = g.getNumLoops() - 1;
    result = arg.getOwner() == &body &&
             arg.getArgNumber() < g.getNumDpsInputs() &&
             llvm::all_of(
                 g.getIndexingMapsArray()[arg.getArgNumber()].getResults(),
                 [&](AffineExpr e) {
                   auto d = dyn_cast<AffineDimExpr>(e);
                   return d && d.getPosition() == channels;
                 });
  } else if (v.getParentBlock() != &body) {
    result = true; // defined outside the body: the same everywhere
  } else {
    Operation *def = v.getDefiningOp();
    result = def->getNumRegions() == 0 && isMemoryEffectFree(def) &&
             llvm::all_of(def->getOperands(), [&](Value o) {
               return isPerChannel(g, o, memo);
             });
  }
  memo[v] = result;
  return result;
}

std::optional<double> mlir::kiln::floatConstant(Value v) {
  FloatAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  return attr.getValueAsDouble();
}
