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
