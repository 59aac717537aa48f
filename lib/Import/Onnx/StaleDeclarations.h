//===- StaleDeclarations.h - declared shapes the graph contradicts -*- C++
//-*-===//
//
// Part of the ONNX importer: value_info and output shapes that tools and
// exporters leave behind where the graph computes others.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_IMPORT_ONNX_STALEDECLARATIONS_H
#define KILN_LIB_IMPORT_ONNX_STALEDECLARATIONS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <onnx/onnx_pb.h>

namespace mlir::kiln {
/// Drops the value_info of `model`'s graph (and, with symbolic inputs or
/// `sizesGiven`, of its subgraphs) whose declared shape contradicts what the
/// graph computes, and gives each output (of the graph or a subgraph) that
/// declares a fixed size where the graph computes another the computed
/// one. Calls `remark(name, message)` for each repair. Runs before ONNX's
/// inference types the import (StaleDeclarations.cpp says why).
void dropStaleDeclarations(
    ::onnx::ModelProto &model, bool sizesGiven,
    llvm::function_ref<void(llvm::StringRef, llvm::StringRef)> remark);
} // namespace mlir::kiln

#endif // KILN_LIB_IMPORT_ONNX_STALEDECLARATIONS_H
