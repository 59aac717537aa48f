//===- Remarks.cpp - why code generation left an op off its fast path -*- C++ -*-===//
#include "kiln/Codegen/Common/Remarks.h"

#include "mlir/IR/Remarks.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

using namespace mlir;

namespace {
/// The passes named by --debug-only, when Kiln registered the option.
std::unique_ptr<llvm::cl::list<std::string>> &debugOnly() {
  static std::unique_ptr<llvm::cl::list<std::string>> option;
  return option;
}

/// The op as a user knows it: its ONNX node's name, when it has one.
std::string describe(Operation *op) {
  std::string name;
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      if (isa<NameLoc>(l)) {
        loc = l;
        break;
      }
  if (auto named = dyn_cast<NameLoc>(loc))
    name = "node '" + named.getName().str() + "' ";
  return name + "(" + op->getName().getStringRef().str() + ")";
}
} // namespace

void kiln::registerDebugOnlyOption() {
  if (debugOnly() || llvm::cl::getRegisteredOptions().count("debug-only"))
    return;
  debugOnly() = std::make_unique<llvm::cl::list<std::string>>(
      "debug-only", llvm::cl::CommaSeparated,
      llvm::cl::desc("Print the decisions of these passes to stderr, e.g. "
                     "--debug-only=kiln-cpu-tile-and-vectorize"),
      llvm::cl::value_desc("pass,..."));
}

bool kiln::isDebugEnabled(llvm::StringRef pass) {
  return debugOnly() && llvm::is_contained(*debugOnly(), pass.str());
}

void kiln::debugLog(llvm::StringRef pass, const llvm::Twine &text) {
  if (isDebugEnabled(pass))
    llvm::dbgs() << "[" << pass << "] " << text << "\n";
}

void kiln::remarkMissed(Operation *op, llvm::StringRef pass,
                        llvm::StringRef what, const llvm::Twine &why) {
  std::string reason = why.str();
  debugLog(pass, describe(op) + ": no " + what + ": " + reason);
  remark::missed(op->getLoc(), remark::RemarkOpts::name(what).category(pass))
      << remark::reason("{0}: {1}", op->getName().getStringRef().str(),
                        reason);
}
