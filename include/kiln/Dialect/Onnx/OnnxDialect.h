//===- OnnxDialect.h - the ONNX import dialect ------------------*- C++ -*-===//
#ifndef KILN_DIALECT_ONNX_ONNXDIALECT_H
#define KILN_DIALECT_ONNX_ONNXDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kiln/Dialect/Onnx/OnnxOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "kiln/Dialect/Onnx/OnnxOps.h.inc"

#endif
