// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(kiln-cpu-tiling-pipeline{vector-width=16 parallel-work=1})" | FileCheck %s

// Stride 1: tiles of 2 output rows x 8 pixels x 16 channels, the row tiles
// shared among threads. Each of the 10 input columns is one quad of input
// rows (4 loads of 16 bytes, interleaved per channel by the shuffles) that
// row 0 reads with the packed weights (one 64-byte load per kernel column)
// and row 1 with the weights moved up one byte per lane (shli 8): 2 x 8 x 3 vpdpbusd, from zero accumulators,
// written back whole.
#in = affine_map<(n, oh, ow, c, kq, kw, t) -> (n, oh + kq * 4 + t, ow + kw, c)>
#w = affine_map<(n, oh, ow, c, kq, kw, t) -> (kq, kw, c, t)>
#out = affine_map<(n, oh, ow, c, kq, kw, t) -> (n, oh, ow, c)>
// CHECK-LABEL: func.func @rows2
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0> : vector<16xi32>
// CHECK-DAG: %[[EIGHT:.+]] = arith.constant dense<8> : vector<16xi32>
// CHECK: scf.forall (%{{.+}}) = (0) to (4) step (2)
// CHECK: %[[WB:.+]] = tensor.collapse_shape %arg1 {{\[\[}}0], [1], [2, 3]] : tensor<1x3x16x4xi8> into tensor<1x3x64xi8>
// CHECK: %[[B0:.+]] = vector.transfer_read %[[WB]]{{.+}} : tensor<1x3x64xi8>, vector<64xi8>
// CHECK: %[[L0:.+]] = vector.bitcast %[[B0]] : vector<64xi8> to vector<16xi32>
// CHECK: %[[S0:.+]] = arith.shli %[[L0]], %[[EIGHT]] : vector<16xi32>
// CHECK: %[[R1W0:.+]] = vector.bitcast %[[S0]] : vector<16xi32> to vector<64xi8>
// CHECK-COUNT-4: vector.transfer_read %arg0{{.+}} vector<16xi8>
// CHECK: vector.shuffle {{.+}} : vector<16xi8>, vector<16xi8>
// CHECK: vector.shuffle {{.+}} : vector<16xi8>, vector<16xi8>
// CHECK: %[[Q:.+]] = vector.shuffle %{{.+}}, %{{.+}} [0, 16, 32, 48, 1, 17, 33, 49, {{.+}}] : vector<32xi8>, vector<32xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[ZERO]], %[[Q]], %[[B0]])
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[ZERO]], %[[Q]], %[[R1W0]])
// CHECK-COUNT-46: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: llvm.call_intrinsic
// CHECK: vector.transfer_write %{{.+}} : vector<2x8x16xi32>, tensor<1x2x8x16xi32>
func.func @rows2(%x: tensor<1x7x10x16xi8>, %w: tensor<1x3x16x4xi8>) -> tensor<1x4x8x16xi32> {
  %e = tensor.empty() : tensor<1x4x8x16xi32>
  %c0 = arith.constant 0 : i32
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x4x8x16xi32>) -> tensor<1x4x8x16xi32>
  %y = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x7x10x16xi8>, tensor<1x3x16x4xi8>) outs(%f : tensor<1x4x8x16xi32>) attrs = {kiln.int8_depthwise = 3 : i64} {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  } -> tensor<1x4x8x16xi32>
  return %y : tensor<1x4x8x16xi32>
}

// -----

// Stride 2 on 32 channels: one output row per tile, against two vectors of
// 16 channels. Its quad holds kernel rows 0-2 and a zero vector (no window
// reads input row 3). Each of the 9 input columns feeds the pixels whose
// window covers it: 4 x 3 per vector of channels.
#in = affine_map<(n, oh, ow, c, kq, kw, t) -> (n, oh * 2 + kq * 4 + t, ow * 2 + kw, c)>
#w = affine_map<(n, oh, ow, c, kq, kw, t) -> (kq, kw, c, t)>
#out = affine_map<(n, oh, ow, c, kq, kw, t) -> (n, oh, ow, c)>
// CHECK-LABEL: func.func @stride2
// CHECK-DAG: %[[Z:.+]] = arith.constant dense<0> : vector<16xi8>
// CHECK: scf.forall (%{{.+}}) in (4)
// CHECK-NOT: arith.shli
// CHECK-COUNT-3: vector.transfer_read %arg0{{.+}} vector<16xi8>
// CHECK: vector.shuffle %{{.+}}, %[[Z]] [0, 1, 2
// CHECK-COUNT-24: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: llvm.call_intrinsic
// CHECK: vector.transfer_write %{{.+}} : vector<4x32xi32>, tensor<1x1x4x32xi32>
func.func @stride2(%x: tensor<1x10x9x32xi8>, %w: tensor<1x3x32x4xi8>) -> tensor<1x4x4x32xi32> {
  %e = tensor.empty() : tensor<1x4x4x32xi32>
  %c0 = arith.constant 0 : i32
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x4x4x32xi32>) -> tensor<1x4x4x32xi32>
  %y = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x10x9x32xi8>, tensor<1x3x32x4xi8>) outs(%f : tensor<1x4x4x32xi32>) attrs = {kiln.int8_depthwise = 3 : i64} {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  } -> tensor<1x4x4x32xi32>
  return %y : tensor<1x4x4x32xi32>
}

// -----

// 24 channels: vectors of 8 (vpdpbusd on 256 bits), three per tile row.
#in = affine_map<(n, oh, ow, c, kq, kw, t) -> (n, oh * 2 + kq * 4 + t, ow * 2 + kw, c)>
#w = affine_map<(n, oh, ow, c, kq, kw, t) -> (kq, kw, c, t)>
#out = affine_map<(n, oh, ow, c, kq, kw, t) -> (n, oh, ow, c)>
// CHECK-LABEL: func.func @lanes8
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"({{.+}}) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
// CHECK-NOT: vpdpbusd.512
func.func @lanes8(%x: tensor<1x10x9x24xi8>, %w: tensor<1x3x24x4xi8>) -> tensor<1x4x4x24xi32> {
  %e = tensor.empty() : tensor<1x4x4x24xi32>
  %c0 = arith.constant 0 : i32
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x4x4x24xi32>) -> tensor<1x4x4x24xi32>
  %y = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x10x9x24xi8>, tensor<1x3x24x4xi8>) outs(%f : tensor<1x4x4x24xi32>) attrs = {kiln.int8_depthwise = 3 : i64} {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  } -> tensor<1x4x4x24xi32>
  return %y : tensor<1x4x4x24xi32>
}
