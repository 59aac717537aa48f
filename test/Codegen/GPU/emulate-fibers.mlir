// RUN: kiln-opt %s --kiln-gpu-emulate-on-host | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-emulate-on-host --kiln-cpu-outline-parallel-loops | FileCheck %s --check-prefix=OUTLINED

// A kernel with workgroup memory and a barrier: the workgroup buffer becomes
// one host buffer before the loops over the blocks, the block's threads an
// scf.forall marked kiln.fibers (x fastest), and gpu.barrier a call that
// switches fibers.
// CHECK: func.func private @__kiln_emu_barrier()
// CHECK-LABEL: func.func @shared(
// CHECK-SAME: %[[X:[^:]+]]: memref<128xf32>, %[[Y:[^:]+]]: memref<128xf32>)
// CHECK: %[[BUF:.+]] = memref.alloca() : memref<64xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[BX:[^ ]+]] =
// CHECK: scf.forall (%[[T:.+]]) in (64) {
// CHECK:   %[[TX:.+]] = arith.remui %[[T]], %{{.+}} : index
// CHECK:   memref.load %[[X]]
// CHECK:   memref.store %{{.+}}, %[[BUF]][%[[TX]]]
// CHECK:   func.call @__kiln_emu_barrier() : () -> ()
// CHECK:   memref.load %[[BUF]]
// CHECK:   memref.store %{{.+}}, %[[Y]]
// CHECK: } {kiln.fibers}
// CHECK-NOT: gpu.
// The outlined threads run through the fiber launcher, captured values
// (the block index and the host buffer) passed to it.
// OUTLINED: func.func private @__kiln_fiber_launch.shared_par0(index, {{.*}}memref<128xf32>, memref<64xf32>, memref<128xf32>)
// OUTLINED-LABEL: func.func @shared(
// OUTLINED: call @__kiln_fiber_launch.shared_par0(
// OUTLINED-NOT: scf.forall
// OUTLINED-LABEL: func.func private @shared_par0(
// OUTLINED: call @__kiln_emu_barrier()
func.func @shared(%x: memref<128xf32>, %y: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%buf : memref<64xf32, #gpu.address_space<workgroup>>) {
    %base = arith.muli %bx, %sx : index
    %i = arith.addi %base, %tx : index
    %v = memref.load %x[%i] : memref<128xf32>
    memref.store %v, %buf[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %c63 = arith.constant 63 : index
    %r = arith.subi %c63, %tx : index
    %w = memref.load %buf[%r] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %w, %y[%i] : memref<128xf32>
    gpu.terminator
  }
  return
}
