// RUN: kiln-opt %s --split-input-file --kiln-cpu-mark-border-fills | FileCheck %s

// A padded tensor whose interior the activation overwrites before anything
// reads it: the fill is marked with the interior box (offsets, then sizes),
// so that after bufferization only the border is filled.
// CHECK-LABEL: func.func @overwritten_interior
// CHECK: linalg.fill {kiln.fill_border = array<i64: 0, 1, 1, 0, 1, 4, 4, 16>} {{.+}} -> tensor<1x6x6x16xf32>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @overwritten_interior(%x: tensor<1x4x4x16xf32>) -> tensor<1x6x6x16xf32> {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<1x6x6x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %s = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x6x6x16xf32> to tensor<1x4x4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x16xf32>) outs(%s : tensor<1x4x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x16xf32>
  %p = tensor.insert_slice %r into %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x6x6x16xf32>
  return %p : tensor<1x6x6x16xf32>
}

// -----

// An interior that is read (the op accumulates into it) keeps the whole
// fill.
// CHECK-LABEL: func.func @read_interior
// CHECK: linalg.fill ins
// CHECK-NOT: kiln.fill_border
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @read_interior(%x: tensor<1x4x4x16xf32>) -> tensor<1x6x6x16xf32> {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<1x6x6x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %s = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x6x6x16xf32> to tensor<1x4x4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x16xf32>) outs(%s : tensor<1x4x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.addf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x16xf32>
  %p = tensor.insert_slice %r into %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x6x6x16xf32>
  return %p : tensor<1x6x6x16xf32>
}

// -----

// A symbolic height (docs/shapes.md): the padded height is the input's plus
// 2, so the box has a run-time height (ShapedType::kDynamic) and the mark
// carries the border after it too (offsets, sizes, trailing).
// CHECK-LABEL: func.func @dynamic_interior
// CHECK: linalg.fill {kiln.fill_border = array<i64: 0, 1, 1, 0, 1, -9223372036854775808, 4, 16, 0, 1, 1, 0>}
func.func @dynamic_interior(%x: tensor<1x?x4x16xf32>) -> tensor<1x?x6x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %h = tensor.dim %x, %c1 : tensor<1x?x4x16xf32>
  %ph = arith.addi %h, %c2 : index
  %pe = tensor.empty(%ph) : tensor<1x?x6x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x?x6x16xf32>) -> tensor<1x?x6x16xf32>
  %r = tensor.insert_slice %x into %f[0, 1, 1, 0] [1, %h, 4, 16] [1, 1, 1, 1] : tensor<1x?x4x16xf32> into tensor<1x?x6x16xf32>
  return %r : tensor<1x?x6x16xf32>
}

// -----

// A padded size that is not the box's plus a constant: filled whole.
// CHECK-LABEL: func.func @unrelated_size
// CHECK-NOT: kiln.fill_border
func.func @unrelated_size(%x: tensor<1x?x4x16xf32>, %ph: index) -> tensor<1x?x6x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  %h = tensor.dim %x, %c1 : tensor<1x?x4x16xf32>
  %pe = tensor.empty(%ph) : tensor<1x?x6x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x?x6x16xf32>) -> tensor<1x?x6x16xf32>
  %r = tensor.insert_slice %x into %f[0, 1, 1, 0] [1, %h, 4, 16] [1, 1, 1, 1] : tensor<1x?x4x16xf32> into tensor<1x?x6x16xf32>
  return %r : tensor<1x?x6x16xf32>
}

// -----

// A symbolic batch too: the box spans the batch whole (offset 0, the padded
// tensor's own run-time size), so it is a run-time size with no border after
// it; height and width are padded as above.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK: linalg.fill {kiln.fill_border = array<i64: 0, 1, 1, 0, -9223372036854775808, -9223372036854775808, -9223372036854775808, 16, 0, 1, 1, 0>}
func.func @dynamic_batch(%x: tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x?x16xf32>
  %h = tensor.dim %x, %c1 : tensor<?x?x?x16xf32>
  %w = tensor.dim %x, %c2 : tensor<?x?x?x16xf32>
  %ph = arith.addi %h, %c2 : index
  %pw = arith.addi %w, %c2 : index
  %pe = tensor.empty(%n, %ph, %pw) : tensor<?x?x?x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%pe : tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  %r = tensor.insert_slice %x into %f[0, 1, 1, 0] [%n, %h, %w, 16] [1, 1, 1, 1] : tensor<?x?x?x16xf32> into tensor<?x?x?x16xf32>
  return %r : tensor<?x?x?x16xf32>
}
