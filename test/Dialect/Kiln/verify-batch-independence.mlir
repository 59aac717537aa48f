// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-verify-batch-independence=batch=7

// An MLP, an attention-style product and an embedding lookup keep samples
// apart: no diagnostics.
func.func @mlp(%x: tensor<7x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<7x8xf32> {
  %0 = kiln.gemm %x, %w, %b {trans_b = true} : (tensor<7x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<7x8xf32>
  %1 = kiln.relu %0 : tensor<7x8xf32>
  %2 = kiln.softmax %1 {axis = 1 : i64} : tensor<7x8xf32>
  return %2 : tensor<7x8xf32>
}

// -----

func.func @attention(%q: tensor<7x4x5xf32>, %k: tensor<7x5x4xf32>, %ids: tensor<7x4xi64>, %table: tensor<10x5xf32>) -> (tensor<7x4x4xf32>, tensor<7x20xf32>) {
  %0 = kiln.matmul %q, %k : (tensor<7x4x5xf32>, tensor<7x5x4xf32>) -> tensor<7x4x4xf32>
  %1 = kiln.transpose %0 {perm = array<i64: 0, 2, 1>} : tensor<7x4x4xf32> -> tensor<7x4x4xf32>
  %2 = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<10x5xf32>, tensor<7x4xi64>) -> tensor<7x4x5xf32>
  %3 = kiln.reshape %2 : tensor<7x4x5xf32> to tensor<7x20xf32>
  return %1, %3 : tensor<7x4x4xf32>, tensor<7x20xf32>
}

// -----

// A sum over the batch mixes the samples.
func.func @reduce_batch(%x: tensor<7x16xf32>) -> tensor<1x16xf32> {
  // expected-error @+1 {{does not keep the samples of the batch apart: it reduces over the batch axis}}
  %0 = kiln.reduce_sum %x {axes = array<i64: 0>, keepdims = true} : tensor<7x16xf32> -> tensor<1x16xf32>
  // expected-error @-3 {{output 0 does not lead with the batch dimension}}
  return %0 : tensor<1x16xf32>
}

// -----

// Folding the batch into the rows of a product is a merge.
func.func @merge(%x: tensor<7x4x5xf32>) -> tensor<28x5xf32> {
  // expected-error @+1 {{the reshape merges the batch with another dimension}}
  %0 = kiln.reshape %x : tensor<7x4x5xf32> to tensor<35x4xf32>
  %1 = kiln.reshape %0 : tensor<35x4xf32> to tensor<28x5xf32>
  // expected-error @-4 {{output 0 does not lead with the batch dimension}}
  return %1 : tensor<28x5xf32>
}

// -----

// Softmax across the batch, and the batch size used as a number.
func.func @softmax_batch(%x: tensor<7x16xf32>) -> tensor<7x16xf32> {
  // expected-error @+1 {{it normalizes along the batch axis}}
  %0 = kiln.softmax %x {axis = 0 : i64} : tensor<7x16xf32>
  // expected-error @+1 {{uses the batch size as a value}}
  %c = kiln.constant dense<7.0> : tensor<1xf32>
  %1 = kiln.div %0, %c : (tensor<7x16xf32>, tensor<1xf32>) -> tensor<7x16xf32>
  return %1 : tensor<7x16xf32>
}

// -----

// The batch in the reduced dimension of a product.
func.func @matmul_k(%x: tensor<4x7xf32>, %y: tensor<7x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{the batch is a reduced dimension of the product}}
  %0 = kiln.matmul %x, %y : (tensor<4x7xf32>, tensor<7x3xf32>) -> tensor<4x3xf32>
  // expected-error @-3 {{input 0 has the batch size 7 at an axis other than 0}}
  // expected-error @-4 {{output 0 does not lead with the batch dimension}}
  return %0 : tensor<4x3xf32>
}

// -----

// At run-time sizes beside the batch: the sized ops keep samples apart when
// the batch stays whole at axis 0, and the sizes of the other axes are the
// same for every sample.
func.func @sized(%x: tensor<7x?x8xf32>, %t: index) -> (tensor<7x?x2x4xf32>, tensor<7x?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %0 = kiln.sized_reshape %x [%t] : tensor<7x?x8xf32> to tensor<7x?x2x4xf32>
  %1 = kiln.sized_slice %x offsets(%c0, %c1, %c0) sizes(%c7, %t, %c8) {strides = array<i64: 1, 1, 1>} : tensor<7x?x8xf32> -> tensor<7x?x8xf32>
  %z = kiln.constant dense<0.0> : tensor<1x1x8xf32>
  %2 = kiln.sized_expand %z [%t] : tensor<1x1x8xf32> to tensor<7x?x8xf32>
  %3 = kiln.add %1, %2 : (tensor<7x?x8xf32>, tensor<7x?x8xf32>) -> tensor<7x?x8xf32>
  %4 = kiln.shape_of %x {start = 1 : i64, end = 2 : i64} : tensor<7x?x8xf32> -> tensor<1xi64>
  return %0, %3 : tensor<7x?x2x4xf32>, tensor<7x?x8xf32>
}

// -----

// A run-time size in front of the batch cannot be compared; reading the
// batch size as data, or slicing part of the batch, mixes samples.
func.func @sized_mixing(%x: tensor<7x?x8xf32>, %t: index) -> (tensor<?x7x8xf32>, tensor<6x?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  // expected-error @+1 {{the reshape merges the batch with another dimension}}
  %0 = kiln.sized_reshape %x [%t] : tensor<7x?x8xf32> to tensor<?x7x8xf32>
  // expected-error @+1 {{it reads the batch size as a value}}
  %1 = kiln.shape_of %x {start = 0 : i64, end = 2 : i64} : tensor<7x?x8xf32> -> tensor<2xi64>
  // expected-error @+1 {{it slices the batch axis}}
  %2 = kiln.sized_slice %x offsets(%c1, %c0, %c0) sizes(%c6, %t, %c8) {strides = array<i64: 1, 1, 1>} : tensor<7x?x8xf32> -> tensor<6x?x8xf32>
  // expected-error @-11 {{output 0 does not lead with the batch dimension}}
  // expected-error @-12 {{output 1 does not lead with the batch dimension}}
  return %0, %2 : tensor<?x7x8xf32>, tensor<6x?x8xf32>
}
