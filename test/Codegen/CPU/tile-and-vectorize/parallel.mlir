// RUN: kiln-opt %s --split-input-file --kiln-cpu-tiling-pipeline | FileCheck %s

// A matmul big enough for threads: the loop over row tiles is an scf.forall
// (the thread pool splits it); the fill is fused into each row block, and the
// column and reduction loops stay sequential inside.
// Its work is known: no test at run time.
// CHECK-LABEL: func.func @matmul_64
// CHECK-NOT: kiln.parallel_if
// CHECK: scf.forall (%[[I:.+]]) = (0) to (64) step (8) shared_outs(%[[OUT:.+]] = %{{.+}})
// CHECK: tensor.extract_slice %[[OUT]][%[[I]], 0] [8, 64]
// CHECK: scf.for {{.+}} step %c32
// CHECK: scf.for {{.+}} step %c1
// CHECK: vector.contract
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice {{.+}} into %[[OUT]][%[[I]], 0] [8, 64]
func.func @matmul_64(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// Below the work threshold (32768 loop iterations) nothing is parallel.
// CHECK-LABEL: func.func @small_add
// CHECK-NOT: scf.forall
func.func @small_add(%a: tensor<16x64xf32>, %b: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %e = tensor.empty() : tensor<16x64xf32>
  %0 = linalg.add ins(%a, %b : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

// A reduction's reduced loop is never the shared one: rows are.
// CHECK-LABEL: func.func @row_sums
// CHECK: scf.forall (%{{.+}}) in (256)
// CHECK-NOT: scf.forall (
func.func @row_sums(%a: tensor<256x512xf32>) -> tensor<256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<256x512xf32>) outs(%c : tensor<256xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }  -> tensor<256xf32>
  return %0 : tensor<256xf32>
}

// -----

// Weights read once, panel by panel (see tile-and-vectorize.mlir): the
// threads split the panels, each taking all rows of its own.
// CHECK-LABEL: func.func @matmul_panels_outermost
// CHECK: scf.forall (%[[P:.+]]) in (24) shared_outs(%[[OUT:.+]] = %{{.+}})
// CHECK: tensor.extract_slice %[[OUT]][0, %[[P]], 0] [196, 1, 64]
// CHECK: scf.for {{.+}} to %c196 step %c4
func.func @matmul_panels_outermost(%a: tensor<196x384xf32>) -> tensor<196x1536xf32> {
  %b = arith.constant dense<0.5> : tensor<384x1536xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<196x1536xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<196x1536xf32>) -> tensor<196x1536xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<196x384xf32>, tensor<384x1536xf32>) outs(%c : tensor<196x1536xf32>) -> tensor<196x1536xf32>
  return %0 : tensor<196x1536xf32>
}

// -----

// No static loop to share (a CNN's activation with symbolic batch, height
// and width, docs/shapes.md): threads take the rows, the loop of run-time
// extent tiled by 1 with the largest bound (512 against the batch's 4).
// The fork was decided at the bounds (4 x 512 x 512 x 16 iterations); the
// op's work at the run-time sizes, saturated at the same 32768, decides
// again before the loop (kiln.parallel_if, read by
// kiln-outline-parallel-loops).
// CHECK-LABEL: func.func @runtime_rows
// CHECK: %[[N:.+]] = arith.muli %{{.+}}, %c16
// CHECK: %[[N1:.+]] = arith.minui %[[N]], %c32768
// CHECK: %[[NH:.+]] = arith.muli %[[N1]], %{{.+}}
// CHECK: %[[NH1:.+]] = arith.minui %[[NH]], %c32768
// CHECK: %[[NHW:.+]] = arith.muli %[[NH1]], %{{.+}}
// CHECK: %[[W:.+]] = arith.minui %[[NHW]], %c32768
// CHECK: %[[PAYS:.+]] = arith.cmpi uge, %[[W]], %c32768
// CHECK: kiln.parallel_if %[[PAYS]] {loop = 0 : i64}
// CHECK-NEXT: scf.forall (%[[R:.+]]) in (%{{.+}})
// CHECK: tensor.extract_slice %{{.+}}[0, %[[R]], 0, 0] [%{{.+}}, 1, %{{.+}}, 16]
// CHECK: scf.for
// CHECK: vector<16xf32>
// CHECK: } {kiln.parallel_if = 0 : i64}
func.func @runtime_rows(%x: tensor<?x?x?x16xf32> {kiln.symbols = array<i64: 0, 1, 2, -1>}) -> tensor<?x?x?x16xf32> attributes {kiln.symbol_bounds = array<i64: 1, 4, 8, 512, 8, 512>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x?x16xf32>
  %h = tensor.dim %x, %c1 : tensor<?x?x?x16xf32>
  %w = tensor.dim %x, %c2 : tensor<?x?x?x16xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x?x?x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x?x16xf32>) outs(%e : tensor<?x?x?x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<?x?x?x16xf32>
  return %y : tensor<?x?x?x16xf32>
}

// -----

// With 48 channels (3 static panels of 16) the rows still go to the
// threads: the outermost loop, as static code picks (the panels split 2:1
// over two threads, and each thread read the whole input).
// CHECK-LABEL: func.func @runtime_rows_over_panels
// CHECK: scf.forall (%[[R:.+]]) in (%{{.+}})
// CHECK: tensor.extract_slice %{{.+}}[0, %[[R]], 0, 0] [%{{.+}}, 1, %{{.+}}, 48]
// CHECK: scf.for {{.+}} to %c48 step %c16
func.func @runtime_rows_over_panels(%x: tensor<?x?x?x48xf32> {kiln.symbols = array<i64: 0, 1, 2, -1>}) -> tensor<?x?x?x48xf32> attributes {kiln.symbol_bounds = array<i64: 1, 4, 8, 512, 8, 512>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x?x48xf32>
  %h = tensor.dim %x, %c1 : tensor<?x?x?x48xf32>
  %w = tensor.dim %x, %c2 : tensor<?x?x?x48xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x?x?x48xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x?x48xf32>) outs(%e : tensor<?x?x?x48xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<?x?x?x48xf32>
  return %y : tensor<?x?x?x48xf32>
}

// -----

// The same op with bounds too small to pay for a fork (at most 4 x 8 x 8
// pixels): no thread split.
// CHECK-LABEL: func.func @small_runtime_rows
// CHECK-NOT: scf.forall
func.func @small_runtime_rows(%x: tensor<?x?x?x16xf32> {kiln.symbols = array<i64: 0, 1, 2, -1>}) -> tensor<?x?x?x16xf32> attributes {kiln.symbol_bounds = array<i64: 1, 4, 1, 8, 1, 8>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x?x16xf32>
  %h = tensor.dim %x, %c1 : tensor<?x?x?x16xf32>
  %w = tensor.dim %x, %c2 : tensor<?x?x?x16xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x?x?x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x?x16xf32>) outs(%e : tensor<?x?x?x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<?x?x?x16xf32>
  return %y : tensor<?x?x?x16xf32>
}

// -----

// An ArgMin over channels: only its indices are read. Tiling drops the
// unread values from the parallel loop, so each task works on a copy of its
// slice of them (a stack buffer of at most 16 KiB, ArenaAllocation.cpp).
// Here a task's slice is 1 x 40 x 40 floats (6400 bytes): threads take the
// batch.
// CHECK-LABEL: func.func @arg_min_small_slices
// CHECK: scf.forall (%{{.+}}) in (3)
func.func @arg_min_small_slices(%x: tensor<3x8x40x40xf32>) -> tensor<3x40x40xi64> {
  %inf = arith.constant 0x7F800000 : f32
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<3x40x40xf32>
  %v = linalg.fill ins(%inf : f32) outs(%e : tensor<3x40x40xf32>) -> tensor<3x40x40xf32>
  %ei = tensor.empty() : tensor<3x40x40xi64>
  %i = linalg.fill ins(%zero : i64) outs(%ei : tensor<3x40x40xi64>) -> tensor<3x40x40xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%x : tensor<3x8x40x40xf32>) outs(%v, %i : tensor<3x40x40xf32>, tensor<3x40x40xi64>) {
  ^bb0(%in: f32, %best: f32, %at: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %lt = arith.cmpf olt, %in, %best : f32
    %b = arith.select %lt, %in, %best : f32
    %a = arith.select %lt, %ki, %at : i64
    linalg.yield %b, %a : f32, i64
  } -> (tensor<3x40x40xf32>, tensor<3x40x40xi64>)
  return %r#1 : tensor<3x40x40xi64>
}

// -----

// The same with 128 x 128 pixels: a task's slice of the values would be
// 64 KiB, too large for a stack buffer, so the op is not split across
// threads (it failed in --kiln-arena-allocation before). Its two fills
// still are.
// CHECK-LABEL: func.func @arg_min_large_slices
// CHECK: scf.forall {{.+}} -> (tensor<8x128x128xf32>)
// CHECK: scf.forall {{.+}} -> (tensor<8x128x128xi64>)
// CHECK-NOT: scf.forall (
// CHECK: arith.cmpf olt
// CHECK: return
func.func @arg_min_large_slices(%x: tensor<8x8x128x128xf32>) -> tensor<8x128x128xi64> {
  %inf = arith.constant 0x7F800000 : f32
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<8x128x128xf32>
  %v = linalg.fill ins(%inf : f32) outs(%e : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %ei = tensor.empty() : tensor<8x128x128xi64>
  %i = linalg.fill ins(%zero : i64) outs(%ei : tensor<8x128x128xi64>) -> tensor<8x128x128xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%x : tensor<8x8x128x128xf32>) outs(%v, %i : tensor<8x128x128xf32>, tensor<8x128x128xi64>) {
  ^bb0(%in: f32, %best: f32, %at: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %lt = arith.cmpf olt, %in, %best : f32
    %b = arith.select %lt, %in, %best : f32
    %a = arith.select %lt, %ki, %at : i64
    linalg.yield %b, %a : f32, i64
  } -> (tensor<8x128x128xf32>, tensor<8x128x128xi64>)
  return %r#1 : tensor<8x128x128xi64>
}
