// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-drop-in-place-materialize))' | FileCheck %s

// The loop-carried value is already computed in its iter_arg (a tiled loop
// whose init is the iter_arg, writing into it): the copy goes, and the
// graph loop yields the value itself.
// CHECK-LABEL: func.func @in_place
// CHECK: scf.for %{{.*}} iter_args(%[[H:.*]] = %arg0)
// CHECK: %[[T:.*]] = scf.for %{{.*}} iter_args(%[[A:.*]] = %[[H]])
// CHECK-NOT: materialize_in_destination
// CHECK: scf.yield %[[T]] : tensor<4x8xf32>
// CHECK: } {kiln.graph_loop}
func.func @in_place(%h0: tensor<4x8xf32>, %n: index) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %p = ub.poison : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%h = %h0) -> (tensor<4x8xf32>) {
    %t = scf.for %j = %c0 to %c8 step %c4 iter_args(%a = %h) -> (tensor<4x8xf32>) {
      %v = vector.transfer_read %h[%c0, %j], %p {in_bounds = [true, true]} : tensor<4x8xf32>, vector<4x4xf32>
      %w = arith.addf %v, %v : vector<4x4xf32>
      %u = vector.transfer_write %w, %a[%c0, %j] {in_bounds = [true, true]} : vector<4x4xf32>, tensor<4x8xf32>
      scf.yield %u : tensor<4x8xf32>
    }
    %k = bufferization.materialize_in_destination %t in %h : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.yield %k : tensor<4x8xf32>
  } {kiln.graph_loop}
  return %r : tensor<4x8xf32>
}

// -----

// A value computed elsewhere (into a fresh tensor) keeps its copy, and so
// does any loop that is not a graph loop.
// CHECK-LABEL: func.func @elsewhere
// CHECK: bufferization.materialize_in_destination
// CHECK: } {kiln.graph_loop}
// CHECK: bufferization.materialize_in_destination
func.func @elsewhere(%h0: tensor<8xf32>, %n: index) -> (tensor<8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%h = %h0) -> (tensor<8xf32>) {
    %e = tensor.empty() : tensor<8xf32>
    %w = linalg.add ins(%h, %h : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    %k = bufferization.materialize_in_destination %w in %h : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    scf.yield %k : tensor<8xf32>
  } {kiln.graph_loop}
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%h = %h0) -> (tensor<8xf32>) {
    %w = linalg.add ins(%h, %h : tensor<8xf32>, tensor<8xf32>) outs(%h : tensor<8xf32>) -> tensor<8xf32>
    %k = bufferization.materialize_in_destination %w in %h : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    scf.yield %k : tensor<8xf32>
  }
  return %r, %s : tensor<8xf32>, tensor<8xf32>
}
