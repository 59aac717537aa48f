// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg | FileCheck %s

// A guard and-reduces its condition and, when that is false, calls the
// placeholder the arena pass turns into a status-word store; the message
// rides on the call.
// CHECK-LABEL: func.func private @__kiln_guard_failed(i32)
// CHECK-LABEL: func.func @guard
// CHECK-SAME: (%[[OK:.+]]: tensor<3xi1>)
// CHECK: %[[ALL:.+]] = linalg.generic {{.+}} iterator_types = ["reduction"]} ins(%[[OK]] : tensor<3xi1>)
// CHECK: arith.andi
// CHECK: %[[V:.+]] = tensor.extract %[[ALL]][] : tensor<i1>
// CHECK: %[[BAD:.+]] = arith.xori %[[V]], %{{.+}} : i1
// CHECK: scf.if %[[BAD]] {
// CHECK: func.call @__kiln_guard_failed(%{{.+}}) {kiln.guard_message = "node 'r': bad shape"} : (i32) -> ()
// CHECK-NOT: kiln.guard
func.func @guard(%ok: tensor<3xi1>) {
  kiln.guard %ok {message = "node 'r': bad shape"} : tensor<3xi1>
  return
}

// -----

// kiln.expand is a broadcasting copy.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @expand
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]]
// CHECK-SAME: ins(%{{.+}} : tensor<3x1xf32>) outs(%{{.+}} : tensor<2x3x4xf32>)
func.func @expand(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %y = kiln.expand %x : tensor<3x1xf32> to tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}
