// RUN: kiln-opt %s --kiln-cpu-restride-gathers --canonicalize | FileCheck %s

// Rows 0, 2, 4, ... of an 11x5 buffer (x[::2]) viewed as 6x5: the offsets
// the vectorizer wrote are linear in the view's shape (row * 5 + column);
// they become row * 10 + column on a 1-D view of the same memory.
// CHECK-LABEL: func.func @every_other_row
// CHECK-SAME: (%[[X:.+]]: memref<11x5xf32>, %[[I:.+]]: vector<6x6xindex>
// CHECK-DAG: %[[TEN:.+]] = arith.constant dense<10> : vector<6x6xindex>
// CHECK-DAG: %[[FIVE:.+]] = arith.constant dense<5> : vector<6x6xindex>
// CHECK: %[[COL:.+]] = arith.remui %[[I]], %[[FIVE]] : vector<6x6xindex>
// CHECK: %[[ROW:.+]] = arith.divui %[[I]], %[[FIVE]] : vector<6x6xindex>
// CHECK: %[[R:.+]] = arith.muli %[[ROW]], %[[TEN]] : vector<6x6xindex>
// CHECK: %[[POS:.+]] = arith.addi %[[COL]], %[[R]] : vector<6x6xindex>
// CHECK: %[[FLAT:.+]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [55], strides: [1]
// CHECK: %[[CAST:.+]] = memref.cast %[[FLAT]]
// CHECK: vector.gather %[[CAST]][%c0] [%[[POS]]], %{{.+}}, %{{.+}} : memref<?xf32, strided<[1], offset: ?>>, vector<6x6xindex>
func.func @every_other_row(%x: memref<11x5xf32>, %i: vector<6x6xindex>,
                           %m: vector<6x6xi1>, %p: vector<6x6xf32>) -> vector<6x6xf32> {
  %c0 = arith.constant 0 : index
  %v = memref.subview %x[0, 0] [6, 5] [2, 1]
      : memref<11x5xf32> to memref<6x5xf32, strided<[10, 1]>>
  %g = vector.gather %v[%c0, %c0] [%i], %m, %p
      : memref<6x5xf32, strided<[10, 1]>>, vector<6x6xindex>, vector<6x6xi1>, vector<6x6xf32> into vector<6x6xf32>
  return %g : vector<6x6xf32>
}

// A contiguous buffer, and a box of whole rows (contiguous too), keep their
// gathers.
// CHECK-LABEL: func.func @contiguous
// CHECK-NOT: reinterpret_cast
// CHECK: vector.gather %arg0[%c0, %c0] [%arg1]
// CHECK: vector.gather %{{.+}}[%c0, %c0] [%arg1]
func.func @contiguous(%x: memref<11x5xf32>, %i: vector<8xindex>, %m: vector<8xi1>,
                      %p: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>) {
  %c0 = arith.constant 0 : index
  %a = vector.gather %x[%c0, %c0] [%i], %m, %p
      : memref<11x5xf32>, vector<8xindex>, vector<8xi1>, vector<8xf32> into vector<8xf32>
  %rows = memref.subview %x[2, 0] [4, 5] [1, 1]
      : memref<11x5xf32> to memref<4x5xf32, strided<[5, 1], offset: 10>>
  %b = vector.gather %rows[%c0, %c0] [%i], %m, %p
      : memref<4x5xf32, strided<[5, 1], offset: 10>>, vector<8xindex>, vector<8xi1>, vector<8xf32> into vector<8xf32>
  return %a, %b : vector<8xf32>, vector<8xf32>
}

// Three columns of a 4x5 buffer from the second (a partial box), read with
// i32 offsets from base position (1, 0): linear position 3 + i, split by the
// 3 columns, rows 5 apart, from element 1 of the buffer.
// CHECK-LABEL: func.func @columns
// CHECK-DAG: %[[FIVE:.+]] = arith.constant dense<5> : vector<4xindex>
// CHECK-DAG: %[[THREE:.+]] = arith.constant dense<3> : vector<4xindex>
// CHECK: %[[I:.+]] = arith.index_cast %{{.+}} : vector<4xi32> to vector<4xindex>
// CHECK: %[[L:.+]] = arith.addi %[[I]], %[[THREE]]
// CHECK: %[[COL:.+]] = arith.remui %[[L]], %[[THREE]]
// CHECK: %[[ROW:.+]] = arith.divui %[[L]], %[[THREE]]
// CHECK: %[[R:.+]] = arith.muli %[[ROW]], %[[FIVE]]
// CHECK: %[[POS:.+]] = arith.addi %[[COL]], %[[R]]
// CHECK: memref.reinterpret_cast %{{.+}} to offset: [1], sizes: [18], strides: [1]
// CHECK: vector.gather %{{.+}}[%c0] [%[[POS]]]
func.func @columns(%x: memref<4x5xf32>, %i: vector<4xi32>, %m: vector<4xi1>,
                   %p: vector<4xf32>) -> vector<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.subview %x[0, 1] [4, 3] [1, 1]
      : memref<4x5xf32> to memref<4x3xf32, strided<[5, 1], offset: 1>>
  %g = vector.gather %v[%c1, %c0] [%i], %m, %p
      : memref<4x3xf32, strided<[5, 1], offset: 1>>, vector<4xi32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  return %g : vector<4xf32>
}
