// RUN: kiln-opt %s --split-input-file --kiln-write-into-destinations | FileCheck %s

// Padding after an activation: a fresh padded tensor is made above the
// activation, which writes into its interior slice; the copy goes, and the
// insert puts the activation's result back into that tensor (a no-op once
// bufferized). The old fill and slice are left for canonicalization.
// CHECK-LABEL: func.func @pad_after_activation
// CHECK: %[[PAD:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x6x6x16xf32>)
// CHECK: %[[INNER:.+]] = tensor.extract_slice %[[PAD]][0, 1, 1, 0] [1, 4, 4, 16]
// CHECK: %[[ACT:.+]] = linalg.generic {{.+}} outs(%[[INNER]] : tensor<1x4x4x16xf32>)
// CHECK: arith.maximumf
// CHECK-NOT: linalg.copy
// CHECK: tensor.insert_slice %[[ACT]] into %[[PAD]][0, 1, 1, 0] [1, 4, 4, 16]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @pad_after_activation(%x: tensor<1x4x4x16xf32>) -> tensor<1x6x6x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x16xf32>) outs(%e : tensor<1x4x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x16xf32>
  %pe = tensor.empty() : tensor<1x6x6x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %s = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x6x6x16xf32> to tensor<1x4x4x16xf32>
  %c = linalg.copy ins(%r : tensor<1x4x4x16xf32>) outs(%s : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %p = tensor.insert_slice %c into %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x6x6x16xf32>
  return %p : tensor<1x6x6x16xf32>
}

// -----

// Static int8's unfolded windows, inserted into the first 36 columns of K-
// padded rows: the unfolding writes into the view (expand_shape) of the
// rows' slice, and the fill keeps its kiln.unread_padding mark.
// CHECK-LABEL: func.func @unfold_into_padded_rows
// CHECK: %[[ROWS:.+]] = linalg.fill {kiln.unread_padding} {{.+}} -> tensor<16x64xi8>
// CHECK: %[[LEFT:.+]] = tensor.extract_slice %[[ROWS]][0, 0] [16, 36]
// CHECK: %[[VIEW:.+]] = tensor.expand_shape %[[LEFT]] {{\[\[}}0, 1, 2], [3, 4]] output_shape [1, 4, 4, 3, 12]
// CHECK: %[[U:.+]] = linalg.generic {{.+}} outs(%[[VIEW]] : tensor<1x4x4x3x12xi8>)
// CHECK: %[[BACK:.+]] = tensor.collapse_shape %[[U]]
// CHECK: tensor.insert_slice %[[BACK]] into %[[ROWS]][0, 0] [16, 36]
#win = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d3, d2 * 4 + d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @unfold_into_padded_rows(%x: tensor<1x6x24xi8>) -> tensor<16x64xi8> {
  %zero = arith.constant 0 : i8
  %e = tensor.empty() : tensor<1x4x4x3x12xi8>
  %u = linalg.generic {indexing_maps = [#win, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x6x24xi8>) outs(%e : tensor<1x4x4x3x12xi8>) {
  ^bb0(%in: i8, %out: i8):
    linalg.yield %in : i8
  } -> tensor<1x4x4x3x12xi8>
  %r = tensor.collapse_shape %u [[0, 1, 2], [3, 4]] : tensor<1x4x4x3x12xi8> into tensor<16x36xi8>
  %pe = tensor.empty() : tensor<16x64xi8>
  %f = linalg.fill {kiln.unread_padding} ins(%zero : i8) outs(%pe : tensor<16x64xi8>) -> tensor<16x64xi8>
  %p = tensor.insert_slice %r into %f[0, 0] [16, 36] [1, 1] : tensor<16x36xi8> into tensor<16x64xi8>
  return %p : tensor<16x64xi8>
}

// -----

// An int8 kernel (a loop marked kiln.overwritten_outs: it writes all of the
// tensor it carries and reads none of it) starts from the padded tensor's
// interior instead of its empty tensor.
// CHECK-LABEL: func.func @kernel_into_padded
// CHECK: %[[PAD:.+]] = linalg.fill {{.+}} -> tensor<1x4x6x16xi8>
// CHECK: %[[INNER:.+]] = tensor.extract_slice %[[PAD]][0, 1, 1, 0] [1, 2, 4, 16]
// CHECK: %[[K:.+]] = scf.forall (%{{.+}}) in (2) shared_outs(%{{.+}} = %[[INNER]])
// CHECK: } {kiln.overwritten_outs}
// CHECK-NOT: linalg.copy
// CHECK: tensor.insert_slice %[[K]] into %[[PAD]][0, 1, 1, 0] [1, 2, 4, 16]
func.func @kernel_into_padded(%x: tensor<1x2x4x16xi8>) -> tensor<1x4x6x16xi8> {
  %zero = arith.constant 0 : i8
  %e = tensor.empty() : tensor<1x2x4x16xi8>
  %k = scf.forall (%h) in (2) shared_outs(%o = %e) -> (tensor<1x2x4x16xi8>) {
    %in = tensor.extract_slice %x[0, %h, 0, 0] [1, 1, 4, 16] [1, 1, 1, 1] : tensor<1x2x4x16xi8> to tensor<1x1x4x16xi8>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %in into %o[0, %h, 0, 0] [1, 1, 4, 16] [1, 1, 1, 1] : tensor<1x1x4x16xi8> into tensor<1x2x4x16xi8>
    }
  } {kiln.overwritten_outs}
  %pe = tensor.empty() : tensor<1x4x6x16xi8>
  %f = linalg.fill ins(%zero : i8) outs(%pe : tensor<1x4x6x16xi8>) -> tensor<1x4x6x16xi8>
  %s = tensor.extract_slice %f[0, 1, 1, 0] [1, 2, 4, 16] [1, 1, 1, 1] : tensor<1x4x6x16xi8> to tensor<1x2x4x16xi8>
  %c = linalg.copy ins(%k : tensor<1x2x4x16xi8>) outs(%s : tensor<1x2x4x16xi8>) -> tensor<1x2x4x16xi8>
  %p = tensor.insert_slice %c into %f[0, 1, 1, 0] [1, 2, 4, 16] [1, 1, 1, 1] : tensor<1x2x4x16xi8> into tensor<1x4x6x16xi8>
  return %p : tensor<1x4x6x16xi8>
}

// -----

// A producer that another op reads too (a skip connection, here the second
// result) still writes into the interior: the other reader takes the same
// values from there, and bufferization keeps the padded buffer for it.
// CHECK-LABEL: func.func @producer_read_twice
// CHECK: %[[PAD:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x6x6x16xf32>)
// CHECK: %[[INNER:.+]] = tensor.extract_slice %[[PAD]][0, 1, 1, 0] [1, 4, 4, 16]
// CHECK: %[[ACT:.+]] = linalg.generic {{.+}} outs(%[[INNER]] : tensor<1x4x4x16xf32>)
// CHECK-NOT: linalg.copy
// CHECK: %[[P:.+]] = tensor.insert_slice %[[ACT]] into %[[PAD]][0, 1, 1, 0] [1, 4, 4, 16]
// CHECK: return %[[P]], %[[ACT]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @producer_read_twice(%x: tensor<1x4x4x16xf32>) -> (tensor<1x6x6x16xf32>, tensor<1x4x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x16xf32>) outs(%e : tensor<1x4x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x16xf32>
  %pe = tensor.empty() : tensor<1x6x6x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %s = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x6x6x16xf32> to tensor<1x4x4x16xf32>
  %c = linalg.copy ins(%r : tensor<1x4x4x16xf32>) outs(%s : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %p = tensor.insert_slice %c into %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x6x6x16xf32>
  return %p, %r : tensor<1x6x6x16xf32>, tensor<1x4x4x16xf32>
}

// -----

// Dynamic int8 pads the next convolution's input with the zero point, a
// run-time value computed after the quantizing op from one known before it:
// its computation moves above the op, which then writes into the padded
// tensor's interior as with a constant fill.
// CHECK-LABEL: func.func @pad_with_runtime_zero_point
// CHECK: %[[ZP:.+]] = arith.trunci %{{.+}} : i32 to i8
// CHECK: %[[PAD:.+]] = linalg.fill ins(%[[ZP]] : i8) outs(%{{.+}} : tensor<1x6x6x16xi8>)
// CHECK: %[[INNER:.+]] = tensor.extract_slice %[[PAD]][0, 1, 1, 0] [1, 4, 4, 16]
// CHECK: %[[Q:.+]] = linalg.generic {{.+}} outs(%[[INNER]] : tensor<1x4x4x16xi8>)
// CHECK-NOT: linalg.copy
// CHECK: tensor.insert_slice %[[Q]] into %[[PAD]][0, 1, 1, 0] [1, 4, 4, 16]
#id2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @pad_with_runtime_zero_point(%x: tensor<1x4x4x16xf32>, %zp: i32) -> tensor<1x6x6x16xi8> {
  %e = tensor.empty() : tensor<1x4x4x16xi8>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x16xf32>) outs(%e : tensor<1x4x4x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %i = arith.fptoui %in : f32 to i8
    linalg.yield %i : i8
  } -> tensor<1x4x4x16xi8>
  %z = arith.trunci %zp : i32 to i8
  %pe = tensor.empty() : tensor<1x6x6x16xi8>
  %f = linalg.fill ins(%z : i8) outs(%pe : tensor<1x6x6x16xi8>) -> tensor<1x6x6x16xi8>
  %s = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x6x6x16xi8> to tensor<1x4x4x16xi8>
  %c = linalg.copy ins(%q : tensor<1x4x4x16xi8>) outs(%s : tensor<1x4x4x16xi8>) -> tensor<1x4x4x16xi8>
  %p = tensor.insert_slice %c into %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xi8> into tensor<1x6x6x16xi8>
  return %p : tensor<1x6x6x16xi8>
}

// -----

// A fill value that only an op with side effects after the producer gives
// (here an opaque call) cannot move above it: the copy stays.
// CHECK-LABEL: func.func @pad_with_value_from_call
// CHECK: linalg.copy
#id3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func private @opaque() -> f32
func.func @pad_with_value_from_call(%x: tensor<1x4x4x16xf32>) -> tensor<1x6x6x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x16xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x16xf32>) outs(%e : tensor<1x4x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x16xf32>
  %v = func.call @opaque() : () -> f32
  %pe = tensor.empty() : tensor<1x6x6x16xf32>
  %f = linalg.fill ins(%v : f32) outs(%pe : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %s = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x6x6x16xf32> to tensor<1x4x4x16xf32>
  %c = linalg.copy ins(%r : tensor<1x4x4x16xf32>) outs(%s : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %p = tensor.insert_slice %c into %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x6x6x16xf32>
  return %p : tensor<1x6x6x16xf32>
}

// -----

// The same over run-time sizes (a symbolic batch, height and width): the
// padded tensor's sizes (`h + 2`, computed after the activation) move above
// it with the fill, the activation writes into the interior slice of
// run-time size, and the copy goes.
// CHECK-LABEL: func.func @pad_after_activation_run_time
// CHECK: %[[PH:.+]] = arith.addi
// CHECK: %[[PW:.+]] = arith.addi
// CHECK: %[[PE:.+]] = tensor.empty(%{{.+}}, %[[PH]], %[[PW]]) : tensor<?x?x?x16xf32>
// CHECK: %[[PAD:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[PE]] : tensor<?x?x?x16xf32>)
// CHECK: %[[INNER:.+]] = tensor.extract_slice %[[PAD]][0, 1, 1, 0] [%{{.+}}, %{{.+}}, %{{.+}}, 16]
// CHECK: %[[ACT:.+]] = linalg.generic {{.+}} outs(%[[INNER]] : tensor<?x?x?x16xf32>)
// CHECK-NOT: linalg.copy
// CHECK: tensor.insert_slice %[[ACT]] into %[[PAD]][0, 1, 1, 0]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @pad_after_activation_run_time(%x: tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x?x16xf32>
  %h = tensor.dim %x, %c1 : tensor<?x?x?x16xf32>
  %w = tensor.dim %x, %c2 : tensor<?x?x?x16xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x?x?x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x?x16xf32>) outs(%e : tensor<?x?x?x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x?x?x16xf32>
  %ph = arith.addi %h, %c2 : index
  %pw = arith.addi %w, %c2 : index
  %pe = tensor.empty(%n, %ph, %pw) : tensor<?x?x?x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%pe : tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  %s = tensor.extract_slice %f[0, 1, 1, 0] [%n, %h, %w, 16] [1, 1, 1, 1] : tensor<?x?x?x16xf32> to tensor<?x?x?x16xf32>
  %c = linalg.copy ins(%r : tensor<?x?x?x16xf32>) outs(%s : tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  %p = tensor.insert_slice %c into %f[0, 1, 1, 0] [%n, %h, %w, 16] [1, 1, 1, 1] : tensor<?x?x?x16xf32> into tensor<?x?x?x16xf32>
  return %p : tensor<?x?x?x16xf32>
}

// -----

// Dynamic int8's requantization fused through a collapse of run-time sizes
// (batch x sequence rows), copied into the first 16 columns of padded
// rows: it writes into the view of the rows' slice, and the view
// (expand_shape) takes the run-time sizes of the requantization's own
// empty init, which the slice's single size cannot give.
// CHECK-LABEL: func.func @requantize_into_padded_rows_run_time
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[N:.+]]: index, %[[S:.+]]: index)
// CHECK: %[[M:.+]] = arith.muli %[[N]], %[[S]]
// CHECK: %[[ROWS:.+]] = linalg.fill {{.+}} -> tensor<?x64xi8>
// CHECK: %[[LEFT:.+]] = tensor.extract_slice %[[ROWS]][0, 0] [%[[M]], 16]
// CHECK: %[[VIEW:.+]] = tensor.expand_shape %[[LEFT]] {{\[\[}}0, 1], [2]] output_shape [%[[N]], %[[S]], 16]
// CHECK: %[[Q:.+]] = linalg.generic {{.+}} outs(%[[VIEW]] : tensor<?x?x16xi8>)
// CHECK-NOT: linalg.copy
// CHECK: %[[BACK:.+]] = tensor.collapse_shape %[[Q]]
// CHECK: tensor.insert_slice %[[BACK]] into %[[ROWS]][0, 0] [%[[M]], 16]
#id3d = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @requantize_into_padded_rows_run_time(%x: tensor<?x?x16xf32>, %n: index, %s: index) -> tensor<?x64xi8> {
  %zero = arith.constant 0 : i8
  %e = tensor.empty(%n, %s) : tensor<?x?x16xi8>
  %q = linalg.generic {indexing_maps = [#id3d, #id3d], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x16xf32>) outs(%e : tensor<?x?x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %i = arith.fptosi %in : f32 to i8
    linalg.yield %i : i8
  } -> tensor<?x?x16xi8>
  %m = arith.muli %n, %s : index
  %pe = tensor.empty(%m) : tensor<?x64xi8>
  %f = linalg.fill ins(%zero : i8) outs(%pe : tensor<?x64xi8>) -> tensor<?x64xi8>
  %sl = tensor.extract_slice %f[0, 0] [%m, 16] [1, 1] : tensor<?x64xi8> to tensor<?x16xi8>
  %v = tensor.expand_shape %sl [[0, 1], [2]] output_shape [%n, %s, 16] : tensor<?x16xi8> into tensor<?x?x16xi8>
  %c = linalg.copy ins(%q : tensor<?x?x16xi8>) outs(%v : tensor<?x?x16xi8>) -> tensor<?x?x16xi8>
  %b = tensor.collapse_shape %c [[0, 1], [2]] : tensor<?x?x16xi8> into tensor<?x16xi8>
  %p = tensor.insert_slice %b into %f[0, 0] [%m, 16] [1, 1] : tensor<?x16xi8> into tensor<?x64xi8>
  return %p : tensor<?x64xi8>
}
