// RUN: kiln-opt %s --split-input-file | kiln-opt --split-input-file | FileCheck %s
// RUN: kiln-opt %s --split-input-file --canonicalize | FileCheck %s --check-prefix=CANON

// kiln.guard and kiln.expand round-trip.
// CHECK-LABEL: func.func @guard_and_expand
// CHECK: kiln.guard %{{.+}} {message = "shape must be [2, 3]"} : tensor<2xi1>
// CHECK: kiln.expand %{{.+}} : tensor<3x1xf32> to tensor<2x3x4xf32>
func.func @guard_and_expand(%ok: tensor<2xi1>, %x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  kiln.guard %ok {message = "shape must be [2, 3]"} : tensor<2xi1>
  %y = kiln.expand %x : tensor<3x1xf32> to tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// A guard on a constant true condition checks nothing and goes; one that may
// fail stays even though nothing uses it.
// CANON-LABEL: func.func @guards
// CANON-NOT: kiln.guard {{.+}}"always"
// CANON: kiln.guard %{{.+}} {message = "maybe"}
func.func @guards(%ok: tensor<i1>) {
  %t = kiln.constant dense<true> : tensor<3xi1>
  kiln.guard %t {message = "always"} : tensor<3xi1>
  kiln.guard %ok {message = "maybe"} : tensor<i1>
  return
}

// -----

// An expand to the same type folds away; a splat constant expands at compile
// time.
// CANON-LABEL: func.func @expand_folds
// CANON-NOT: kiln.expand
// CANON: kiln.constant dense<2.000000e+00> : tensor<4x3xf32>
func.func @expand_folds(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  %y = kiln.expand %x : tensor<3xf32> to tensor<3xf32>
  %c = kiln.constant dense<2.0> : tensor<3xf32>
  %z = kiln.expand %c : tensor<3xf32> to tensor<4x3xf32>
  return %y, %z : tensor<3xf32>, tensor<4x3xf32>
}
