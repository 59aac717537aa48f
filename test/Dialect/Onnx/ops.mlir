// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// The import dialect: registered initializer and no-value ops, and any other
// ONNX node as a generic op (the dialect allows unknown operations).

// CHECK-LABEL: func.func @initializers
func.func @initializers() -> (tensor<3xf32>, tensor<2xi64>) {
  // CHECK: onnx.Initializer "b" dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
  %b = onnx.Initializer "b" dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  // CHECK: onnx.Initializer "shape" dense<[1, -1]> : tensor<2xi64>
  %s = onnx.Initializer "shape" dense<[1, -1]> : tensor<2xi64>
  return %b, %s : tensor<3xf32>, tensor<2xi64>
}

// CHECK-LABEL: func.func @resource_initializer
func.func @resource_initializer() -> tensor<2x2xf32> {
  // CHECK: onnx.Initializer "w" dense_resource<w> : tensor<2x2xf32>
  %w = onnx.Initializer "w" dense_resource<w> : tensor<2x2xf32>
  return %w : tensor<2x2xf32>
}

// The node name is the op's location.
// LOC: "onnx.Conv"{{.+}} loc(#[[CONV1:loc[0-9]*]])
// LOC: #[[CONV1]] = loc("conv1")

// CHECK-LABEL: func.func @generic_nodes
func.func @generic_nodes(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // CHECK: %[[NONE:.+]] = onnx.NoValue
  %none = onnx.NoValue
  // CHECK: %[[Y:.+]] = "onnx.Conv"(%{{.+}}, %{{.+}}, %[[NONE]]) {auto_pad = "NOTSET", pads = [1, 1, 1, 1], strides = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32>
  %y = "onnx.Conv"(%x, %w, %none) {auto_pad = "NOTSET", pads = [1, 1, 1, 1], strides = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32> loc("conv1")
  // Results of unknown type and ops of other domains are kept as well.
  // CHECK: "onnx.com.microsoft.FusedGemm"(%[[Y]]) {alpha = 1.000000e+00 : f32} : (tensor<1x4x8x8xf32>) -> tensor<*xf32>
  %z = "onnx.com.microsoft.FusedGemm"(%y) {alpha = 1.0 : f32} : (tensor<1x4x8x8xf32>) -> tensor<*xf32>
  return %y : tensor<1x4x8x8xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
