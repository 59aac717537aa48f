//===- OnnxOps.td - the ONNX import dialect ---------------*- tablegen -*-===//
//
// The import dialect mirrors an ONNX graph one node to one op. Nodes are
// imported generically: an ONNX node of type T becomes the operation `onnx.T`
// (e.g. "onnx.Conv") with the node's attributes verbatim, so every node of any
// opset can be imported and reported on. Only initializers and omitted optional
// inputs have registered ops; all semantics live in the OnnxToKiln table.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_ONNX_OPS
#define KILN_DIALECT_ONNX_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Onnx_Dialect : Dialect {
  let name = "onnx";
  let cppNamespace = "::mlir::kiln::onnx";
  let summary = "ONNX graphs as imported, one generic op per node";
  let description = [{
    Each ONNX node becomes an operation named after its op type, with its
    attributes kept verbatim and its node name as the op's location. The module
    carries the model's opset imports in `onnx.opset_import`.
  }];
  let extraClassDeclaration = [{
    /// Attribute on the module: dictionary from domain ("ai.onnx" for the
    /// default domain) to opset version.
    static constexpr llvm::StringLiteral kOpsetImportAttr = "onnx.opset_import";
    /// Attributes on the module: the graph's name and the model's producer
    /// (producer_name and producer_version).
    static constexpr llvm::StringLiteral kGraphNameAttr = "onnx.graph_name";
    static constexpr llvm::StringLiteral kProducerAttr = "onnx.producer";
    /// Attribute on a function argument or result: its ONNX value name.
    static constexpr llvm::StringLiteral kValueNameAttr = "onnx.name";
    /// Attribute on a function argument with symbolic dimensions: the ONNX
    /// dim_param of each axis ("" where the axis has none).
    static constexpr llvm::StringLiteral kDimParamsAttr = "onnx.dim_params";
  }];
}

class Onnx_Op<string mnemonic, list<Trait> traits = []>
    : Op<Onnx_Dialect, mnemonic, traits>;

def Onnx_InitializerOp : Onnx_Op<"Initializer",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "a graph initializer (weights)";
  let description = [{
    An initializer of the ONNX graph. The bytes are held as a dense resource so
    that they are not copied while the module is transformed.

    ```mlir
    %w = onnx.Initializer "conv1.weight" dense_resource<conv1.weight> : tensor<8x3x3x3xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, ElementsAttr:$value);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$name $value attr-dict";
  let hasFolder = 1;
}

def Onnx_NoValueOp : Onnx_Op<"NoValue", [Pure]> {
  let summary = "an omitted optional input";
  let description = [{
    ONNX marks an omitted optional input with an empty name; the importer passes
    the result of this op in its place so operand positions keep their meaning.

    ```mlir
    %none = onnx.NoValue
    ```
  }];
  let results = (outs NoneType:$result);
  let assemblyFormat = "attr-dict";
}

#endif // KILN_DIALECT_ONNX_OPS
