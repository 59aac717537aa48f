// RUN: kiln-opt %s --split-input-file --kiln-arena-allocation | FileCheck %s

// A function with guards reserves the first 64 bytes of the arena for the
// status word: buffers move up by 64, each guard call becomes a store of its
// number (1-based, across the module) and the messages go on the module. A
// check at the top of the function branches to a block that stores and
// returns, so nothing after a failed check runs; one inside a loop stays a
// store in its scf.if.
// CHECK: module attributes {kiln.arena_bytes = 128 : i64, kiln.guard_messages = ["first", "second", "in a loop"]}
// CHECK-NOT: __kiln_guard_failed
// CHECK-LABEL: func.func @guarded
// CHECK-SAME: %[[C:[^ ]+]]: i1
// CHECK-SAME: %[[ARENA:[^ ]+]]: memref<128xi8> {kiln.arena}
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[STATUS:.+]] = memref.view %[[ARENA]][%[[C0]]][] : memref<128xi8> to memref<1xi32>
// CHECK-DAG: memref.view %[[ARENA]][%[[C64]]][] : memref<128xi8> to memref<4xf32>
// CHECK: linalg.fill
// CHECK: cf.cond_br %[[C]], ^[[FAIL1:.+]], ^[[REST1:[^ ]+]]
// CHECK: ^[[FAIL1]]:
// CHECK: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK: memref.store %[[ONE]], %[[STATUS]][%[[C0]]] : memref<1xi32>
// CHECK-NEXT: return
// CHECK: ^[[REST1]]:
// CHECK: cf.cond_br %[[C]], ^[[FAIL2:.+]], ^[[REST2:[^ ]+]]
// CHECK: ^[[FAIL2]]:
// CHECK: %[[TWO:.+]] = arith.constant 2 : i32
// CHECK: memref.store %[[TWO]], %[[STATUS]][%[[C0]]] : memref<1xi32>
// CHECK-NEXT: return
// CHECK: ^[[REST2]]:
// CHECK: scf.for
// CHECK: scf.if %[[C]] {
// CHECK: %[[THREE:.+]] = arith.constant 3 : i32
// CHECK: memref.store %[[THREE]], %[[STATUS]][%[[C0]]] : memref<1xi32>
// CHECK: linalg.copy
// CHECK-NEXT: return
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
    scf.if %c {
      %i = arith.constant 0 : i32
      func.call @__kiln_guard_failed(%i) {kiln.guard_message = "second"} : (i32) -> ()
    }
    %lb = arith.constant 0 : index
    %ub = arith.constant 2 : index
    %st = arith.constant 1 : index
    scf.for %k = %lb to %ub step %st {
      scf.if %c {
        %i = arith.constant 0 : i32
        func.call @__kiln_guard_failed(%i) {kiln.guard_message = "in a loop"} : (i32) -> ()
      }
    }
    linalg.copy ins(%buf : memref<4xf32>) outs(%out : memref<4xf32>)
    return
  }
}

// -----

// An empty argument nobody reads becomes memref<0xT> (one bare pointer
// either way); the LLVM lowering rejects a zero inner dimension.
// CHECK-LABEL: func.func @empty_output
// CHECK-SAME: (%{{.+}}: memref<0xf32>, %{{.+}}: memref<2x0xf32>
func.func @empty_output(%out: memref<3x4x0xf32>, %used: memref<2x0xf32>) {
  %v = memref.collapse_shape %used [[0, 1]] : memref<2x0xf32> into memref<0xf32>
  return
}
