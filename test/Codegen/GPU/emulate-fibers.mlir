// RUN: kiln-opt %s --kiln-gpu-emulate-on-host | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-emulate-on-host --kiln-outline-parallel-loops | FileCheck %s --check-prefix=OUTLINED

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

// Warp-level matrix operations: every lane holds a whole fragment in a
// buffer of its own. The zero accumulator (shared by two uses after CSE) is
// filled into one buffer per use; the load copies 16 x 16 elements; the
// multiply-accumulate updates the accumulator's buffer in place, with the
// fp16 products widened to fp32; the loop carries buffers.
// CHECK-LABEL: func.func @fragments(
// CHECK: scf.forall
// CHECK-DAG: %[[ACC0:.+]] = memref.alloca() : memref<16x16xf32>
// CHECK-DAG: %[[ACC1:.+]] = memref.alloca() : memref<16x16xf32>
// CHECK-DAG: %[[FA:.+]] = memref.alloca() : memref<16x16xf16>
// CHECK: scf.for %{{.+}} = {{.*}} -> (memref<16x16xf32>, memref<16x16xf32>)
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: gpu.subgroup_mma
// CHECK: } {kiln.fibers}
func.func @fragments(%a: memref<16x16xf16>, %out: memref<16x32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%sa : memref<16x16xf16, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %v = memref.load %a[%tx, %c0] : memref<16x16xf16>
    memref.store %v, %sa[%tx, %c0] : memref<16x16xf16, #gpu.address_space<workgroup>>
    gpu.barrier
    %z = arith.constant 0.0 : f32
    %acc = gpu.subgroup_mma_constant_matrix %z : !gpu.mma_matrix<16x16xf32, "COp">
    %r:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%x = %acc, %y = %acc) -> (!gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">) {
      %fa = gpu.subgroup_mma_load_matrix %sa[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "AOp">
      %fb = gpu.subgroup_mma_load_matrix %sa[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "BOp">
      %x2 = gpu.subgroup_mma_compute %fa, %fb, %x : !gpu.mma_matrix<16x16xf16, "AOp">, !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
      %y2 = gpu.subgroup_mma_compute %fa, %fb, %y : !gpu.mma_matrix<16x16xf16, "AOp">, !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
      scf.yield %x2, %y2 : !gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">
    }
    gpu.subgroup_mma_store_matrix %r#0, %out[%c0, %c0] {leadDimension = 32 : index} : !gpu.mma_matrix<16x16xf32, "COp">, memref<16x32xf32>
    gpu.subgroup_mma_store_matrix %r#1, %out[%c0, %c16] {leadDimension = 32 : index} : !gpu.mma_matrix<16x16xf32, "COp">, memref<16x32xf32>
    gpu.terminator
  }
  return
}
