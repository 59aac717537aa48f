// RUN: kiln-opt %s --pass-pipeline="builtin.module(kiln-cpu-tiling-pipeline{vector-width=16 parallel-work=0},func.func(canonicalize,cse))" | FileCheck %s

// Two padded tensors of one shape, each written by its own activation and
// read by its own depthwise convolution. Their fills must stay two tensors
// after CSE (each fill carries its own kiln.distinct_fill id): merged into
// one, bufferization would copy it before each write. Each fill is left
// whole, marked with the interior box its copy overwrites
// (--kiln-cpu-fill-borders then fills only the border).
// CHECK-LABEL: func.func @two_pads
// CHECK: linalg.fill {kiln.distinct_fill = 0 : i64, kiln.fill_border = array<i64: 0, 1, 1, 0, 1, 4, 4, 16>} {{.+}} -> tensor<1x6x6x16xf32>
// CHECK: linalg.fill {kiln.distinct_fill = 1 : i64, kiln.fill_border = array<i64: 0, 1, 1, 0, 1, 4, 4, 16>} {{.+}} -> tensor<1x6x6x16xf32>
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
func.func @two_pads(%x: tensor<1x4x4x16xf32>, %y: tensor<1x4x4x16xf32>, %w: tensor<3x3x16xf32>) -> (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %results:2 = scf.execute_region -> (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) {
    %e = tensor.empty() : tensor<1x4x4x16xf32>
    %r0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x16xf32>) outs(%e : tensor<1x4x4x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
    } -> tensor<1x4x4x16xf32>
    %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : tensor<1x4x4x16xf32>) outs(%e : tensor<1x4x4x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
    } -> tensor<1x4x4x16xf32>
    %pe = tensor.empty() : tensor<1x6x6x16xf32>
    %pad = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
    %s0 = tensor.extract_slice %pad[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x6x6x16xf32> to tensor<1x4x4x16xf32>
    %c0 = linalg.copy ins(%r0 : tensor<1x4x4x16xf32>) outs(%s0 : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
    %p0 = tensor.insert_slice %c0 into %pad[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x6x6x16xf32>
    %s1 = tensor.extract_slice %pad[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x6x6x16xf32> to tensor<1x4x4x16xf32>
    %c1 = linalg.copy ins(%r1 : tensor<1x4x4x16xf32>) outs(%s1 : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
    %p1 = tensor.insert_slice %c1 into %pad[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x6x6x16xf32>
    %oe = tensor.empty() : tensor<1x4x4x16xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
    %d0 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p0, %w : tensor<1x6x6x16xf32>, tensor<3x3x16xf32>) outs(%acc : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
    %d1 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p1, %w : tensor<1x6x6x16xf32>, tensor<3x3x16xf32>) outs(%acc : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
    scf.yield %d0, %d1 : tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>
  }
  return %results#0, %results#1 : tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>
}
