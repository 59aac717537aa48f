// RUN: kiln-opt %s --kiln-cpu-fill-borders | FileCheck %s

// A fill whose interior box [0, 1, 1, 0] + [1, 4, 4, 16] is written later
// fills its border only: the rows above and below the box, then the columns
// left and right of it within the box's rows. 1x6x6x16 = 576 values, of
// which 320 are border.
// CHECK-LABEL: func.func @padded
// CHECK-SAME: (%[[B:.+]]: memref<1x6x6x16xf32>)
// CHECK: %[[TOP:.+]] = memref.subview %[[B]][0, 0, 0, 0] [1, 1, 6, 16] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[TOP]] :
// CHECK: %[[BOTTOM:.+]] = memref.subview %[[B]][0, 5, 0, 0] [1, 1, 6, 16] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[BOTTOM]] :
// CHECK: %[[LEFT:.+]] = memref.subview %[[B]][0, 1, 0, 0] [1, 4, 1, 16] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[LEFT]] :
// CHECK: %[[RIGHT:.+]] = memref.subview %[[B]][0, 1, 5, 0] [1, 4, 1, 16] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[RIGHT]] :
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @padded(%b: memref<1x6x6x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {kiln.fill_border = array<i64: 0, 1, 1, 0, 1, 4, 4, 16>} ins(%zero : f32) outs(%b : memref<1x6x6x16xf32>)
  return
}

// An unmarked fill stays as it is.
// CHECK-LABEL: func.func @plain
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : memref<4x4xf32>)
func.func @plain(%b: memref<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%b : memref<4x4xf32>)
  return
}

// Padding that only meets zero weights (static int8's K padding) is not
// filled at all once its interior is known to be overwritten.
// CHECK-LABEL: func.func @unread
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @unread(%b: memref<16x64xi8>) {
  %zero = arith.constant 0 : i8
  linalg.fill {kiln.fill_border = array<i64: 0, 0, 16, 16>, kiln.unread_padding} ins(%zero : i8) outs(%b : memref<16x64xi8>)
  return
}

// Unread padding whose interior is not known to be overwritten (no
// kiln.fill_border) keeps its whole fill.
// CHECK-LABEL: func.func @unread_unboxed
// CHECK: linalg.fill {kiln.unread_padding} ins(%{{.+}} : i8) outs(%{{.+}} : memref<16x64xi8>)
func.func @unread_unboxed(%b: memref<16x64xi8>) {
  %zero = arith.constant 0 : i8
  linalg.fill {kiln.unread_padding} ins(%zero : i8) outs(%b : memref<16x64xi8>)
  return
}

// A run-time height (docs/shapes.md): the box's height is the buffer's minus
// its offset 1 and the trailing border 1; the bottom slab starts at the
// height minus 1.
// CHECK-LABEL: func.func @dynamic_height
// CHECK-SAME: (%[[B:.+]]: memref<1x?x6x16xf32>)
// CHECK: %[[H:.+]] = memref.dim %[[B]], %c1
// CHECK: %[[INNER:.+]] = arith.subi %[[H]], %c2
// CHECK: %[[END:.+]] = arith.subi %[[H]], %c1
// CHECK: %[[TOP:.+]] = memref.subview %[[B]][0, 0, 0, 0] [1, 1, 6, 16] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[TOP]] :
// CHECK: %[[BOTTOM:.+]] = memref.subview %[[B]][0, %[[END]], 0, 0] [1, 1, 6, 16] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[BOTTOM]] :
// CHECK: %[[LEFT:.+]] = memref.subview %[[B]][0, 1, 0, 0] [1, %[[INNER]], 1, 16] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[LEFT]] :
// CHECK: %[[RIGHT:.+]] = memref.subview %[[B]][0, 1, 5, 0] [1, %[[INNER]], 1, 16] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[RIGHT]] :
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @dynamic_height(%b: memref<1x?x6x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {kiln.fill_border = array<i64: 0, 1, 1, 0, 1, -9223372036854775808, 4, 16, 0, 1, 1, 0>} ins(%zero : f32) outs(%b : memref<1x?x6x16xf32>)
  return
}

// A run-time batch the box spans whole (offset 0, no trailing border): no
// slab along it; the top, bottom, left and right slabs span the batch.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK-SAME: (%[[B:.+]]: memref<?x?x?x16xf32>)
// CHECK: %[[N:.+]] = memref.dim %[[B]], %c0
// CHECK-COUNT-4: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : memref<{{.+}}, strided<
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @dynamic_batch(%b: memref<?x?x?x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {kiln.fill_border = array<i64: 0, 1, 1, 0, -9223372036854775808, -9223372036854775808, -9223372036854775808, 16, 0, 1, 1, 0>} ins(%zero : f32) outs(%b : memref<?x?x?x16xf32>)
  return
}
