//===- Bitwise.cpp - ONNX bitwise ops ---------------------------*- C++ -*-===//
//
// BitwiseAnd, BitwiseOr, BitwiseXor and BitwiseNot, on the kiln ops that also
// carry ONNX's logical And, Or, Xor and Not (bit operations that are logical
// on bools), and BitCast, which reinterprets the bits of each element.
//
//===----------------------------------------------------------------------===//
#include "Build.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Fails unless `v` holds integers (ONNX's bitwise ops take no bools or
/// floats).
LogicalResult requireIntegers(OnnxNode &node, Value v) {
  Type elt = elementOf(v);
  if (isa<IntegerType>(elt) && !elt.isInteger(1))
    return success();
  node.fail() << node.opType() << " of " << elt
              << " is not supported; it takes integer tensors (use "
              << (elt.isInteger(1) ? "And, Or, Xor or Not for bools"
                                   : "Cast to an integer type first")
              << ")";
  return failure();
}

template <typename OpTy>
FailureOr<SmallVector<Value>> bitwiseBinary(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  if (failed(a) || failed(b) || failed(requireIntegers(node, *a)) ||
      failed(requireIntegers(node, *b)))
    return failure();
  return one(build<OpTy>(node, *a, *b));
}
} // namespace

/// BitwiseAnd 18.
FailureOr<SmallVector<Value>> mlir::kiln::convertBitwiseAnd(OnnxNode &node) {
  return bitwiseBinary<AndOp>(node);
}

/// BitwiseOr 18.
FailureOr<SmallVector<Value>> mlir::kiln::convertBitwiseOr(OnnxNode &node) {
  return bitwiseBinary<OrOp>(node);
}

/// BitwiseXor 18.
FailureOr<SmallVector<Value>> mlir::kiln::convertBitwiseXor(OnnxNode &node) {
  return bitwiseBinary<XorOp>(node);
}

/// BitwiseNot 18.
FailureOr<SmallVector<Value>> mlir::kiln::convertBitwiseNot(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x) || failed(requireIntegers(node, *x)))
    return failure();
  return one(build<NotOp>(node, *x));
}

/// BitCast 26: the same bits as another type of the same width (bool counts
/// as one byte, 0 or 1); the shape is unchanged.
FailureOr<SmallVector<Value>> mlir::kiln::convertBitCast(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  if (!node.hasAttr("to")) {
    node.fail() << "the 'to' attribute is required";
    return failure();
  }
  std::string name;
  Type to = onnxElementType(node.builder, node.intAttr("to", 0), name);
  Type from = elementOf(*x);
  if (!to) {
    node.fail() << "bitcasting to " << name
                << " is not supported; Kiln bitcasts between float, integer "
                   "and bool types";
    return failure();
  }
  auto bytes = [](Type t) {
    return t.isInteger(1) ? 8u : t.getIntOrFloatBitWidth();
  };
  if (bytes(from) != bytes(to)) {
    node.fail() << "cannot bitcast " << from << " (" << bytes(from)
                << " bits) to " << name << " (" << bytes(to)
                << " bits); BitCast needs types of the same width (use Cast "
                   "to convert values)";
    return failure();
  }
  return one(build<BitCastOp>(node, *x, TypeAttr::get(to)));
}
