// RUN: kiln-opt %s --kiln-cpu-lower-parallel-launches | FileCheck %s

// A launcher call stores the captured values into 8-byte slots and hands a
// trampoline to the runtime; the trampoline loads them back.
// CHECK: llvm.func @__kiln_parallel_for(!llvm.ptr, !llvm.ptr, i64)
// CHECK-NOT: __kiln_parallel_launch
// CHECK: llvm.func internal @f_par0.task(%[[CTX:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[E:.*]]: i64)
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[CTX]][0]
// CHECK: %[[P:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[CTX]][1]
// CHECK: %[[X:.*]] = llvm.load %[[S1]] : !llvm.ptr -> f32
// CHECK: llvm.call @f_par0(%[[B]], %[[E]], %[[P]], %[[X]])
// CHECK-LABEL: llvm.func @f(
// CHECK: %[[SLOTS:.*]] = llvm.mlir.constant(2 : i64)
// CHECK: %[[C:.*]] = llvm.alloca %[[SLOTS]] x i64
// CHECK: llvm.store %arg0, %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK: %[[FN:.*]] = llvm.mlir.addressof @f_par0.task
// CHECK: llvm.call @__kiln_parallel_for(%[[FN]], %[[C]], %{{.*}})

llvm.func @__kiln_parallel_launch.f_par0(i64, !llvm.ptr, f32)
llvm.func @f_par0(%b: i64, %e: i64, %p: !llvm.ptr, %x: f32) attributes {sym_visibility = "private"} {
  llvm.return
}
llvm.func @f(%p: !llvm.ptr) {
  %n = llvm.mlir.constant(8 : i64) : i64
  %x = llvm.mlir.constant(2.0 : f32) : f32
  llvm.call @__kiln_parallel_launch.f_par0(%n, %p, %x) : (i64, !llvm.ptr, f32) -> ()
  llvm.return
}
