//===- KilnBase.td - the Kiln graph dialect ---------------*- tablegen -*-===//
#ifndef KILN_DIALECT_KILN_BASE
#define KILN_DIALECT_KILN_BASE

include "mlir/IR/OpBase.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::mlir::kiln";
  let summary = "Kiln's graph dialect: ONNX semantics on ranked tensors";
  let description = [{
    Graph-level operations with ONNX semantics (numpy broadcasting, NCHW
    convolution) on ranked tensors. Attributes are normalized: auto_pad is
    resolved to explicit pads, negative axes are made positive, and version
    differences between opsets are gone. Result types follow from operand types
    and attributes (InferTypeOpInterface), which the shape-inference pass uses to
    make every shape static.
  }];
  let hasConstantMaterializer = 1;
  // Zero-element tensors fold for every op (EmptyTensors.cpp).
  let hasCanonicalizer = 1;
  // The discardable `kiln.*` attributes that phases leave for each other
  // (Contract.h) are checked by name and kind.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_KILN_BASE
