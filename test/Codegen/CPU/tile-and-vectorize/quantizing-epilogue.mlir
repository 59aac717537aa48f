// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-cpu-tiling-pipeline{vector-width=16 parallel-work=0},func.func(canonicalize,cse,loop-invariant-subset-hoisting,kiln-lower-vector-ops,canonicalize,cse))' | FileCheck %s

// A depthwise convolution whose epilogue quantizes to int8 (static int8's
// input of the next product) is fused into the epilogue's tiles like an f32
// one. The int8 output tile cannot hold the f32 accumulators, so each tile
// accumulates in a tensor of its own, which is written, inserted and read
// back whole: the read is forwarded, the accumulators stay in registers from
// the zero vector to the int8 store, and no f32 tensor is left to become a
// buffer allocated in the loops (or one pass writing and one reading it).
// CHECK-LABEL: func.func @depthwise_quantizing_epilogue
// CHECK-NOT: tensor.empty() : tensor<{{.*}}xf32>
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK: scf.for
// CHECK: %[[ACC:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[ZERO]]) -> (vector<8x32xf32>)
// CHECK: vector.fma
// CHECK: arith.addf %[[ACC]]
// CHECK: math.roundeven
// CHECK: arith.trunci %{{.+}} : vector<8x32xi32> to vector<8x32xi8>
// CHECK: vector.transfer_write %{{.+}} : vector<8x32xi8>, tensor<1x1x8x32xi8>
// CHECK-NOT: xf32>, tensor
// CHECK: return
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @depthwise_quantizing_epilogue(%x: tensor<1x10x10x32xf32>, %w: tensor<3x3x32xf32>, %b: tensor<32xf32>) -> tensor<1x8x8x32xi8> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 20.0 : f32
  %e = tensor.empty() : tensor<1x8x8x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  %d = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x10x10x32xf32>, tensor<3x3x32xf32>) outs(%acc : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  %e2 = tensor.empty() : tensor<1x8x8x32xi8>
  %q = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%d, %b : tensor<1x8x8x32xf32>, tensor<32xf32>) outs(%e2 : tensor<1x8x8x32xi8>) {
  ^bb0(%in: f32, %bias: f32, %out: i8):
    %s = arith.addf %in, %bias : f32
    %m = arith.mulf %s, %inv : f32
    %r = math.roundeven %m : f32
    %i = arith.fptosi %r : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<1x8x8x32xi8>
  return %q : tensor<1x8x8x32xi8>
}
