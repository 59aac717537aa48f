// RUN: kiln-opt %s --kiln-arena-allocation="return-at-failed-guard=false" | FileCheck %s

// The GPU target's host launches every kernel without reading device memory
// between them: a top-level check stays an scf.if that stores its number in
// the status word, and the ops after it stay in the function's one block
// (a cf.cond_br there made every guarded model fail to map to kernels).
// CHECK-LABEL: func.func @guarded
// CHECK-SAME: %[[C:[^ ]+]]: i1
// CHECK-NOT: cf.cond_br
// CHECK: %[[STATUS:.+]] = memref.view %{{.+}}[%{{.+}}][] : memref<128xi8> to memref<1xi32>
// CHECK: linalg.fill
// CHECK: scf.if %[[C]] {
// CHECK: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK: memref.store %[[ONE]], %[[STATUS]]
// CHECK: }
// CHECK-NEXT: linalg.copy
// CHECK-NEXT: return
// CHECK-NOT: ^bb
module {
  func.func private @__kiln_guard_failed(i32)
  func.func @guarded(%c: i1, %out: memref<4xf32>) {
    %buf = memref.alloc() : memref<4xf32>
    %z = arith.constant 0.0 : f32
    linalg.fill ins(%z : f32) outs(%buf : memref<4xf32>)
    scf.if %c {
      %i = arith.constant 0 : i32
      func.call @__kiln_guard_failed(%i) {kiln.guard_message = "first"} : (i32) -> ()
    }
    linalg.copy ins(%buf : memref<4xf32>) outs(%out : memref<4xf32>)
    return
  }
}
