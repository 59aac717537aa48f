// RUN: kiln-opt %s --split-input-file --kiln-gpu-pack-weights -verify-diagnostics | FileCheck %s

// Every constant global becomes a 64-byte aligned piece of one blob; each
// get_global becomes a view of the new trailing weights argument. The blob
// holds 16 bytes of @a, padding to 64, then 8 bytes of the splat @b, padding.
// CHECK-LABEL: memref.global "private" constant @__kiln_weights : memref<128xi8> = dense_resource<kiln_weights> {alignment = 64 : i64}
// CHECK-NOT: memref.global
// CHECK: func.func @main_graph(%[[X:.+]]: memref<4xf32>, %[[ARENA:.+]]: memref<64xi8> {kiln.arena}, %[[W:.+]]: memref<128xi8> {kiln.weights})
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: memref.view %[[W]][%[[C0]]][] : memref<128xi8> to memref<4xf32>
// CHECK-DAG: memref.view %[[W]][%[[C64]]][] : memref<128xi8> to memref<2xi32>
// CHECK: kiln_weights: "0x010000000000803F000000400000404000008040{{(00)+}}0700000007000000{{(00)+}}"
memref.global "private" constant @a : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]> {alignment = 64 : i64}
memref.global "private" constant @b : memref<2xi32> = dense<7> {alignment = 64 : i64}
func.func @main_graph(%x: memref<4xf32>, %arena: memref<64xi8> {kiln.arena}) {
  %0 = memref.get_global @a : memref<4xf32>
  %1 = memref.get_global @b : memref<2xi32>
  linalg.copy ins(%0 : memref<4xf32>) outs(%x : memref<4xf32>)
  return
}

// -----

// Booleans are one byte each on the device.
// CHECK-LABEL: memref.global "private" constant @__kiln_weights : memref<64xi8>
// CHECK: func.func @bools(%{{.+}}: memref<64xi8> {kiln.weights})
// CHECK: kiln_weights: "0x0100000001000100
memref.global "private" constant @m : memref<3xi1> = dense<[true, false, true]>
func.func @bools() {
  %0 = memref.get_global @m : memref<3xi1>
  return
}

// -----

// A global that is not a constant cannot be shipped as weights.
// expected-error@+1 {{global 'state' is not a constant}}
memref.global "private" @state : memref<4xf32> = dense<0.0>
func.func @mutable() {
  return
}
