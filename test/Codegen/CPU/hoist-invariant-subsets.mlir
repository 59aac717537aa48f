// RUN: kiln-opt %s --split-input-file --kiln-cpu-hoist-invariant-subsets | FileCheck %s

// A reduction's accumulator: its read and write leave the loop, which
// carries the vector instead.
// CHECK-LABEL: func.func @accumulator
// CHECK: vector.transfer_read %arg1
// CHECK: scf.for {{.+}} -> (tensor<16xf32>, vector<16xf32>)
// CHECK-NOT: vector.transfer_write
// CHECK: }
// CHECK: vector.transfer_write
func.func @accumulator(%a: tensor<64x16xf32>, %acc: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %p = ub.poison : f32
  %r = scf.for %k = %c0 to %c64 step %c1 iter_args(%t = %acc) -> (tensor<16xf32>) {
    %x = vector.transfer_read %a[%k, %c0], %p {in_bounds = [true]} : tensor<64x16xf32>, vector<16xf32>
    %y = vector.transfer_read %t[%c0], %p {in_bounds = [true]} : tensor<16xf32>, vector<16xf32>
    %z = arith.addf %x, %y : vector<16xf32>
    %w = vector.transfer_write %z, %t[%c0] {in_bounds = [true]} : vector<16xf32>, tensor<16xf32>
    scf.yield %w : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// -----

// A tile loop of run-time extent holding other loops keeps its subsets (the
// inner loop of static extent still gives up its own): comparing slices
// through a run-time bound is what costs seconds on real graphs.
// CHECK-LABEL: func.func @runtime_tile_loop
// CHECK: scf.for %{{.+}} = %c0 to %arg2 step %c8 iter_args(%[[T:.+]] = %arg1) -> (tensor<16xf32>)
// CHECK-NEXT: vector.transfer_read %[[T]]
// CHECK-NEXT: scf.for {{.+}} -> (tensor<16xf32>, vector<16xf32>)
func.func @runtime_tile_loop(%a: tensor<64x16xf32>, %acc: tensor<16xf32>, %n: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %p = ub.poison : f32
  %r = scf.for %i = %c0 to %n step %c8 iter_args(%t = %acc) -> (tensor<16xf32>) {
    %s = scf.for %k = %c0 to %c64 step %c1 iter_args(%u = %t) -> (tensor<16xf32>) {
      %x = vector.transfer_read %a[%k, %c0], %p {in_bounds = [true]} : tensor<64x16xf32>, vector<16xf32>
      %v = vector.transfer_read %u[%c0], %p {in_bounds = [true]} : tensor<16xf32>, vector<16xf32>
      %q = arith.addf %x, %v : vector<16xf32>
      %o = vector.transfer_write %q, %u[%c0] {in_bounds = [true]} : vector<16xf32>, tensor<16xf32>
      scf.yield %o : tensor<16xf32>
    }
    scf.yield %s : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// -----

// The same loop with a static bound: the outer loop's subset leaves it too.
// CHECK-LABEL: func.func @static_tile_loop
// CHECK: vector.transfer_read %arg1
// CHECK-NEXT: scf.for %{{.+}} = %c0 to %c64 step %c8 iter_args(%{{.+}}) -> (tensor<16xf32>, vector<16xf32>)
func.func @static_tile_loop(%a: tensor<64x16xf32>, %acc: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %p = ub.poison : f32
  %r = scf.for %i = %c0 to %c64 step %c8 iter_args(%t = %acc) -> (tensor<16xf32>) {
    %s = scf.for %k = %c0 to %c64 step %c1 iter_args(%u = %t) -> (tensor<16xf32>) {
      %x = vector.transfer_read %a[%k, %c0], %p {in_bounds = [true]} : tensor<64x16xf32>, vector<16xf32>
      %v = vector.transfer_read %u[%c0], %p {in_bounds = [true]} : tensor<16xf32>, vector<16xf32>
      %q = arith.addf %x, %v : vector<16xf32>
      %o = vector.transfer_write %q, %u[%c0] {in_bounds = [true]} : vector<16xf32>, tensor<16xf32>
      scf.yield %o : tensor<16xf32>
    }
    scf.yield %s : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// -----

// A static loop around a tile loop of run-time extent is not tried either:
// its iter_args reach the inner loops' subsets, and matching them through
// the run-time bound cost 6 s for one batched product over two symbolic
// sizes. Its own invariant slice stays (a static loop holding only static
// loops would give it up, as @static_tile_loop shows). Tried, MLIR's
// hoistLoopInvariantSubsets also moved the inner loop's accumulator out to
// this loop's yield, where it does not dominate its use (invalid IR).
// CHECK-LABEL: func.func @static_loop_around_runtime_tile_loop
// CHECK: scf.for %{{.+}} = %c0 to %c2 step %c1 iter_args(%[[T:.+]] = %arg1) -> (tensor<32xf32>)
// CHECK-NEXT: tensor.extract_slice %[[T]][0] [16] [1]
// CHECK: tensor.insert_slice
// CHECK-NEXT: scf.yield
func.func @static_loop_around_runtime_tile_loop(%a: tensor<64x16xf32>, %acc: tensor<32xf32>, %n: index) -> tensor<32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %p = ub.poison : f32
  %r = scf.for %j = %c0 to %c2 step %c1 iter_args(%t = %acc) -> (tensor<32xf32>) {
    %e = tensor.extract_slice %t[0] [16] [1] : tensor<32xf32> to tensor<16xf32>
    %i_r = scf.for %i = %c0 to %n step %c8 iter_args(%w = %e) -> (tensor<16xf32>) {
      %s = scf.for %k = %c0 to %c64 step %c1 iter_args(%u = %w) -> (tensor<16xf32>) {
        %x = vector.transfer_read %a[%k, %c0], %p {in_bounds = [true]} : tensor<64x16xf32>, vector<16xf32>
        %v = vector.transfer_read %u[%c0], %p {in_bounds = [true]} : tensor<16xf32>, vector<16xf32>
        %q = arith.addf %x, %v : vector<16xf32>
        %o = vector.transfer_write %q, %u[%c0] {in_bounds = [true]} : vector<16xf32>, tensor<16xf32>
        scf.yield %o : tensor<16xf32>
      }
      scf.yield %s : tensor<16xf32>
    }
    %ins = tensor.insert_slice %i_r into %t[0] [16] [1] : tensor<16xf32> into tensor<32xf32>
    scf.yield %ins : tensor<32xf32>
  }
  return %r : tensor<32xf32>
}
