// RUN: kiln-opt %s --kiln-mark-inputs-read-only | FileCheck %s
// RUN: kiln-opt %s --kiln-mark-inputs-read-only --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUF

// Every argument of a function is the caller's: marked not writable, other
// argument attributes kept.
// CHECK-LABEL: func.func @inputs
// CHECK-SAME: {bufferization.writable = false}
// CHECK-SAME: {bufferization.writable = false, onnx.name = "b"}
func.func @inputs(%a: tensor<4xf32>, %b: tensor<4xf32> {onnx.name = "b"}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// An op writing into a view of an argument then works on a copy: the
// argument's buffer is only read.
// CHECK-LABEL: func.func @write_view
// BUF-LABEL: func.func @write_view
// BUF-SAME: (%[[A:.+]]: memref<4x4xf32>
// BUF: %[[COPY:.+]] = memref.alloc
// BUF: memref.copy %{{.+}}, %[[COPY]]
// BUF-NOT: memref.store {{.+}}, %[[A]]
// BUF: return
func.func @write_view(%a: tensor<4x4xf32>, %v: f32) -> tensor<16xf32> {
  %flat = tensor.collapse_shape %a [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %c0 = arith.constant 0 : index
  %w = tensor.insert %v into %flat[%c0] : tensor<16xf32>
  return %w : tensor<16xf32>
}
