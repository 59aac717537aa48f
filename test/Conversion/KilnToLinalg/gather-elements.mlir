// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg | FileCheck %s

// GatherElements is a generic over the indices: element (i, j) reads
// x[i, clamp(wrap(idx[i, j]))] along the axis (wrap adds 5 to a negative
// index, clamp keeps it in [0, 4]), so no index reads outside the input.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @gather_elements
// CHECK-SAME: (%[[X:.+]]: tensor<3x5xf32>, %[[I:.+]]: tensor<3x2xi32>)
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[I]] : tensor<3x2xi32>) outs(%{{.+}} : tensor<3x2xf32>)
// CHECK: ^bb0(%[[IN:.+]]: i32, %{{.+}}: f32):
// CHECK-DAG: %[[RAW:.+]] = arith.index_cast %[[IN]] : i32 to index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C5:.+]] = arith.constant 5 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[RAW]], %[[C0]] : index
// CHECK: %[[WRAPPED:.+]] = arith.addi %[[RAW]], %[[C5]] : index
// CHECK: %[[SEL:.+]] = arith.select %[[NEG]], %[[WRAPPED]], %[[RAW]] : index
// CHECK: %[[LO:.+]] = arith.maxsi %[[SEL]], %[[C0]] : index
// CHECK: %[[COL:.+]] = arith.minsi %[[LO]], %[[C4]] : index
// CHECK: %[[ROW:.+]] = linalg.index 0 : index
// CHECK: %[[E:.+]] = tensor.extract %[[X]][%[[ROW]], %[[COL]]] : tensor<3x5xf32>
// CHECK: linalg.yield %[[E]] : f32
// CHECK: return %[[Y]]
func.func @gather_elements(%x: tensor<3x5xf32>, %i: tensor<3x2xi32>) -> tensor<3x2xf32> {
  %y = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x2xi32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// Along axis 0 of a 3-D input, the other two coordinates are the result's.
// CHECK-LABEL: func.func @gather_elements_axis0
// CHECK-SAME: (%[[X:.+]]: tensor<4x2x3xi64>, %[[I:.+]]: tensor<1x2x2xi64>)
// CHECK: arith.minsi
// CHECK: %[[D1:.+]] = linalg.index 1 : index
// CHECK: %[[D2:.+]] = linalg.index 2 : index
// CHECK: tensor.extract %[[X]][%{{.+}}, %[[D1]], %[[D2]]] : tensor<4x2x3xi64>
// CHECK: -> tensor<1x2x2xi64>
func.func @gather_elements_axis0(%x: tensor<4x2x3xi64>, %i: tensor<1x2x2xi64>) -> tensor<1x2x2xi64> {
  %y = kiln.gather_elements %x, %i {axis = 0 : i64} : (tensor<4x2x3xi64>, tensor<1x2x2xi64>) -> tensor<1x2x2xi64>
  return %y : tensor<1x2x2xi64>
}

// -----

// Neg, Abs and Sign on signed integers.
// CHECK-LABEL: func.func @int_unary
// CHECK: %[[Z:.+]] = arith.constant 0 : i64
// CHECK: arith.subi %[[Z]], %{{.+}} : i64
// CHECK: %[[Z2:.+]] = arith.constant 0 : i64
// CHECK: %[[N:.+]] = arith.subi %[[Z2]], %[[IN:.+]] : i64
// CHECK: arith.maxsi %[[IN]], %[[N]] : i64
// CHECK: %[[LT:.+]] = arith.cmpi slt
// CHECK: %[[GT:.+]] = arith.cmpi sgt
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[M1:.+]] = arith.constant -1 : i64
// CHECK: %[[S:.+]] = arith.select %[[LT]], %[[M1]], %[[ZERO]] : i64
// CHECK: %[[P1:.+]] = arith.constant 1 : i64
// CHECK: arith.select %[[GT]], %[[P1]], %[[S]] : i64
func.func @int_unary(%x: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
  %a = kiln.neg %x : tensor<4xi64>
  %b = kiln.abs %x : tensor<4xi64>
  %c = kiln.sign %x : tensor<4xi64>
  return %a, %b, %c : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}
