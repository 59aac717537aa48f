//===- KilnDialect.cpp - the Kiln graph dialect -----------------*- C++ -*-===//
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"


using namespace mlir;
using namespace mlir::kiln;

#include "kiln/Dialect/Kiln/IR/KilnOpsDialect.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/Kiln/IR/KilnOps.cpp.inc"
      >();
}

Operation *KilnDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

//===----------------------------------------------------------------------===//
// The contract attributes (Contract.h)
//===----------------------------------------------------------------------===//

namespace {
/// The kinds of value a contract attribute carries.
enum class ContractKind {
  Unknown,
  Unit,
  Integer,
  String,
  StringArray,   ///< array of strings
  RangeArray,    ///< array of array<f32: lo, hi>
  DictArray,     ///< array of dictionaries
  I64Array,      ///< dense i64 array
};

ContractKind contractKind(StringRef name) {
  static const std::pair<const char *, ContractKind> kinds[] = {
      {kModelHashAttr, ContractKind::String},
      {kKeepFp32Attr, ContractKind::StringArray},
      {kKeepFp32BudgetAttr, ContractKind::StringArray},
      {kActivationRangesAttr, ContractKind::RangeArray},
      {kObservedNodesAttr, ContractKind::StringArray},
      {kFp16NodeAttr, ContractKind::Unit},
      {kBf16InputAttr, ContractKind::Unit},
      {kInt8MatmulAttr, ContractKind::Unit},
      {kInt8EpilogueAttr, ContractKind::Unit},
      {kInt8DepthwiseAttr, ContractKind::Integer},
      {kLanePartialsAttr, ContractKind::Unit},
      {kBf16MatmulAttr, ContractKind::Unit},
      {kRequantAttr, ContractKind::Unit},
      {kUnreadPaddingAttr, ContractKind::Unit},
      {kMinMaxPartialsAttr, ContractKind::Unit},
      {kMinMaxCombineAttr, ContractKind::Unit},
      {kMinMaxRestAttr, ContractKind::Unit},
      {kGuardMessageAttr, ContractKind::String},
      {kBatchProbeAttr, ContractKind::Integer},
      {kFixedSymbolAttr, ContractKind::String},
      {kFixedSizeAttr, ContractKind::Integer},
      {kAmxInt8MatmulAttr, ContractKind::Unit},
      {kAmxEpilogueAttr, ContractKind::Unit},
      {kFillBorderAttr, ContractKind::I64Array},
      {kOverwrittenOutsAttr, ContractKind::Unit},
      {kPackedRhsAttr, ContractKind::Unit},
      {kDistinctEmptyAttr, ContractKind::Integer},
      {kDistinctFillAttr, ContractKind::Integer},
      {kFibersAttr, ContractKind::Unit},
      {kParallelIfAttr, ContractKind::Integer},
      {kArenaBytesAttr, ContractKind::Integer},
      {kArenaLowerBoundAttr, ContractKind::Integer},
      {kMemoryPlanAttr, ContractKind::DictArray},
      {kGuardMessagesAttr, ContractKind::StringArray},
      {kArenaArgAttr, ContractKind::Unit},
      {kSymbolBoundsAttr, ContractKind::I64Array},
      {kSymbolsAttr, ContractKind::I64Array},
      {kOutputSymbolsAttr, ContractKind::I64Array},
      {kOutputBoundsAttr, ContractKind::I64Array},
      {kDimsArgAttr, ContractKind::Unit},
      {kWeightsArgAttr, ContractKind::Unit},
      {kGraphLoopAttr, ContractKind::Unit},
      {kOnnxNodeAttr, ContractKind::String},
  };
  for (const auto &[n, kind] : kinds)
    if (name == n)
      return kind;
  return ContractKind::Unknown;
}

bool hasKind(Attribute value, ContractKind kind) {
  auto arrayOf = [&](auto isElement) {
    auto array = dyn_cast<ArrayAttr>(value);
    return array && llvm::all_of(array, isElement);
  };
  switch (kind) {
  case ContractKind::Unknown:
    return false;
  case ContractKind::Unit:
    return isa<UnitAttr>(value);
  case ContractKind::Integer:
    return isa<IntegerAttr>(value);
  case ContractKind::String:
    return isa<StringAttr>(value);
  case ContractKind::StringArray:
    return arrayOf([](Attribute a) { return isa<StringAttr>(a); });
  case ContractKind::RangeArray:
    return arrayOf([](Attribute a) {
      auto range = dyn_cast<DenseF32ArrayAttr>(a);
      return range && range.size() == 2;
    });
  case ContractKind::DictArray:
    return arrayOf([](Attribute a) { return isa<DictionaryAttr>(a); });
  case ContractKind::I64Array:
    return isa<DenseI64ArrayAttr>(value);
  }
  return false;
}

LogicalResult verifyContractAttr(function_ref<InFlightDiagnostic()> emitError,
                                 NamedAttribute attr) {
  ContractKind kind = contractKind(attr.getName().getValue());
  if (kind == ContractKind::Unknown)
    return emitError() << "unknown Kiln attribute '" << attr.getName().getValue()
                       << "' (every kiln.* attribute is declared in "
                          "kiln/Dialect/Kiln/IR/Contract.h)";
  if (!hasKind(attr.getValue(), kind))
    return emitError() << "Kiln attribute '" << attr.getName().getValue()
                       << "' has a value of the wrong kind: "
                       << attr.getValue();
  return success();
}
} // namespace

LogicalResult KilnDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  return verifyContractAttr([&] { return op->emitOpError(); }, attr);
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned,
                                                    NamedAttribute attr) {
  return verifyContractAttr([&] { return op->emitOpError(); }, attr);
}

LogicalResult KilnDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                       unsigned,
                                                       NamedAttribute attr) {
  return verifyContractAttr([&] { return op->emitOpError(); }, attr);
}
