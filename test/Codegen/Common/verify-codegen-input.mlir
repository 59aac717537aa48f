// RUN: kiln-opt %s --split-input-file --kiln-verify-codegen-input --verify-diagnostics | FileCheck %s

// Linalg on tensors with the ops around it, a static signature, and a
// marker on the op it describes: code generation may take it.
// CHECK-LABEL: func.func @valid
#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>
func.func @valid(%x: tensor<4x2x4xi8>, %w: tensor<1x2x16x4xi8>) -> tensor<4x1x16xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<4x1x16xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<4x1x16xi32>) -> tensor<4x1x16xi32>
  %0 = linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<4x2x4xi8>, tensor<1x2x16x4xi8>) outs(%acc : tensor<4x1x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %o: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %o, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<4x1x16xi32>
  return %0 : tensor<4x1x16xi32>
}

// -----

// A graph op the lowering left behind.
func.func @graph_op_left(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is left for code generation, which takes linalg on tensors and the ops around it}}
  %0 = kiln.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// An entry function whose arena could not be planned.
// expected-error @+1 {{takes or returns 'tensor<?xf32>', not a tensor of static shape}}
func.func @dynamic_signature(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// -----

// A marker on an op it does not describe.
func.func @marker_on_wrong_op(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>) -> tensor<4x16xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<4x16xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<4x16xi32>) -> tensor<4x16xi32>
  // expected-error @+1 {{is marked kiln.int8_matmul but is not a linalg.generic}}
  %0 = linalg.matmul {kiln.int8_matmul} ins(%a, %b : tensor<4x8xi8>, tensor<8x16xi8>) outs(%acc : tensor<4x16xi32>) -> tensor<4x16xi32>
  return %0 : tensor<4x16xi32>
}

// -----

// A product marked for the bf16 kernel that computes in f32.
#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>
func.func @wrong_types(%x: tensor<4x2x2xf32>, %w: tensor<1x2x16x2xf32>) -> tensor<4x1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x1x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  // expected-error @+1 {{is marked kiln.bf16_matmul but computes 'f32' x 'f32' -> 'f32', not 'bf16' x 'bf16' -> 'f32'}}
  %0 = linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<4x2x2xf32>, tensor<1x2x16x2xf32>) outs(%acc : tensor<4x1x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %3 = arith.mulf %a, %b : f32
    %4 = arith.addf %o, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<4x1x16xf32>
  return %0 : tensor<4x1x16xf32>
}

// -----

// The dialect's attribute verifier: an unknown kiln.* attribute, and a
// known one with a value of the wrong kind.
func.func @unknown_marker(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown Kiln attribute 'kiln.int8_matmull'}}
  %0 = arith.addf %x, %x {kiln.int8_matmull} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @wrong_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{Kiln attribute 'kiln.fill_border' has a value of the wrong kind}}
  %0 = arith.addf %x, %x {kiln.fill_border = "all"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
