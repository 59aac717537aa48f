// RUN: kiln-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// kiln.gather_elements: round trip, and one case per shape error.

// CHECK-LABEL: func.func @round_trip
// CHECK: kiln.gather_elements %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x1xi64>) -> tensor<3x1xf32>
func.func @round_trip(%x: tensor<3x5xf32>, %i: tensor<3x1xi64>) -> tensor<3x1xf32> {
  %y = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x1xi64>) -> tensor<3x1xf32>
  return %y : tensor<3x1xf32>
}

// -----

func.func @axis(%x: tensor<3x5xf32>, %i: tensor<3x1xi64>) -> tensor<3x1xf32> {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.gather_elements %x, %i {axis = 2 : i64} : (tensor<3x5xf32>, tensor<3x1xi64>) -> tensor<3x1xf32>
  return %y : tensor<3x1xf32>
}

// -----

func.func @rank(%x: tensor<3x5xf32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+2 {{indices of rank 1 must have the input's rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3xi64>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Off the axis, the indices may not be larger than the input.
func.func @larger_off_axis(%x: tensor<3x5xf32>, %i: tensor<4x1xi64>) -> tensor<4x1xf32> {
  // expected-error @+2 {{indices shape [4,1] exceeds the input shape [3,5] in dimension 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<4x1xi64>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

// Clamping needs at least one element to clamp into.
func.func @empty_axis(%x: tensor<3x0xf32>, %i: tensor<3x1xi64>) -> tensor<3x1xf32> {
  // expected-error @+2 {{cannot gather from axis 1 of size 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x0xf32>, tensor<3x1xi64>) -> tensor<3x1xf32>
  return %y : tensor<3x1xf32>
}

// -----

func.func @index_type(%x: tensor<3x5xf32>, %i: tensor<3x1xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'kiln.gather_elements' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %y = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
  return %y : tensor<3x1xf32>
}

// -----

func.func @wrong_result(%x: tensor<3x5xf32>, %i: tensor<3x1xi64>) -> tensor<3x2xf32> {
  // expected-error @+2 {{'kiln.gather_elements' op inferred type(s) 'tensor<3x1xf32>' are incompatible with return type(s) of operation 'tensor<3x2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x1xi64>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// Neg, Abs and Sign take signed integers; other unary ops do not.
// CHECK-LABEL: func.func @int_unary
// CHECK: kiln.neg %{{.+}} : tensor<4xi32>
// CHECK: kiln.abs %{{.+}} : tensor<4xi32>
// CHECK: kiln.sign %{{.+}} : tensor<4xi32>
func.func @int_unary(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %a = kiln.neg %x : tensor<4xi32>
  %b = kiln.abs %x : tensor<4xi32>
  %c = kiln.sign %x : tensor<4xi32>
  return %a, %b, %c : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// -----

func.func @int_exp(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'kiln.exp' op operand #0 must be ranked tensor of floating-point values}}
  %a = kiln.exp %x : tensor<4xi32>
  return %a : tensor<4xi32>
}
