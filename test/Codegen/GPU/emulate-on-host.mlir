// RUN: kiln-opt %s --kiln-gpu-emulate-on-host | FileCheck %s

// A launch becomes six loops (grid z, y, x, block z, y, x) around its body,
// with the ids as induction variables; the weights argument becomes the
// packed global.
// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME: %[[X:[^:]+]]: memref<300xf32>)
// CHECK-NOT: kiln.weights
// CHECK: %[[W:.+]] = memref.get_global @__kiln_weights : memref<64xi8>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[BX:[^ ]+]] =
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[TX:[^ ]+]] =
// CHECK: %[[V:.+]] = memref.view %[[W]]
// CHECK: %[[M:.+]] = arith.muli %[[BX]], %{{.+}} : index
// CHECK: %[[I:.+]] = arith.addi %[[M]], %[[TX]] : index
// CHECK: memref.load %[[V]][%[[I]]]
// CHECK: memref.store %{{.+}}, %[[X]][%[[I]]]
// CHECK-NOT: gpu.launch
memref.global "private" constant @__kiln_weights : memref<64xi8> = dense<0> {alignment = 64 : i64}
func.func @main_graph(%x: memref<300xf32>, %w: memref<64xi8> {kiln.weights}) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %v = memref.view %w[%c0][] : memref<64xi8> to memref<16xf32>
    %m = arith.muli %bx, %sx : index
    %i = arith.addi %m, %tx : index
    %a = memref.load %v[%i] : memref<16xf32>
    memref.store %a, %x[%i] : memref<300xf32>
    gpu.terminator
  }
  return
}
