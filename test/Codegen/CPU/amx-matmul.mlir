// RUN: kiln-opt %s --split-input-file --kiln-cpu-amx-matmul --canonicalize --cse --verify-diagnostics | FileCheck %s

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>

// 64 rows x 4 panels x K = 1024 (16.8 MFLOP, worth a fork-join): four blocks
// of 32 rows x 2 panels, shared by threads, in a kernel function of their
// own. Each block carries four f32 accumulators through the k loop (K2 = 512
// in steps of 16 pairs), loads two A tiles (row stride Kp = 1024 elements)
// and two B tiles (32 elements per pair row), and stores with the output's
// row stride (4 panels x 16).
// CHECK-LABEL: func.func @blocks
// CHECK-NEXT: call @blocks_amx0(%arg0, %arg1, %arg2) : (memref<64x512x2xbf16>, memref<4x512x16x2xbf16>, memref<64x4x16xf32>) -> ()
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @blocks_amx0
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-DAG: %[[C1024:.+]] = arith.constant 1024 : index
// CHECK-DAG: %[[C512:.+]] = arith.constant 512 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK: scf.forall (%[[I:.+]]) in (4) {
// CHECK:   %[[Z:.+]] = amx.tile_zero : !amx.tile<16x16xf32>
// CHECK:   %[[R:.+]]:4 = scf.for %[[K:.+]] = %{{.+}} to %[[C512]] step %{{.+}} iter_args({{.+}}) -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>)
// CHECK-COUNT-2: amx.tile_load %arg0[%{{.+}}, %[[K]], %{{.+}}], %[[C1024]] : memref<64x512x2xbf16> into !amx.tile<16x32xbf16>
// CHECK-COUNT-2: amx.tile_load %arg1[%{{.+}}, %[[K]], %{{.+}}, %{{.+}}], %[[C32]] : memref<4x512x16x2xbf16> into !amx.tile<16x32xbf16>
// CHECK-COUNT-4: amx.tile_mulf
// CHECK:     scf.yield
// CHECK-COUNT-4: amx.tile_store %arg2[{{.+}}], %[[R]]#{{[0-3]}}, %[[C64]] : memref<64x4x16xf32>, !amx.tile<16x16xf32>
// CHECK-NOT: linalg.generic
func.func @blocks(%x: memref<64x512x2xbf16>, %w: memref<4x512x16x2xbf16>, %y: memref<64x4x16xf32>) {
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<64x512x2xbf16>, memref<4x512x16x2xbf16>) outs(%y : memref<64x4x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.extf %b : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>

// 64 rows x 4 panels x K = 128 (2.1 MFLOP) is still shared by threads:
// left on one thread, the layer after it (split by rows) would read all of
// its output from one core.
// CHECK-LABEL: func.func private @small_blocks_amx0
// CHECK: scf.forall (%{{.+}}) in (4) {
func.func @small_blocks(%x: memref<64x64x2xbf16>, %w: memref<4x64x16x2xbf16>, %y: memref<64x4x16xf32>) {
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<64x64x2xbf16>, memref<4x64x16x2xbf16>) outs(%y : memref<64x4x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.extf %b : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>

// 37 rows x 3 panels: rows 0..31 with panels 0-1 (four accumulators) and
// panel 2 alone (two), then the 5 rows left with 5-row tiles, one kernel
// function per tile height and panel count (LLVM fixes each tile register's
// shape per function).
// CHECK-LABEL: func.func @tails
// CHECK-COUNT-4: call @tails_amx
// CHECK-LABEL: func.func private @tails_amx0
// CHECK-NOT: scf.forall
// CHECK: scf.for {{.+}} -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>)
// CHECK-LABEL: func.func private @tails_amx1
// CHECK: scf.for {{.+}} -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>)
// CHECK-LABEL: func.func private @tails_amx2
// CHECK: scf.for {{.+}} -> (!amx.tile<5x16xf32>, !amx.tile<5x16xf32>)
// CHECK:   amx.tile_load %arg0[%c32, {{.+}} into !amx.tile<5x32xbf16>
// CHECK:   amx.tile_mulf {{.+}} : !amx.tile<5x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<5x16xf32>
// CHECK-LABEL: func.func private @tails_amx3
// CHECK: scf.for {{.+}} -> (!amx.tile<5x16xf32>)
// CHECK: amx.tile_store %arg2[%c32, %c2, %c0], {{.+}} : memref<37x3x16xf32>, !amx.tile<5x16xf32>
func.func @tails(%x: memref<37x32x2xbf16>, %w: memref<3x32x16x2xbf16>, %y: memref<37x3x16xf32>) {
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<37x32x2xbf16>, memref<3x32x16x2xbf16>) outs(%y : memref<37x3x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.extf %b : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>

// Output rows that are not contiguous (every other column block of a wider
// buffer) cannot be a tile store: an error, since the product's zero fill
// may be gone and no other lowering would compute it.
func.func @strided_output(%x: memref<16x16x2xbf16>, %w: memref<1x16x16x2xbf16>, %y: memref<16x1x16xf32, strided<[64, 32, 2]>>) {
  // expected-error @+1 {{bf16 matmul does not fit the AMX kernel: a buffer's rows are not contiguous}}
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<16x16x2xbf16>, memref<1x16x16x2xbf16>) outs(%y : memref<16x1x16xf32, strided<[64, 32, 2]>>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.extf %b : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#brows = affine_map<(b, m, p, c, k, j) -> (b, m, k, j)>
#bw = affine_map<(b, m, p, c, k, j) -> (b, p, k, c, j)>
#bacc = affine_map<(b, m, p, c, k, j) -> (b, m, p, c)>

// A leading batch (kiln.bf16_batch_matmul): 3 batches x one block of 32 rows
// x 2 panels in one loop (0.4 MFLOP: too little for a fork-join, so an
// scf.for); every tile index starts with the batch (the loop index itself,
// with one block per batch).
// CHECK-LABEL: func.func private @batched_amx0
// CHECK-NOT: scf.forall
// CHECK: scf.for %[[I:.+]] = %c0 to %c3 step %c1 {
// CHECK:   amx.tile_load %arg0[%[[I]], %{{.+}}, %{{.+}}, %{{.+}}], %c64 : memref<3x32x32x2xbf16> into !amx.tile<16x32xbf16>
// CHECK:   amx.tile_load %arg1[%[[I]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}], %c32 : memref<3x2x32x16x2xbf16> into !amx.tile<16x32xbf16>
// CHECK:   amx.tile_store %arg2[%[[I]], %{{.+}}, %{{.+}}, %{{.+}}], %{{.+}}, %c32 : memref<3x32x2x16xf32>, !amx.tile<16x16xf32>
func.func @batched(%x: memref<3x32x32x2xbf16>, %w: memref<3x2x32x16x2xbf16>, %y: memref<3x32x2x16xf32>) {
  linalg.generic {indexing_maps = [#brows, #bw, #bacc], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<3x32x32x2xbf16>, memref<3x2x32x16x2xbf16>) outs(%y : memref<3x32x2x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.extf %b : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
#ch = affine_map<(n, h, w, c) -> (c)>

// An int8 product whose only reader is its epilogue (kiln.amx_epilogue:
// per-channel scale, ReLU, written into the interior of a padded buffer).
// Each block of 32 rows takes all 4 panels, a pair at a time; the
// accumulators go to a scratch buffer on the stack, made once before the
// loop over blocks (not in it, where it would take more stack every
// iteration), and the epilogue runs on its rows with vectors of 16
// channels. The per-channel scale is read once
// per block, outside the row loop. The kernel gets the padded buffer itself
// and rebuilds the view; the i32 result is neither written nor passed.
// CHECK-LABEL: func.func @fused_epilogue
// CHECK-NEXT: call @fused_epilogue_amx0(%arg0, %arg1, %arg3, %arg4) : (memref<64x16x4xi8>, memref<4x16x16x4xi8>, memref<64xf32>, memref<1x10x10x64xf32>) -> ()
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @fused_epilogue_amx0
// CHECK: %[[VIEW:.+]] = memref.subview %arg3[0, 1, 1, 0] [1, 8, 8, 64] [1, 1, 1, 1]
// CHECK: %[[S:.+]] = memref.alloca() : memref<32x64xi32>
// CHECK-NEXT: scf.for
// CHECK-COUNT-4: amx.tile_muli
// CHECK-COUNT-4: amx.tile_store %[[S]]
// CHECK-COUNT-4: amx.tile_muli
// CHECK-COUNT-4: amx.tile_store %[[S]]
// CHECK: vector.transfer_read %arg2
// CHECK: scf.for
// CHECK: vector.load %[[S]]
// CHECK: arith.sitofp {{.+}} : vector<16xi32> to vector<16xf32>
// CHECK: arith.maximumf
// CHECK: vector.transfer_write {{.+}}, %[[VIEW]]
// CHECK-NOT: linalg.generic
func.func @fused_epilogue(%x: memref<64x16x4xi8>, %w: memref<4x16x16x4xi8>, %y: memref<64x4x16xi32>, %s: memref<64xf32>, %out: memref<1x10x10x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<64x16x4xi8>, memref<4x16x16x4xi8>) outs(%y : memref<64x4x16xi32>) attrs = {kiln.amx_int8_matmul} {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  %flat = memref.collapse_shape %y [[0, 1, 2]] : memref<64x4x16xi32> into memref<4096xi32>
  %nhwc = memref.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 8, 8, 64] : memref<4096xi32> into memref<1x8x8x64xi32>
  %interior = memref.subview %out[0, 1, 1, 0] [1, 8, 8, 64] [1, 1, 1, 1] : memref<1x10x10x64xf32> to memref<1x8x8x64xf32, strided<[6400, 640, 64, 1], offset: 704>>
  linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%nhwc, %s : memref<1x8x8x64xi32>, memref<64xf32>) outs(%interior : memref<1x8x8x64xf32, strided<[6400, 640, 64, 1], offset: 704>>) attrs = {kiln.amx_epilogue} {
  ^bb0(%a: i32, %sc: f32, %o: f32):
    %0 = arith.sitofp %a : i32 to f32
    %1 = arith.mulf %0, %sc : f32
    %2 = arith.maximumf %1, %zero : f32
    linalg.yield %2 : f32
  }
  return
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>

// Bufferization allocates the epilogue's result right before the epilogue,
// after the product: the allocation may stand between the two. The epilogue
// is fused and writes the new buffer.
// CHECK-LABEL: func.func @allocated_result
// CHECK: %[[B:.+]] = memref.alloc() : memref<1x8x8x64xbf16>
// CHECK-NEXT: call @allocated_result_amx0(%arg0, %arg1, %[[B]])
// CHECK-NOT: linalg.generic
// CHECK: memref.copy %[[B]], %arg3
func.func @allocated_result(%x: memref<64x16x4xi8>, %w: memref<4x16x16x4xi8>, %y: memref<64x4x16xi32>, %out: memref<1x8x8x64xbf16>) {
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<64x16x4xi8>, memref<4x16x16x4xi8>) outs(%y : memref<64x4x16xi32>) attrs = {kiln.amx_int8_matmul} {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  %flat = memref.collapse_shape %y [[0, 1, 2]] : memref<64x4x16xi32> into memref<4096xi32>
  %nhwc = memref.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 8, 8, 64] : memref<4096xi32> into memref<1x8x8x64xi32>
  %buf = memref.alloc() : memref<1x8x8x64xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%nhwc : memref<1x8x8x64xi32>) outs(%buf : memref<1x8x8x64xbf16>) attrs = {kiln.amx_epilogue} {
  ^bb0(%a: i32, %o: bf16):
    %0 = arith.sitofp %a : i32 to f32
    %1 = arith.truncf %0 : f32 to bf16
    linalg.yield %1 : bf16
  }
  memref.copy %buf, %out : memref<1x8x8x64xbf16> to memref<1x8x8x64xbf16>
  return
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>

// The result is also read by a copy: the product stores its accumulators
// as usual and the epilogue stays a generic.
// CHECK-LABEL: func.func @shared_result
// CHECK: call @shared_result_amx0(%arg0, %arg1, %arg2)
// CHECK: linalg.generic
// CHECK: memref.copy
func.func @shared_result(%x: memref<64x16x4xi8>, %w: memref<4x16x16x4xi8>, %y: memref<64x4x16xi32>, %out: memref<1x8x8x64xf32>, %copy: memref<64x4x16xi32>) {
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<64x16x4xi8>, memref<4x16x16x4xi8>) outs(%y : memref<64x4x16xi32>) attrs = {kiln.amx_int8_matmul} {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  %flat = memref.collapse_shape %y [[0, 1, 2]] : memref<64x4x16xi32> into memref<4096xi32>
  %nhwc = memref.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 8, 8, 64] : memref<4096xi32> into memref<1x8x8x64xi32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%nhwc : memref<1x8x8x64xi32>) outs(%out : memref<1x8x8x64xf32>) attrs = {kiln.amx_epilogue} {
  ^bb0(%a: i32, %o: f32):
    %0 = arith.sitofp %a : i32 to f32
    linalg.yield %0 : f32
  }
  memref.copy %y, %copy : memref<64x4x16xi32> to memref<64x4x16xi32>
  return
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>

// One row (a classifier at batch 1) against 1 MiB of int8 weights: 2 MOP,
// too little work for a fork-join by itself, but the product takes as long
// as the weights take to stream in, so the threads share the 32 pairs of
// panels.
// CHECK-LABEL: func.func private @gemv_amx0
// CHECK: scf.forall (%{{.+}}) in (32) {
// CHECK: amx.tile_muli {{.+}} : !amx.tile<1x64xi8>, !amx.tile<16x64xi8>, !amx.tile<1x16xi32>
func.func @gemv(%x: memref<1x256x4xi8>, %w: memref<64x256x16x4xi8>, %y: memref<1x64x16xi32>) {
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<1x256x4xi8>, memref<64x256x16x4xi8>) outs(%y : memref<1x64x16xi32>) attrs = {kiln.amx_int8_matmul} {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>

// K = 16 (8 pairs, half a tile row) is not padded: one step, no k loop,
// with A tiles of 16 bf16 per row (row stride 16) and B tiles of 8 pair
// rows.
// CHECK-LABEL: func.func private @narrow_bf16_amx0
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-NOT: iter_args
// CHECK-COUNT-2: amx.tile_load %arg0[{{.+}}], %[[C16]] : memref<64x8x2xbf16> into !amx.tile<16x16xbf16>
// CHECK-COUNT-2: amx.tile_load %arg1[{{.+}}], %[[C32]] : memref<2x8x16x2xbf16> into !amx.tile<8x32xbf16>
// CHECK-COUNT-4: amx.tile_mulf {{.+}} : !amx.tile<16x16xbf16>, !amx.tile<8x32xbf16>, !amx.tile<16x16xf32>
func.func @narrow_bf16(%x: memref<64x8x2xbf16>, %w: memref<2x8x16x2xbf16>, %y: memref<64x2x16xf32>) {
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<64x8x2xbf16>, memref<2x8x16x2xbf16>) outs(%y : memref<64x2x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.extf %b : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>

// int8 with K = 24 (6 quads): A tiles of 24 bytes per row, B tiles of 6 rows.
// CHECK-LABEL: func.func private @narrow_int8_amx0
// CHECK-NOT: iter_args
// CHECK: amx.tile_muli {{.+}} : !amx.tile<16x24xi8>, !amx.tile<6x64xi8>, !amx.tile<16x16xi32>
func.func @narrow_int8(%x: memref<32x6x4xi8>, %w: memref<2x6x16x4xi8>, %y: memref<32x2x16xi32>) {
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<32x6x4xi8>, memref<2x6x16x4xi8>) outs(%y : memref<32x2x16xi32>) attrs = {kiln.amx_int8_matmul} {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>

// A K of more than one tile row must be padded to whole rows.
func.func @unpadded(%x: memref<16x24x2xbf16>, %w: memref<1x24x16x2xbf16>, %y: memref<16x1x16xf32>) {
  // expected-error @+1 {{bf16 matmul does not fit the AMX kernel: shapes do not agree, or K is not padded to 64 bytes}}
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<16x24x2xbf16>, memref<1x24x16x2xbf16>) outs(%y : memref<16x1x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.extf %b : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>

// 49 rows (7x7) against 1 MiB of weights: rather than groups of 32, 16 and
// 1 rows (each streaming all of the weights), two blocks of 32, rows 0-31
// and 17-48 (the second one's start clamped to 17), in one kernel. With two
// row blocks the panels go outermost: iteration i is panel pair i / 2, row
// block i % 2.
// CHECK-LABEL: func.func @overlap
// CHECK-NEXT: call @overlap_amx0
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @overlap_amx0
// CHECK-DAG: %[[C17:.+]] = arith.constant 17 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK: scf.forall (%[[I:.+]]) in (32) {
// CHECK-DAG: arith.divui %[[I]], %[[C2]]
// CHECK-DAG: %[[R:.+]] = arith.remui %[[I]], %[[C2]]
// CHECK: %[[M:.+]] = arith.muli %[[R]], %{{.+}}
// CHECK: arith.minui %[[M]], %[[C17]]
// CHECK: scf.for {{.+}} -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>)
// CHECK-NOT: func.func private @overlap_amx1
func.func @overlap(%x: memref<49x512x2xbf16>, %w: memref<32x512x16x2xbf16>, %y: memref<49x32x16xf32>) {
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<49x512x2xbf16>, memref<32x512x16x2xbf16>) outs(%y : memref<49x32x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.extf %b : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>
#id = affine_map<(m, c) -> (m, c)>

// The same product with an epilogue that adds a residual in place (its
// result buffer is the one it reads): a row computed twice would add the
// residual twice, so the rows keep their groups of 32, 16 and 1.
// CHECK-LABEL: func.func @in_place_epilogue
// CHECK-COUNT-3: call @in_place_epilogue_amx
// CHECK-NOT: arith.minui
func.func @in_place_epilogue(%x: memref<49x512x2xbf16>, %w: memref<32x512x16x2xbf16>, %y: memref<49x32x16xf32>, %res: memref<49x512xf32>) {
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<49x512x2xbf16>, memref<32x512x16x2xbf16>) outs(%y : memref<49x32x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.extf %b : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  %flat = memref.collapse_shape %y [[0], [1, 2]] : memref<49x32x16xf32> into memref<49x512xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%flat, %res : memref<49x512xf32>, memref<49x512xf32>) outs(%res : memref<49x512xf32>) attrs = {kiln.amx_epilogue} {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %0 = arith.addf %a, %r : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>
#id = affine_map<(m, c) -> (m, c)>

// The residual added into a buffer of its own: the rows overlap.
// CHECK-LABEL: func.func @epilogue_elsewhere
// CHECK-NEXT: call @epilogue_elsewhere_amx0
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @epilogue_elsewhere_amx0
// CHECK: arith.minui
func.func @epilogue_elsewhere(%x: memref<49x512x2xbf16>, %w: memref<32x512x16x2xbf16>, %y: memref<49x32x16xf32>, %res: memref<49x512xf32>, %out: memref<49x512xf32>) {
  linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<49x512x2xbf16>, memref<32x512x16x2xbf16>) outs(%y : memref<49x32x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.extf %b : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  %flat = memref.collapse_shape %y [[0], [1, 2]] : memref<49x32x16xf32> into memref<49x512xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%flat, %res : memref<49x512xf32>, memref<49x512xf32>) outs(%out : memref<49x512xf32>) attrs = {kiln.amx_epilogue} {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %0 = arith.addf %a, %r : f32
    linalg.yield %0 : f32
  }
  return
}
