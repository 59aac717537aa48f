// RUN: kiln-opt %s --split-input-file --kiln-cpu-tiling-pipeline="vector-width=16" | FileCheck %s

// DynamicQuantizeLinear's range (minMaxInBlocks: blocked partials, their
// combine, the 128 elements after the blocks) of a tensor that a parallel
// loop computes: each tile's maximum and negated minimum are taken where the
// loop writes the tile, into one more shared output ([16 tiles, 2, 8
// lanes]: a tile of 2,600 values is 325 rows of 8), and one loop over those
// rows replaces the combine and the rest. The tensor is not read again: no
// loop over the 8 blocks is left.
// CHECK-LABEL: func.func @range_of_product
// CHECK: %[[R:.+]]:2 = scf.forall (%[[I:.+]]) in (16) shared_outs(%{{.+}} = %{{.+}}, %[[P:.+]] = %{{.+}}) -> (tensor<1x16x40x65xf32>, tensor<16x2x8xf32>)
// CHECK: scf.for {{.+}} to %c325 step %c1 iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xi32>)
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf olt
// CHECK: arith.maxsi
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[P]][%[[I]], 0, 0] [1, 2, 8] [1, 1, 1] : tensor<2x8xf32> into tensor<16x2x8xf32>
// CHECK-NOT: scf.forall
// CHECK: tensor.collapse_shape %[[R]]#1 {{\[}}[0], [1, 2]] : tensor<16x2x8xf32> into tensor<16x16xf32>
// CHECK: scf.for {{.+}} to %c16 step %c1 iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xi32>)
// CHECK: vector.reduction <maximumf>
// CHECK: vector.reduction <maxsi>
// CHECK: tensor.from_elements {{.+}} : tensor<2xf32>
// CHECK-NOT: kiln.min_max
func.func @range_of_product(%arg0: tensor<1x16x40x65xf32>) -> (tensor<1x16x40x65xf32>, tensor<2xf32>) {
  %cst = arith.constant 2.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %ninf = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<1x16x40x65xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x16x40x65xf32>) outs(%0 : tensor<1x16x40x65xf32>) {
  ^bb0(%in: f32, %out: f32):
    %16 = arith.mulf %in, %cst : f32
    linalg.yield %16 : f32
  } -> tensor<1x16x40x65xf32>
  %collapsed = tensor.collapse_shape %1 [[0, 1, 2, 3]] : tensor<1x16x40x65xf32> into tensor<41600xf32>
  %slice = tensor.extract_slice %collapsed[0] [41472] [1] : tensor<41600xf32> to tensor<41472xf32>
  %expanded = tensor.expand_shape %slice [[0, 1, 2]] output_shape [8, 81, 64] : tensor<41472xf32> into tensor<8x81x64xf32>
  %2 = tensor.empty() : tensor<8x2x64xf32>
  %3 = linalg.fill ins(%ninf : f32) outs(%2 : tensor<8x2x64xf32>) -> tensor<8x2x64xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%expanded : tensor<8x81x64xf32>) outs(%3 : tensor<8x2x64xf32>) attrs = {kiln.min_max_partials} {
  ^bb0(%in: f32, %out: f32):
    %16 = linalg.index 2 : index
    %17 = arith.cmpi ne, %16, %c0 : index
    %18 = arith.negf %in : f32
    %19 = arith.select %17, %18, %in : f32
    %20 = arith.maximumf %out, %19 : f32
    linalg.yield %20 : f32
  } -> tensor<8x2x64xf32>
  %5 = tensor.empty() : tensor<2xf32>
  %6 = linalg.fill ins(%ninf : f32) outs(%5 : tensor<2xf32>) -> tensor<2xf32>
  %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction"]} ins(%4 : tensor<8x2x64xf32>) outs(%6 : tensor<2xf32>) attrs = {kiln.min_max_combine} {
  ^bb0(%in: f32, %out: f32):
    %16 = arith.maximumf %out, %in : f32
    linalg.yield %16 : f32
  } -> tensor<2xf32>
  %rest = tensor.extract_slice %collapsed[41472] [128] [1] : tensor<41600xf32> to tensor<128xf32>
  %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%rest : tensor<128xf32>) outs(%7 : tensor<2xf32>) attrs = {kiln.min_max_rest} {
  ^bb0(%in: f32, %out: f32):
    %16 = linalg.index 0 : index
    %17 = arith.cmpi ne, %16, %c0 : index
    %18 = arith.negf %in : f32
    %19 = arith.select %17, %18, %in : f32
    %20 = arith.maximumf %out, %19 : f32
    linalg.yield %20 : f32
  } -> tensor<2xf32>
  return %1, %8 : tensor<1x16x40x65xf32>, tensor<2xf32>
}

// -----

// The range of a function argument (no loop makes it) keeps its blocked
// pass: 8 blocks shared by the threads, then the combine.
// CHECK-LABEL: func.func @range_of_argument
// CHECK: scf.forall (%{{.+}}) in (8) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<8x2x64xf32>)
// CHECK-NOT: tensor.from_elements
func.func @range_of_argument(%arg0: tensor<41472xf32>) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %ninf = arith.constant 0xFF800000 : f32
  %expanded = tensor.expand_shape %arg0 [[0, 1, 2]] output_shape [8, 81, 64] : tensor<41472xf32> into tensor<8x81x64xf32>
  %2 = tensor.empty() : tensor<8x2x64xf32>
  %3 = linalg.fill ins(%ninf : f32) outs(%2 : tensor<8x2x64xf32>) -> tensor<8x2x64xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%expanded : tensor<8x81x64xf32>) outs(%3 : tensor<8x2x64xf32>) attrs = {kiln.min_max_partials} {
  ^bb0(%in: f32, %out: f32):
    %16 = linalg.index 2 : index
    %17 = arith.cmpi ne, %16, %c0 : index
    %18 = arith.negf %in : f32
    %19 = arith.select %17, %18, %in : f32
    %20 = arith.maximumf %out, %19 : f32
    linalg.yield %20 : f32
  } -> tensor<8x2x64xf32>
  %5 = tensor.empty() : tensor<2xf32>
  %6 = linalg.fill ins(%ninf : f32) outs(%5 : tensor<2xf32>) -> tensor<2xf32>
  %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction"]} ins(%4 : tensor<8x2x64xf32>) outs(%6 : tensor<2xf32>) attrs = {kiln.min_max_combine} {
  ^bb0(%in: f32, %out: f32):
    %16 = arith.maximumf %out, %in : f32
    linalg.yield %16 : f32
  } -> tensor<2xf32>
  return %7 : tensor<2xf32>
}
