// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-cpu-pointer-arguments{min-arguments=3}))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(finalize-memref-to-llvm,func.func(kiln-cpu-pointer-arguments{min-arguments=3}),convert-arith-to-llvm,convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},reconcile-unrealized-casts)' | FileCheck %s --check-prefix=LLVM

// Three static memref arguments: each becomes a pointer with its descriptor
// built at the top, in argument order; the non-memref argument stays.
// CHECK-LABEL: func.func @graph(
// CHECK-SAME:    %[[A:.*]]: !llvm.ptr, %[[B:.*]]: !llvm.ptr, %[[N:.*]]: index, %[[C:.*]]: !llvm.ptr)
// CHECK:         llvm.insertvalue %[[A]], %{{.*}}[0]
// CHECK:         llvm.insertvalue %[[A]], %{{.*}}[1]
// CHECK:         %[[MA:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<8xf32>
// CHECK:         llvm.insertvalue %[[B]], %{{.*}}[0]
// CHECK:         %[[MB:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<8xf32>
// CHECK:         llvm.insertvalue %[[C]], %{{.*}}[0]
// CHECK:         llvm.mlir.constant(4 : index)
// CHECK:         %[[MC:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<2x4xf32>
// CHECK:         %[[V:.*]] = memref.load %[[MA]][%[[N]]]
// CHECK:         memref.store %[[V]], %[[MB]][%[[N]]]
// CHECK:         memref.store %[[V]], %[[MC]]
// Converted to the LLVM dialect, the same bare-pointer signature, no casts.
// LLVM-LABEL: llvm.func @graph(
// LLVM-SAME:    %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: !llvm.ptr)
// LLVM-NOT:   unrealized_conversion_cast
func.func @graph(%a: memref<8xf32>, %b: memref<8xf32>, %n: index,
                 %c: memref<2x4xf32>) {
  %v = memref.load %a[%n] : memref<8xf32>
  memref.store %v, %b[%n] : memref<8xf32>
  %c0 = arith.constant 0 : index
  memref.store %v, %c[%c0, %c0] : memref<2x4xf32>
  return
}

// -----

// Fewer memrefs than min-arguments: unchanged (and convert-func-to-llvm
// does the usual).
// CHECK-LABEL: func.func @few(
// CHECK-SAME:    memref<8xf32>, %{{.*}}: memref<8xf32>, %{{.*}}: index)
// CHECK-NOT:     unrealized_conversion_cast
// LLVM-LABEL: llvm.func @few(
// LLVM-SAME:    %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64)
// LLVM-NOT:   unrealized_conversion_cast
func.func @few(%a: memref<8xf32>, %b: memref<8xf32>, %n: index) {
  %v = memref.load %a[%n] : memref<8xf32>
  memref.store %v, %b[%n] : memref<8xf32>
  return
}
