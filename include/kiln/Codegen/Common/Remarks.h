//===- Remarks.h - why code generation left an op off its fast path -*- C++ -*-===//
//
// When a code generation pass cannot apply its strategy to an op (it cannot
// tile it, vectorize it, or give it a kernel), the op still compiles through
// a slower path. remarkMissed says so: as an MLIR "missed" optimization
// remark (kiln-compile --remarks lists them; kiln-opt shows them with
// --remarks-filter-missed=<pass>) and, under --debug-only=<pass>, on stderr.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_COMMON_REMARKS_H
#define KILN_CODEGEN_COMMON_REMARKS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>
#include <vector>

namespace mlir::kiln {

/// `op` did not take `what` (a short name: "vectorize", "vnni-kernel") in
/// pass `pass` ("kiln-cpu-tile-and-vectorize") because of `why`.
void remarkMissed(Operation *op, llvm::StringRef pass, llvm::StringRef what,
                  const llvm::Twine &why);

/// --debug-only: the passes whose decisions are printed to stderr. Debian's
/// LLVM, built without assertions, has no -debug-only of its own, so the
/// tools register this one when LLVM does not (registerDebugOnlyOption,
/// before parsing the command line).
void registerDebugOnlyOption();
bool isDebugEnabled(llvm::StringRef pass);

/// Prints `text` under --debug-only=`pass`, prefixed with the pass name.
void debugLog(llvm::StringRef pass, const llvm::Twine &text);

} // namespace mlir::kiln

#endif
