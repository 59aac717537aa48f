//===- OnnxDialect.cpp - the ONNX import dialect ----------------*- C++ -*-===//
#include "kiln/Dialect/Onnx/OnnxDialect.h"

using namespace mlir;
using namespace mlir::kiln::onnx;

#include "kiln/Dialect/Onnx/OnnxOpsDialect.cpp.inc"

void OnnxDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/Onnx/OnnxOps.cpp.inc"
      >();
  // Every ONNX op type is imported generically as "onnx.<OpType>".
  allowUnknownOperations();
}

OpFoldResult InitializerOp::fold(FoldAdaptor) { return getValue(); }

#define GET_OP_CLASSES
#include "kiln/Dialect/Onnx/OnnxOps.cpp.inc"
