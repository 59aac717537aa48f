// RUN: kiln-opt %s --kiln-outline-parallel-loops | FileCheck %s

// The body of a top-level forall moves into @f_par0, which runs iterations
// [begin, end); constants and views are cloned, memrefs passed.
// CHECK: func.func private @__kiln_parallel_launch.f_par0(index, memref<64x32xf32>, memref<64x32xf32>)
// CHECK-LABEL: func.func @f(
// CHECK: %[[VIEW:.*]] = memref.view
// CHECK: %[[N:.*]] = arith.constant 8 : index
// CHECK: call @__kiln_parallel_launch.f_par0(%[[N]], %arg0, %[[VIEW]])
// CHECK-NOT: scf.forall
// CHECK: memref.copy
// CHECK-LABEL: func.func private @f_par0(%arg0: index, %arg1: index, %arg2: memref<64x32xf32>, %arg3: memref<64x32xf32>) attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK: %[[TWO:.*]] = arith.constant 2.0
// CHECK: scf.for %[[K:.*]] = %arg0 to %arg1
// CHECK: %[[I:.*]] = arith.muli %[[K]], %{{.*}}
// CHECK: memref.subview %arg2[%[[I]], 0]
// CHECK: memref.subview %arg3[%[[I]], 0]
// CHECK: arith.mulf %{{.*}}, %[[TWO]]

func.func @f(%in: memref<64x32xf32>, %out: memref<64x32xf32>, %arena: memref<8192xi8>) {
  %c0 = arith.constant 0 : index
  %buf = memref.view %arena[%c0][] : memref<8192xi8> to memref<64x32xf32>
  %two = arith.constant 2.0 : f32
  scf.forall (%i) = (0) to (64) step (8) {
    %src = memref.subview %in[%i, 0] [8, 32] [1, 1] : memref<64x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
    %dst = memref.subview %buf[%i, 0] [8, 32] [1, 1] : memref<64x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%src : memref<8x32xf32, strided<[32, 1], offset: ?>>) outs(%dst : memref<8x32xf32, strided<[32, 1], offset: ?>>) {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %two : f32
      linalg.yield %m : f32
    }
  }
  memref.copy %buf, %out : memref<64x32xf32> to memref<64x32xf32>
  return
}

// CHECK-LABEL: func.func @nested
// CHECK-NOT: scf.forall
// CHECK-NOT: call
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store

// A forall nested in a loop runs sequentially.
func.func @nested(%out: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  scf.for %j = %c0 to %c4 step %c1 {
    scf.forall (%i) in (16) {
      memref.store %z, %out[%j, %i] : memref<4x16xf32>
    }
  }
  return
}

// A fixed-size stack buffer at the top of a parallel body (an AMX kernel's
// scratch) is made once per task, before its loop over iterations: one made
// in every iteration would take more stack each time. In a forall that runs
// sequentially (nested in a loop here), it moves before that forall.
// CHECK-LABEL: func.func @scratch
// CHECK: call @__kiln_parallel_launch.scratch_par0
// CHECK: scf.for
// CHECK-NEXT: %[[S2:.+]] = memref.alloca() : memref<16xf32>
// CHECK: scf.for
// CHECK-NEXT: memref.store %{{.+}}, %[[S2]]
// CHECK-LABEL: func.func private @scratch_par0
// CHECK: %[[S:.+]] = memref.alloca() : memref<16xf32>
// CHECK: scf.for
// CHECK-NEXT: memref.store %{{.+}}, %[[S]]
// CHECK: memref.copy %[[S]]
func.func @scratch(%out: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  scf.forall (%i) in (4) {
    %s = memref.alloca() : memref<16xf32>
    memref.store %z, %s[%i] : memref<16xf32>
    %row = memref.subview %out[%i, 0] [1, 16] [1, 1] : memref<4x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    memref.copy %s, %row : memref<16xf32> to memref<16xf32, strided<[1], offset: ?>>
  }
  scf.for %j = %c0 to %c4 step %c1 {
    scf.forall (%i) in (16) {
      %s = memref.alloca() : memref<16xf32>
      memref.store %z, %s[%i] : memref<16xf32>
    }
  }
  return
}

// A run-time trip count (a loop over a symbolic dimension, docs/shapes.md):
// the launcher gets ceildiv(max(n - 0, 0), 2), computed before the call.
// CHECK-LABEL: func.func @runtime_count
// CHECK-SAME: (%[[N:.+]]: index, %[[OUT:.+]]: memref<64x16xf32>)
// CHECK: %[[D:.+]] = arith.subi %[[N]], %c0
// CHECK: %[[P:.+]] = arith.maxsi %[[D]], %c0
// CHECK: %[[COUNT:.+]] = arith.ceildivsi %[[P]], %c2
// CHECK: call @__kiln_parallel_launch.runtime_count_par0(%[[COUNT]], %[[OUT]])
// CHECK-NOT: scf.forall
func.func @runtime_count(%n: index, %out: memref<64x16xf32>) {
  %one = arith.constant 1.0 : f32
  scf.forall (%i) = (0) to (%n) step (2) {
    %row = memref.subview %out[%i, 0] [2, 16] [1, 1] : memref<64x16xf32> to memref<2x16xf32, strided<[16, 1], offset: ?>>
    linalg.fill ins(%one : f32) outs(%row : memref<2x16xf32, strided<[16, 1], offset: ?>>)
  }
  return
}

// A loop made for threads from an op's work at the symbols' maxima, with
// the test at the run-time sizes before it (kiln.parallel_if, made by
// kiln-cpu-tile-and-vectorize): the pool runs it where the test holds, this
// thread where it does not, through the same outlined body; the test is
// gone after the pass.
// CHECK-LABEL: func.func @run_time_fork(
// CHECK-SAME: %[[OUT:[^:]+]]: memref<4x16xf32>, %[[PAYS:[^:]+]]: i1
// CHECK-NOT: kiln.parallel_if
// CHECK: %[[N:.*]] = arith.constant 4 : index
// CHECK: scf.if %[[PAYS]] {
// CHECK-NEXT: call @__kiln_parallel_launch.run_time_fork_par0(%[[N]], %[[OUT]])
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT: call @run_time_fork_par0(%[[Z]], %[[N]], %[[OUT]])
// CHECK-NEXT: }
// A loop whose test is another's runs as before.
// CHECK: call @__kiln_parallel_launch.run_time_fork_par1(
// CHECK-NOT: kiln.parallel_if
// CHECK: return
// A body called from both the task and the caller is not inlined into
// either, so its code exists once; a body only the task calls may be.
// CHECK: func.func private @run_time_fork_par1(%arg0: index, %arg1: index, %arg2: memref<4x16xf32>) attributes {llvm.linkage = #llvm.linkage<internal>} {
// CHECK: func.func private @run_time_fork_par0(%arg0: index, %arg1: index, %arg2: memref<4x16xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]} {
func.func @run_time_fork(%out: memref<4x16xf32>, %pays: i1) {
  %one = arith.constant 1.0 : f32
  kiln.parallel_if %pays {loop = 0 : i64}
  scf.forall (%i) in (4) {
    %row = memref.subview %out[%i, 0] [1, 16] [1, 1] : memref<4x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    linalg.fill ins(%one : f32) outs(%row : memref<16xf32, strided<[1], offset: ?>>)
  } {kiln.parallel_if = 0 : i64}
  scf.forall (%i) in (4) {
    %row = memref.subview %out[%i, 0] [1, 16] [1, 1] : memref<4x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    linalg.fill ins(%one : f32) outs(%row : memref<16xf32, strided<[1], offset: ?>>)
  } {kiln.parallel_if = 7 : i64}
  return
}
