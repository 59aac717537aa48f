// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-split-empty-tensors))" | FileCheck %s

// One tensor.empty shared by two fills (as CSE leaves it) becomes one empty
// per use, each right before the op that fills it.
// CHECK-LABEL: func.func @shared
// CHECK: %[[E1:.+]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: linalg.fill {{.+}} outs(%[[E1]]
// CHECK: %[[E2:.+]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: linalg.fill {{.+}} outs(%[[E2]]
func.func @shared(%a: f32, %b: f32) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %x = linalg.fill ins(%a : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %y = linalg.fill ins(%b : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %x, %y : tensor<8xf32>, tensor<8xf32>
}

// A concatenation whose first input is written into a slice of the empty
// result (as the in-place concatenation leaves it): the slice becomes an
// empty tensor of its own type, which eliminate-empty-tensors can then
// replace with the insert's destination (a slice would hide it, and
// bufferization would copy the input into the result).
// CHECK-LABEL: func.func @concat_slice
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[PART:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[X:.+]] = linalg.fill {{.+}} outs(%[[PART]]
// CHECK: %[[WHOLE:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: tensor.insert_slice %[[X]] into %[[WHOLE]][0, 0] [4, 8] [1, 1]
func.func @concat_slice(%a: f32) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x16xf32>
  %s = tensor.extract_slice %e[0, 0] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %x = linalg.fill ins(%a : f32) outs(%s : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tensor.insert_slice %x into %e[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// The same with a symbolic row count (docs/shapes.md): the slice's run-time
// size sizes the new empty tensor.
// CHECK-LABEL: func.func @concat_slice_dynamic
// CHECK-SAME: (%{{.+}}: f32, %[[N:.+]]: index)
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[PART:.+]] = tensor.empty(%[[N]]) : tensor<?x8xf32>
// CHECK-NEXT: %[[X:.+]] = linalg.fill {{.+}} outs(%[[PART]]
// CHECK: %[[WHOLE:.+]] = tensor.empty(%[[N]]) : tensor<?x16xf32>
// CHECK-NEXT: tensor.insert_slice %[[X]] into %[[WHOLE]][0, 0] [%[[N]], 8] [1, 1]
func.func @concat_slice_dynamic(%a: f32, %n: index) -> tensor<?x16xf32> {
  %e = tensor.empty(%n) : tensor<?x16xf32>
  %s = tensor.extract_slice %e[0, 0] [%n, 8] [1, 1] : tensor<?x16xf32> to tensor<?x8xf32>
  %x = linalg.fill ins(%a : f32) outs(%s : tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = tensor.insert_slice %x into %e[0, 0] [%n, 8] [1, 1] : tensor<?x8xf32> into tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// An empty written in one branch of an scf.if and yielded unchanged by the
// other (a Compress of one row, its loop folded away) stays one empty
// before the if. An empty in each branch became a buffer the if yields out
// of its region, which the arena refuses ("allocated inside a loop").
// CHECK-LABEL: func.func @branches_share
// CHECK: %[[E:.+]] = tensor.empty(%{{.+}}) : tensor<?x8xf32>
// CHECK-NEXT: scf.if
// CHECK-NOT: tensor.empty
// CHECK: linalg.fill {{.+}} outs(%[[E]]
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[E]]
func.func @branches_share(%c: i1, %n: index, %a: f32) -> tensor<?x8xf32> {
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %r = scf.if %c -> (tensor<?x8xf32>) {
    %f = linalg.fill ins(%a : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
    scf.yield %f : tensor<?x8xf32>
  } else {
    scf.yield %e : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}
