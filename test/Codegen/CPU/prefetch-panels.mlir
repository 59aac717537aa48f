// RUN: kiln-opt %s --split-input-file --kiln-cpu-prefetch-panels --cse | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-prefetch-panels="max-panel-bytes=4096" --cse | FileCheck %s --check-prefix=SMALL

// The shape of a 1x1 convolution with its channel panels outermost: each
// parallel iteration reads panel %iv / 32 (64 x 32 floats, 8 KiB) once per
// pixel tile (the %m loop, which no index of the read uses). The k loop's
// first op prefetches the next iteration's panel: 7 x 8 = 56 iterations for
// 8192 bytes, 147 bytes each, so three lines per iteration from offset
// p * 2048 / 56 floats, where p = m * 8 + k / 8.
// CHECK-LABEL: func.func @conv1x1
// CHECK: %[[G:.+]] = memref.get_global @panels
// CHECK: scf.forall (%[[IV:.+]]) = (0) to (256) step (32)
// CHECK: scf.for %[[M:.+]] = %c0 to %c7 step %c1
// CHECK: scf.for %[[K:.+]] = %c0 to %c64 step %c8
// CHECK: %[[NEXT:.+]] = arith.addi %[[IV]], %c32
// CHECK: %[[NEXTP:.+]] = arith.divui %[[NEXT]], %c32
// CHECK: %[[PANEL:.+]] = arith.minui %[[NEXTP]], %c7
// CHECK: %[[KI:.+]] = arith.divui %[[K]], %c8
// CHECK: %[[MP:.+]] = arith.muli %[[M]], %c8
// CHECK: %[[P:.+]] = arith.addi %[[MP]], %[[KI]]
// CHECK: %[[PE:.+]] = arith.muli %[[P]], %c2048
// CHECK: %[[OFF:.+]] = arith.divui %[[PE]], %c56
// CHECK: %[[ROWS:.+]] = memref.collapse_shape %[[G]] {{\[\[}}0], [1, 2, 3, 4]] : memref<8x1x1x64x32xf32> into memref<8x2048xf32>
// CHECK: %[[A0:.+]] = arith.minui %[[OFF]], %c2047
// CHECK: memref.prefetch %[[ROWS]][%[[PANEL]], %[[A0]]], read, locality<2>, data
// CHECK: %[[O1:.+]] = arith.addi %[[OFF]], %c16
// CHECK: %[[A1:.+]] = arith.minui %[[O1]], %c2047
// CHECK: memref.prefetch %[[ROWS]][%[[PANEL]], %[[A1]]]
// CHECK: %[[O2:.+]] = arith.addi %[[OFF]], %c32
// CHECK: %[[A2:.+]] = arith.minui %[[O2]], %c2047
// CHECK: memref.prefetch %[[ROWS]][%[[PANEL]], %[[A2]]]
// CHECK-NOT: memref.prefetch
// CHECK: vector.transfer_read %[[G]]
// With panels over 4 KiB left alone:
// SMALL-LABEL: func.func @conv1x1
// SMALL-NOT: memref.prefetch
memref.global "private" constant @panels : memref<8x1x1x64x32xf32> = dense<1.0>
func.func @conv1x1(%a: memref<7x7x64xf32>, %out: memref<7x7x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %f0 = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<7x32xf32>
  %g = memref.get_global @panels : memref<8x1x1x64x32xf32>
  scf.forall (%iv) = (0) to (256) step (32) {
    scf.for %m = %c0 to %c7 step %c1 {
      %acc = scf.for %k = %c0 to %c64 step %c8 iter_args(%x = %zero) -> (vector<7x32xf32>) {
        %p = arith.divui %iv, %c32 : index
        %w = vector.transfer_read %g[%p, %c0, %c0, %k, %c0], %f0 {in_bounds = [true, true]} : memref<8x1x1x64x32xf32>, vector<8x32xf32>
        %w0 = vector.extract %w[0] : vector<32xf32> from vector<8x32xf32>
        %b = vector.broadcast %w0 : vector<32xf32> to vector<7x32xf32>
        %y = arith.addf %x, %b : vector<7x32xf32>
        scf.yield %y : vector<7x32xf32>
      }
      vector.transfer_write %acc, %out[%m, %c0, %iv] {in_bounds = [true, true]} : vector<7x32xf32>, memref<7x7x256xf32>
    }
  }
  return
}

// -----

// Each panel is read once (no loop goes over it again): the hardware's
// stream prefetch serves it, nothing is added.
// CHECK-LABEL: func.func @read_once
// CHECK-NOT: memref.prefetch
memref.global "private" constant @panels : memref<8x64x32xf32> = dense<1.0>
func.func @read_once(%out: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %f0 = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<32xf32>
  %g = memref.get_global @panels : memref<8x64x32xf32>
  scf.forall (%iv) = (0) to (256) step (32) {
    %acc = scf.for %k = %c0 to %c64 step %c8 iter_args(%x = %zero) -> (vector<32xf32>) {
      %p = arith.divui %iv, %c32 : index
      %w = vector.transfer_read %g[%p, %k, %c0], %f0 {in_bounds = [true]} : memref<8x64x32xf32>, vector<32xf32>
      %y = arith.addf %x, %w : vector<32xf32>
      scf.yield %y : vector<32xf32>
    }
    vector.transfer_write %acc, %out[%iv] {in_bounds = [true]} : vector<32xf32>, memref<256xf32>
  }
  return
}

// -----

// A global that is not constant may change between runs of the loop; a
// read whose other indices move with the parallel loop does not read one
// panel per iteration. Neither gets a prefetch.
// CHECK-LABEL: func.func @not_panels
// CHECK-NOT: memref.prefetch
memref.global "private" @mutable : memref<8x64x32xf32> = dense<1.0>
memref.global "private" constant @panels : memref<8x64x32xf32> = dense<1.0>
func.func @not_panels(%out: memref<2x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %f0 = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<32xf32>
  %g = memref.get_global @mutable : memref<8x64x32xf32>
  %h = memref.get_global @panels : memref<8x64x32xf32>
  scf.forall (%iv) = (0) to (256) step (32) {
    scf.for %m = %c0 to %c2 step %c1 {
      %acc = scf.for %k = %c0 to %c64 step %c8 iter_args(%x = %zero) -> (vector<32xf32>) {
        %p = arith.divui %iv, %c32 : index
        %w = vector.transfer_read %g[%p, %k, %c0], %f0 {in_bounds = [true]} : memref<8x64x32xf32>, vector<32xf32>
        %q = arith.divui %iv, %c64 : index
        %v = vector.transfer_read %h[%q, %q, %c0], %f0 {in_bounds = [true]} : memref<8x64x32xf32>, vector<32xf32>
        %s = arith.addf %w, %v : vector<32xf32>
        %y = arith.addf %x, %s : vector<32xf32>
        scf.yield %y : vector<32xf32>
      }
      vector.transfer_write %acc, %out[%m, %iv] {in_bounds = [true]} : vector<32xf32>, memref<2x256xf32>
    }
  }
  return
}
