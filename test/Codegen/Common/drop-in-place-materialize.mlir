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

// -----

// The chain reaches the iter_arg, but the iter_arg is read after the first
// write into it (a reduction's accumulator that empty-tensor elimination
// placed in the loop's buffer, and the old value read after it): the copy
// stays, or bufferization would have to copy the accumulator and the loop
// would no longer yield its argument's buffer.
// CHECK-LABEL: func.func @read_after_write
// CHECK: tensor.insert %{{.*}} into %[[H:.*]][]
// CHECK: tensor.extract %[[H]][]
// CHECK: bufferization.materialize_in_destination
// CHECK: } {kiln.graph_loop}
func.func @read_after_write(%h0: tensor<f32>, %x: tensor<4xf32>, %n: index) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%h = %h0) -> (tensor<f32>) {
    %z = tensor.insert %zero into %h[] : tensor<f32>
    %s = scf.for %j = %c0 to %c4 step %c1 iter_args(%a = %zero) -> (f32) {
      %e = tensor.extract %x[%j] : tensor<4xf32>
      %b = arith.addf %a, %e : f32
      scf.yield %b : f32
    }
    %old = tensor.extract %h[] : tensor<f32>
    %t = arith.addf %old, %s : f32
    %w = tensor.insert %t into %z[] : tensor<f32>
    %k = bufferization.materialize_in_destination %w in %h : (tensor<f32>, tensor<f32>) -> tensor<f32>
    scf.yield %k : tensor<f32>
  } {kiln.graph_loop}
  return %r : tensor<f32>
}
