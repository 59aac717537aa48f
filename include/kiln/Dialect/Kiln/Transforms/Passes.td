//===- Passes.td - graph passes of the Kiln dialect -------*- tablegen -*-===//
#ifndef KILN_DIALECT_KILN_TRANSFORMS_PASSES
#define KILN_DIALECT_KILN_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def ShapeInferencePass : Pass<"kiln-shape-inference", "func::FuncOp"> {
  let summary = "Refine result types of kiln ops to the shapes their operands imply";
  let description = [{
    Walks the function in order and replaces every result type that is less
    static than what InferTypeOpInterface infers, then updates the function's
    result types to match its return.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

#endif
