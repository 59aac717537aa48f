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

// -----

// A run-time scale and zero point that every vector of a parallel loop
// reads again leave both loops as scalars, broadcast where they were read
// (a one-lane read, and a read that broadcasts one element); the input's
// tile, read at the loops' positions, stays.
// CHECK-LABEL: func.func @invariant_elements
// CHECK-DAG: %[[S:.+]] = tensor.extract %arg1[%c0, %c0] : tensor<1x1xf32>
// CHECK-DAG: %[[Z:.+]] = tensor.extract %arg2[%c0] : tensor<1xf32>
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: vector.transfer_read %arg0
// CHECK-DAG: vector.broadcast %[[S]] : f32 to vector<f32>
// CHECK-DAG: vector.broadcast %[[Z]] : f32 to vector<16xf32>
// CHECK-NOT: tensor.extract
func.func @invariant_elements(%x: tensor<8x64xf32>, %s: tensor<1x1xf32>, %z: tensor<1xf32>) -> tensor<8x64xf32> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %p = ub.poison : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %r = scf.forall (%i) in (8) shared_outs(%o = %e) -> (tensor<8x64xf32>) {
    %row = tensor.extract_slice %o[%i, 0] [1, 64] [1, 1] : tensor<8x64xf32> to tensor<1x64xf32>
    %t = scf.for %j = %c0 to %c64 step %c16 iter_args(%a = %row) -> (tensor<1x64xf32>) {
      %v = vector.transfer_read %x[%i, %j], %p {in_bounds = [true]} : tensor<8x64xf32>, vector<16xf32>
      %s0 = vector.transfer_read %s[%c0, %c0], %p : tensor<1x1xf32>, vector<f32>
      %sv = vector.broadcast %s0 : vector<f32> to vector<16xf32>
      %zv = vector.transfer_read %z[%c0], %p {permutation_map = affine_map<(d0) -> (0)>, in_bounds = [true]} : tensor<1xf32>, vector<16xf32>
      %q = arith.divf %v, %sv : vector<16xf32>
      %y = arith.addf %q, %zv : vector<16xf32>
      %w = vector.transfer_write %y, %a[%c0, %j] {in_bounds = [true]} : vector<16xf32>, tensor<1x64xf32>
      scf.yield %w : tensor<1x64xf32>
    }
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%i, 0] [1, 64] [1, 1] : tensor<1x64xf32> into tensor<8x64xf32>
    }
  }
  return %r : tensor<8x64xf32>
}

// -----

// Reads that depend on the loop, or whose constant position lies outside
// the tensor (a read the loop might never make), stay.
// CHECK-LABEL: func.func @variant_elements
// CHECK: scf.for
// CHECK: tensor.extract %arg0[%{{.+}}]
// CHECK: tensor.extract %arg1[%c4]
func.func @variant_elements(%a: tensor<4xf32>, %b: tensor<4xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 0.0 : f32
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %f) -> (f32) {
    %x = tensor.extract %a[%k] : tensor<4xf32>
    %y = tensor.extract %b[%c4] : tensor<4xf32>
    %s = arith.addf %x, %y : f32
    %t = arith.addf %acc, %s : f32
    scf.yield %t : f32
  }
  return %r : f32
}
