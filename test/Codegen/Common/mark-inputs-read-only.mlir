// RUN: kiln-opt %s --kiln-mark-inputs-read-only | FileCheck %s
// RUN: kiln-opt %s --kiln-mark-inputs-read-only --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUF
// RUN: kiln-opt %s --split-input-file --kiln-mark-inputs-read-only="min-memref-arguments=2" | FileCheck %s --check-prefix=MANY
// RUN: kiln-opt %s --split-input-file --kiln-mark-inputs-read-only="min-memref-arguments=2" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=MANYBUF

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

// -----

// From min-memref-arguments tensor arguments on, a public function takes
// memrefs read through restrict, non-writable to_tensor ops (no argument
// attributes for bufferization to remove one by one); a write into a view
// of one still goes to a copy. A private function keeps its tensors.
// MANY-LABEL: func.func @many
// MANY-SAME: (%[[A:.+]]: memref<4x4xf32>, %[[B:.+]]: memref<4xf32> {onnx.name = "b"}, %{{.+}}: f32)
// MANY-NOT: bufferization.writable
// MANY: bufferization.to_tensor %[[A]] restrict : memref<4x4xf32> to tensor<4x4xf32>
// MANY: bufferization.to_tensor %[[B]] restrict
// MANYBUF-LABEL: func.func @many
// MANYBUF-SAME: (%[[A:.+]]: memref<4x4xf32>
// MANYBUF: %[[COPY:.+]] = memref.alloc
// MANYBUF: memref.copy %{{.+}}, %[[COPY]]
// MANYBUF-NOT: memref.store {{.+}}, %[[A]]
// MANYBUF: return
func.func @many(%a: tensor<4x4xf32>, %b: tensor<4xf32> {onnx.name = "b"}, %v: f32) -> tensor<16xf32> {
  %flat = tensor.collapse_shape %a [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %c0 = arith.constant 0 : index
  %w = tensor.insert %v into %flat[%c0] : tensor<16xf32>
  return %w : tensor<16xf32>
}

// MANY-LABEL: func.func private @callee
// MANY-SAME: tensor<4xf32> {bufferization.writable = false}
func.func private @callee(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
