//===- Passes.td - Kiln conversion passes -----------------*- tablegen -*-===//
#ifndef KILN_CONVERSION_PASSES
#define KILN_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertOnnxToKilnPass : Pass<"kiln-convert-onnx-to-kiln", "ModuleOp"> {
  let summary = "Lower imported onnx.* ops to the kiln graph dialect";
  let description = [{
    Looks every node up in a table keyed by op type and since-version (the
    largest since-version not above the model's opset for the node's domain)
    and builds kiln ops with inferred static types. Every node that cannot be
    converted gets an error naming the node, its op type, the opset and why;
    all of them are reported, not only the first.

    A node whose result (as ONNX's shape inference or the conversion types
    it) or input would hold more than `max-tensor-bytes` bytes, or a size
    that does not fit in 64 bits, is an error before anything is built for
    it.
  }];
  let options = [
    Option<"maxTensorBytes", "max-tensor-bytes", "uint64_t",
           /*default=*/"17179869184",
           "The most bytes one tensor a node computes may hold (16 GiB)">
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect", "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ConvertKilnToLinalgPass : Pass<"kiln-convert-kiln-to-linalg", "ModuleOp"> {
  let summary = "Lower kiln graph ops to linalg, tensor, arith and math on tensors";
  let description = [{
    With `row-blocks` (the CPU target), a softmax over the last axis of a
    static tensor of at least 32,768 elements becomes one scf.forall over
    blocks of rows, and softmax(q kt) v written as MatMul, Softmax, MatMul
    (with elementwise ops around the softmax: a scale, a mask) one
    scf.forall over blocks of query rows that never stores the scores
    whole (LowerSoftmax.cpp); the GPU pipeline keeps the whole-tensor form,
    whose ops it maps to kernels.
  }];
  let options = [
    Option<"rowBlocks", "row-blocks", "bool", /*default=*/"false",
           "Lower large softmaxes as one loop over blocks of rows (CPU)">
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::func::FuncDialect", "::mlir::scf::SCFDialect",
    "::mlir::affine::AffineDialect",
    "::mlir::bufferization::BufferizationDialect"];
}

#endif
