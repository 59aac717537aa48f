// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg=row-blocks=true | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg | FileCheck %s --check-prefix=WHOLE

// Attention scores [2, 4, 64, 128]: one scf.forall over 2 * 4 * (64 / 8)
// blocks of 8 rows. Iteration i takes row block i % 8 of head (i / 8) % 4
// of batch i / 32; each block takes its maxima (128 as 8 x 16 lanes, then
// the lanes), the exponentials, their sums and the quotients, and writes
// its rows into the result. Without row-blocks (the GPU pipeline) the
// softmax is whole-tensor ops.
// CHECK-LABEL: func.func @attention_scores
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x4x64x128xf32>
// CHECK: scf.forall (%[[I:.*]]) in (64) shared_outs(%[[OUT:.*]] = %[[INIT]])
// CHECK: %[[RB:.*]] = arith.remui %[[I]], %c8
// CHECK: %[[ROW:.*]] = arith.muli %[[RB]], %c8
// CHECK: %[[Q:.*]] = arith.divui %[[I]], %c8
// CHECK: %[[HEAD:.*]] = arith.remui %[[Q]], %c4
// CHECK: %[[BATCH:.*]] = arith.divui %[[Q]], %c4
// CHECK: %[[TILE:.*]] = tensor.extract_slice %arg0[%[[BATCH]], %[[HEAD]], %[[ROW]], 0] [1, 1, 8, 128] [1, 1, 1, 1] : tensor<2x4x64x128xf32> to tensor<8x128xf32>
// CHECK: tensor.expand_shape {{.*}} into tensor<8x8x16xf32>
// CHECK: arith.maxnumf
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: arith.divf
// CHECK: } -> tensor<8x128xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[P]] into %[[OUT]][%[[BATCH]], %[[HEAD]], %[[ROW]], 0] [1, 1, 8, 128] [1, 1, 1, 1] : tensor<8x128xf32> into tensor<2x4x64x128xf32>
// WHOLE-LABEL: func.func @attention_scores
// WHOLE-NOT: scf.forall
// WHOLE: math.exp
func.func @attention_scores(%x: tensor<2x4x64x128xf32>) -> tensor<2x4x64x128xf32> {
  %0 = kiln.softmax %x {axis = 3 : i64} : tensor<2x4x64x128xf32>
  return %0 : tensor<2x4x64x128xf32>
}

// -----

// Rows of 1,024: blocks of 4 rows (4,096 elements, 16 KiB).
// CHECK-LABEL: func.func @long_rows
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: tensor.extract_slice {{.*}} [4, 1024] [1, 1] : tensor<32x1024xf32> to tensor<4x1024xf32>
func.func @long_rows(%x: tensor<32x1024xf32>) -> tensor<32x1024xf32> {
  %0 = kiln.softmax %x {axis = 1 : i64} : tensor<32x1024xf32>
  return %0 : tensor<32x1024xf32>
}

// -----

// Under 32,768 elements a softmax is not shared among threads anyway: the
// whole-tensor form.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.forall
// CHECK: math.exp
func.func @small(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = kiln.softmax %x {axis = 1 : i64} : tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// Over another axis than the last: the whole-tensor form.
// CHECK-LABEL: func.func @inner_axis
// CHECK-NOT: scf.forall
func.func @inner_axis(%x: tensor<4x128x128xf32>) -> tensor<4x128x128xf32> {
  %0 = kiln.softmax %x {axis = 1 : i64} : tensor<4x128x128xf32>
  return %0 : tensor<4x128x128xf32>
}

// -----

// softmax(q kt) v: one loop over blocks of 32 query rows of each head.
// Each block's scores [32, 128] (q rows times the head's kt), their
// softmax, and its product with the head's v [128, 32]; the scores are
// never stored whole, and the first product and the softmax are gone.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: kiln.
// CHECK: scf.forall (%{{.*}}) in (32) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<2x4x128x32xf32>)
// CHECK: %[[Q:.*]] = tensor.extract_slice %arg0[%[[B:.*]], %[[H:.*]], %[[ROW:.*]], 0] [1, 1, 32, 32] [1, 1, 1, 1] : tensor<2x4x128x32xf32> to tensor<32x32xf32>
// CHECK: %[[K:.*]] = tensor.extract_slice %arg1[%[[B]], %[[H]], 0, 0] [1, 1, 32, 128] [1, 1, 1, 1] : tensor<2x4x32x128xf32> to tensor<32x128xf32>
// CHECK: %[[V:.*]] = tensor.extract_slice %arg2[%[[B]], %[[H]], 0, 0] [1, 1, 128, 32] [1, 1, 1, 1] : tensor<2x4x128x32xf32> to tensor<128x32xf32>
// CHECK: %[[S:.*]] = linalg.matmul ins(%[[Q]], %[[K]] : tensor<32x32xf32>, tensor<32x128xf32>)
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: %[[O:.*]] = linalg.matmul ins(%{{.*}}, %[[V]] : tensor<32x128xf32>, tensor<128x32xf32>)
// CHECK: tensor.parallel_insert_slice %[[O]] into %[[OUT]][%[[B]], %[[H]], %[[ROW]], 0] [1, 1, 32, 32]
// WHOLE-LABEL: func.func @attention
// WHOLE-NOT: scf.forall
func.func @attention(%q: tensor<2x4x128x32xf32>, %kt: tensor<2x4x32x128xf32>, %v: tensor<2x4x128x32xf32>) -> tensor<2x4x128x32xf32> {
  %s = kiln.matmul %q, %kt : (tensor<2x4x128x32xf32>, tensor<2x4x32x128xf32>) -> tensor<2x4x128x128xf32>
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<2x4x128x128xf32>
  %o = kiln.matmul %p, %v : (tensor<2x4x128x128xf32>, tensor<2x4x128x32xf32>) -> tensor<2x4x128x32xf32>
  return %o : tensor<2x4x128x32xf32>
}

// -----

// The probabilities are read twice: no chain. The softmax alone goes in
// row blocks; the products stay whole.
// CHECK-LABEL: func.func @probabilities_kept
// CHECK: linalg.generic
// CHECK: scf.forall
// CHECK: math.exp
// CHECK: scf.forall.in_parallel
// CHECK: linalg.generic
func.func @probabilities_kept(%q: tensor<2x4x128x32xf32>, %kt: tensor<2x4x32x128xf32>, %v: tensor<2x4x128x32xf32>) -> (tensor<2x4x128x32xf32>, tensor<2x4x128x128xf32>) {
  %s = kiln.matmul %q, %kt : (tensor<2x4x128x32xf32>, tensor<2x4x32x128xf32>) -> tensor<2x4x128x128xf32>
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<2x4x128x128xf32>
  %o = kiln.matmul %p, %v : (tensor<2x4x128x128xf32>, tensor<2x4x128x32xf32>) -> tensor<2x4x128x32xf32>
  return %o, %p : tensor<2x4x128x32xf32>, tensor<2x4x128x128xf32>
}

// -----

// BERT's scale and additive mask between the products and the softmax, and
// a `where` on the probabilities (Attention-23's zeroing of fully masked
// rows): each on the block. The mask [2, 1, 1, 128] is read at the block's
// batch (its unit axes at 0); the row condition [128, 1] at the block's
// rows; the scalars whole. The Add reads the scores second.
// CHECK-LABEL: func.func @masked_attention
// CHECK-NOT: kiln.
// CHECK: scf.forall (%{{.*}}) in (32)
// CHECK: %[[S:.*]] = linalg.matmul
// CHECK: %[[S1:.*]] = linalg.generic {{.*}} ins(%[[S]], %arg4 : tensor<32x128xf32>, tensor<f32>)
// CHECK: arith.divf
// CHECK: %[[M:.*]] = tensor.extract_slice %arg3[%[[B:.*]], 0, 0, 0] [1, 1, 1, 128] [1, 1, 1, 1] : tensor<2x1x1x128xf32> to tensor<1x128xf32>
// CHECK: linalg.generic {{.*}} ins(%[[M]], %[[S1]] : tensor<1x128xf32>, tensor<32x128xf32>)
// CHECK: arith.addf
// CHECK: math.exp
// CHECK: %[[C:.*]] = tensor.extract_slice %arg5[%[[ROW:.*]], 0] [32, 1] [1, 1] : tensor<128x1xi1> to tensor<32x1xi1>
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[C]], %arg4, %{{.*}} : tensor<32x1xi1>, tensor<f32>, tensor<32x128xf32>)
// CHECK: arith.select
// CHECK: linalg.matmul ins(%[[P]], %{{.*}} : tensor<32x128xf32>, tensor<128x32xf32>)
func.func @masked_attention(%q: tensor<2x4x128x32xf32>, %kt: tensor<2x4x32x128xf32>, %v: tensor<2x4x128x32xf32>, %mask: tensor<2x1x1x128xf32>, %scale: tensor<f32>, %empty: tensor<128x1xi1>) -> tensor<2x4x128x32xf32> {
  %s = kiln.matmul %q, %kt : (tensor<2x4x128x32xf32>, tensor<2x4x32x128xf32>) -> tensor<2x4x128x128xf32>
  %s1 = kiln.div %s, %scale : (tensor<2x4x128x128xf32>, tensor<f32>) -> tensor<2x4x128x128xf32>
  %s2 = kiln.add %mask, %s1 : (tensor<2x1x1x128xf32>, tensor<2x4x128x128xf32>) -> tensor<2x4x128x128xf32>
  %p = kiln.softmax %s2 {axis = 3 : i64} : tensor<2x4x128x128xf32>
  %p1 = kiln.where %empty, %scale, %p : (tensor<128x1xi1>, tensor<f32>, tensor<2x4x128x128xf32>) -> tensor<2x4x128x128xf32>
  %o = kiln.matmul %p1, %v : (tensor<2x4x128x128xf32>, tensor<2x4x128x32xf32>) -> tensor<2x4x128x32xf32>
  return %o : tensor<2x4x128x32xf32>
}

// -----

// The masked scores are read twice (also a result): no chain; the first
// product and the Add are whole-tensor ops.
// CHECK-LABEL: func.func @masked_scores_kept
// CHECK: arith.addf
// CHECK: scf.forall (
// CHECK-NOT: linalg.matmul
// CHECK: math.exp
// CHECK-NOT: linalg.matmul
// CHECK: scf.forall.in_parallel
func.func @masked_scores_kept(%q: tensor<2x4x128x32xf32>, %kt: tensor<2x4x32x128xf32>, %v: tensor<2x4x128x32xf32>, %mask: tensor<128x128xf32>) -> (tensor<2x4x128x32xf32>, tensor<2x4x128x128xf32>) {
  %s = kiln.matmul %q, %kt : (tensor<2x4x128x32xf32>, tensor<2x4x32x128xf32>) -> tensor<2x4x128x128xf32>
  %s1 = kiln.add %s, %mask : (tensor<2x4x128x128xf32>, tensor<128x128xf32>) -> tensor<2x4x128x128xf32>
  %p = kiln.softmax %s1 {axis = 3 : i64} : tensor<2x4x128x128xf32>
  %o = kiln.matmul %p, %v : (tensor<2x4x128x128xf32>, tensor<2x4x128x32xf32>) -> tensor<2x4x128x32xf32>
  return %o, %s1 : tensor<2x4x128x32xf32>, tensor<2x4x128x128xf32>
}
