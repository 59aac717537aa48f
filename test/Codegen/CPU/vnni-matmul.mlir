// RUN: kiln-opt %s --split-input-file --kiln-cpu-vnni-matmul --remarks-filter=kiln-cpu-vnni-matmul --verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-vnni-matmul="parallel-work=16384" | FileCheck %s --check-prefix=PAR
// RUN: kiln-opt %s --split-input-file --kiln-cpu-vnni-matmul="bf16=true" 2>/dev/null | FileCheck %s --check-prefix=BF16

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// 16 rows, 2 panels of 32 columns, K = 16: 8 x 32 register tiles, each
// k-step loads two 64-byte weight vectors, broadcasts 4 bytes of each of
// the 8 rows and issues 16 vpdpbusd; the accumulators live in the k loop's
// iter_args and are written once per tile.
// CHECK-LABEL: func.func @int8_matmul
// CHECK-SAME: (%[[QA3:.+]]: tensor<16x4x4xi8>, %[[W4:.+]]: tensor<2x4x32x4xi8>)
// CHECK-DAG: %[[QA:.+]] = tensor.collapse_shape %[[QA3]] {{\[\[}}0], [1, 2]] : tensor<16x4x4xi8> into tensor<16x16xi8>
// CHECK-DAG: %[[W:.+]] = tensor.collapse_shape %[[W4]] {{\[\[}}0], [1], [2, 3]] : tensor<2x4x32x4xi8> into tensor<2x4x128xi8>
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK: scf.for %[[M:.+]] = %[[C0]] to %[[C16]] step %[[C8]]
// CHECK: scf.for %[[P:.+]] = %[[C0]] to %{{.+}} step %{{.+}} iter_args
// CHECK: scf.for %[[K:.+]] = {{.+}} iter_args(%[[A0:[^ ]+]] = %{{.+}},
// CHECK: %[[B0:.+]] = vector.transfer_read %[[W]][%[[P]], %[[K]], %[[C0]]]{{.+}} : tensor<2x4x128xi8>, vector<64xi8>
// CHECK: %[[B1:.+]] = vector.transfer_read %[[W]][%[[P]], %[[K]], %[[C64]]]{{.+}} : tensor<2x4x128xi8>, vector<64xi8>
// CHECK: %[[R0:.+]] = vector.transfer_read %[[QA]][%[[M]], %{{.+}}]{{.+}} : tensor<16x16xi8>, vector<4xi8>
// CHECK: %[[R32:.+]] = vector.bitcast %[[R0]] : vector<4xi8> to vector<1xi32>
// CHECK: %[[S:.+]] = vector.extract %[[R32]][0] : i32 from vector<1xi32>
// CHECK: %[[BC:.+]] = vector.broadcast %[[S]] : i32 to vector<16xi32>
// CHECK: %[[A:.+]] = vector.bitcast %[[BC]] : vector<16xi32> to vector<64xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[A0]], %[[A]], %[[B0]]) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK-COUNT-15: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: llvm.call_intrinsic
// CHECK: scf.yield
// CHECK-COUNT-16: vector.transfer_write {{.+}} : vector<16xi32>, tensor<16x2x32xi32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.fill
// At or above parallel-work multiply-adds (16 x 64 x 16 here) the two row
// tiles are an scf.forall: each writes its own 8 rows, from row 0 of its
// slice, and reads the rows of qa from 8 x i.
// PAR-LABEL: func.func @int8_matmul
// PAR: scf.forall (%[[I:.+]]) in (2) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<16x2x32xi32>)
// PAR: %[[M0:.+]] = arith.muli %[[I]], %c8
// PAR: %[[ROWS:.+]] = tensor.extract_slice %[[OUT]][%[[M0]], 0, 0] [8, 2, 32] [1, 1, 1]
// PAR: scf.for {{.+}} iter_args(%{{.+}} = %[[ROWS]])
// PAR: vector.transfer_read %{{.+}}[%[[M0]], %{{.+}}]{{.+}} : tensor<16x16xi8>, vector<4xi8>
// PAR-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// PAR: vector.transfer_write {{.+}}[%c0, %{{.+}}, %c0] {{.+}} : vector<16xi32>, tensor<8x2x32xi32>
// PAR: vector.transfer_write {{.+}}[%c7, %{{.+}}, %c16] {{.+}} : vector<16xi32>, tensor<8x2x32xi32>
// PAR: scf.forall.in_parallel
// PAR: tensor.parallel_insert_slice %{{.+}} into %[[OUT]][%[[M0]], 0, 0] [8, 2, 32] [1, 1, 1]
func.func @int8_matmul(%qa: tensor<16x4x4xi8>, %w: tensor<2x4x32x4xi8>) -> tensor<16x2x32xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<16x2x32xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<16x2x32xi32>) -> tensor<16x2x32xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<16x4x4xi8>, tensor<2x4x32x4xi8>) outs(%z : tensor<16x2x32xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<16x2x32xi32>
  return %0 : tensor<16x2x32xi32>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// 3 rows (a tile of all three) and one 16-column panel: 3 vpdpbusd a step.
// CHECK-LABEL: func.func @three_rows
// CHECK: scf.for {{.+}} step %c3
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: llvm.call_intrinsic
func.func @three_rows(%qa: tensor<3x2x4xi8>, %w: tensor<1x2x16x4xi8>) -> tensor<3x1x16xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<3x1x16xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<3x1x16xi32>) -> tensor<3x1x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<3x2x4xi8>, tensor<1x2x16x4xi8>) outs(%z : tensor<3x1x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<3x1x16xi32>
  return %0 : tensor<3x1x16xi32>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// 16-column panels (static int8's layout) go four at a time, and 13 rows
// (no divisor near 4) take three tiles of 4 and a tile of the last row:
// 16 accumulators a tile instead of one panel of one row at a time.
// CHECK-LABEL: func.func @narrow_panels_row_tail
// CHECK-SAME: (%{{.+}}: tensor<13x8x4xi8>, %[[W4:.+]]: tensor<4x8x16x4xi8>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C12:.+]] = arith.constant 12 : index
// CHECK: %[[FULL:.+]] = scf.for %{{.+}} = %[[C0]] to %[[C12]] step %[[C4]]
// CHECK: scf.for %[[P:.+]] = %[[C0]] to %[[C4]] step %[[C4]]
// CHECK-DAG: %[[P1:.+]] = arith.addi %[[P]], %[[C1]]
// CHECK-DAG: %[[P2:.+]] = arith.addi %[[P]], %[[C2]]
// CHECK-DAG: %[[P3:.+]] = arith.addi %[[P]], %[[C3]]
// CHECK: scf.for {{.+}} -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK: vector.transfer_read %{{.+}}[%[[P]], %{{.+}}, %[[C0]]]
// CHECK: vector.transfer_read %{{.+}}[%[[P1]], %{{.+}}, %[[C0]]]
// CHECK: vector.transfer_read %{{.+}}[%[[P2]], %{{.+}}, %[[C0]]]
// CHECK: vector.transfer_read %{{.+}}[%[[P3]], %{{.+}}, %[[C0]]]
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: llvm.call_intrinsic
// CHECK: scf.yield
// CHECK-COUNT-16: vector.transfer_write
// The last row: one tile of 1 x 4 panels from row 12, into the result of
// the full tiles.
// CHECK: scf.for %[[TP:.+]] = %[[C0]] to %[[C4]] step %[[C4]] iter_args(%{{.+}} = %[[FULL]])
// CHECK: scf.for {{.+}} -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK: vector.transfer_read %{{.+}}[%[[C12]], %{{.+}}], {{.+}} : tensor<13x32xi8>, vector<4xi8>
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: llvm.call_intrinsic
// CHECK: vector.transfer_write {{.+}}[%[[C12]], %[[TP]], %[[C0]]]
// Across threads the last row goes with the last full tile: three slices,
// of 4, 4 and 5 rows.
// PAR-LABEL: func.func @narrow_panels_row_tail
// PAR-DAG: %[[PC2:.+]] = arith.constant 2 : index
// PAR-DAG: %[[PC4:.+]] = arith.constant 4 : index
// PAR-DAG: %[[PC5:.+]] = arith.constant 5 : index
// PAR: scf.forall (%[[I:.+]]) in (3) shared_outs(%[[OUT:.+]] = %{{.+}})
// PAR: %[[ROW:.+]] = arith.muli %[[I]], %[[PC4]]
// PAR: %[[LAST:.+]] = arith.cmpi eq, %[[I]], %[[PC2]]
// PAR: %[[ROWS:.+]] = arith.select %[[LAST]], %[[PC5]], %[[PC4]]
// PAR: %[[PART:.+]] = tensor.extract_slice %[[OUT]][%[[ROW]], 0, 0] [%[[ROWS]], 4, 16]
// PAR: scf.if %[[LAST]] -> (tensor<?x4x16xi32>)
// PAR-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// PAR-NOT: llvm.call_intrinsic
// PAR: arith.addi %[[ROW]], %[[PC4]]
// PAR-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// PAR-NOT: llvm.call_intrinsic
// PAR: vector.transfer_write {{.+}}[%[[PC4]], %{{.+}}, %{{.+}}] {{.+}} tensor<?x4x16xi32>
// PAR: } else {
// PAR-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// PAR-NOT: llvm.call_intrinsic
// PAR: scf.forall.in_parallel
// PAR-NEXT: tensor.parallel_insert_slice %{{.+}} into %[[OUT]][%[[ROW]], 0, 0] [%[[ROWS]], 4, 16]
func.func @narrow_panels_row_tail(%qa: tensor<13x8x4xi8>, %w: tensor<4x8x16x4xi8>) -> tensor<13x4x16xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<13x4x16xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<13x4x16xi32>) -> tensor<13x4x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<13x8x4xi8>, tensor<4x8x16x4xi8>) outs(%z : tensor<13x4x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<13x4x16xi32>
  return %0 : tensor<13x4x16xi32>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// An accumulator that does not start from zero is left to the generic
// lowering, with a missed-optimization remark (kiln-compile --remarks).
// CHECK-LABEL: func.func @not_zero_init
// CHECK: linalg.generic
// CHECK-NOT: llvm.call_intrinsic
func.func @not_zero_init(%qa: tensor<3x2x4xi8>, %w: tensor<1x2x16x4xi8>, %init: tensor<3x1x16xi32>) -> tensor<3x1x16xi32> {
  // expected-remark @+1 {{[Missed] vpdpbusd-kernel | Category:kiln-cpu-vnni-matmul | Reason="linalg.generic: left to the generic lowering: the accumulator does not start from a zero fill"}}
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<3x2x4xi8>, tensor<1x2x16x4xi8>) outs(%init : tensor<3x1x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<3x1x16xi32>
  return %0 : tensor<3x1x16xi32>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>
#id = affine_map<(m, p, r) -> (m, p, r)>
#row = affine_map<(m, p, r) -> (m)>
#col = affine_map<(m, p, r) -> (p, r)>

// The epilogue (the product's only user) runs on the registers: the kernel
// writes f32, i32 never reaches memory.
// CHECK-LABEL: func.func @with_epilogue
// CHECK-SAME: (%{{.+}}: tensor<8x2x4xi8>, %{{.+}}: tensor<1x2x16x4xi8>, %[[S:.+]]: tensor<8xf32>, %[[Z:.+]]: tensor<8xi32>, %[[WS:.+]]: tensor<1x16xf32>, %[[SUM:.+]]: tensor<1x16xi32>, %[[B:.+]]: tensor<1x16xf32>)
// CHECK: scf.for
// CHECK: %[[K:.+]]:8 = scf.for
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: scf.yield
// CHECK-DAG: %[[WSV:.+]] = vector.transfer_read %[[WS]]{{.+}} : tensor<1x16xf32>, vector<16xf32>
// CHECK-DAG: %[[SUMV:.+]] = vector.transfer_read %[[SUM]]{{.+}} : tensor<1x16xi32>, vector<16xi32>
// CHECK-DAG: %[[BV:.+]] = vector.transfer_read %[[B]]{{.+}} : tensor<1x16xf32>, vector<16xf32>
// CHECK-DAG: %[[SR:.+]] = tensor.extract %[[S]]
// CHECK-DAG: %[[ZR:.+]] = tensor.extract %[[Z]]
// CHECK: %[[ZV:.+]] = vector.broadcast %[[ZR]] : i32 to vector<16xi32>
// CHECK: %[[ZS:.+]] = arith.muli %[[ZV]], %[[SUMV]] : vector<16xi32>
// CHECK: %[[D:.+]] = arith.subi %[[K]]#0, %[[ZS]] : vector<16xi32>
// CHECK: %[[F:.+]] = arith.sitofp %[[D]] : vector<16xi32> to vector<16xf32>
// CHECK: %[[M:.+]] = arith.mulf %[[F]], %{{.+}} : vector<16xf32>
// CHECK: %[[Y:.+]] = arith.addf %[[M]], %[[BV]] : vector<16xf32>
// CHECK: vector.transfer_write %[[Y]], {{.+}} : vector<16xf32>, tensor<8x1x16xf32>
// CHECK-NOT: linalg.generic
func.func @with_epilogue(%qa: tensor<8x2x4xi8>, %w: tensor<1x2x16x4xi8>, %s: tensor<8xf32>, %z: tensor<8xi32>, %ws: tensor<1x16xf32>, %sum: tensor<1x16xi32>, %b: tensor<1x16xf32>) -> tensor<8x1x16xf32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x1x16xi32>
  %zf = linalg.fill ins(%c0 : i32) outs(%e : tensor<8x1x16xi32>) -> tensor<8x1x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<8x2x4xi8>, tensor<1x2x16x4xi8>) outs(%zf : tensor<8x1x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %bb: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %bb : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<8x1x16xi32>
  %o = tensor.empty() : tensor<8x1x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #col, #col, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%0, %s, %z, %ws, %sum, %b : tensor<8x1x16xi32>, tensor<8xf32>, tensor<8xi32>, tensor<1x16xf32>, tensor<1x16xi32>, tensor<1x16xf32>) outs(%o : tensor<8x1x16xf32>) attrs = {kiln.int8_epilogue} {
  ^bb0(%acc: i32, %sc: f32, %zp: i32, %wsc: f32, %wsm: i32, %bi: f32, %out: f32):
    %5 = arith.muli %zp, %wsm : i32
    %6 = arith.subi %acc, %5 : i32
    %7 = arith.sitofp %6 : i32 to f32
    %8 = arith.mulf %sc, %wsc : f32
    %9 = arith.mulf %7, %8 : f32
    %10 = arith.addf %9, %bi : f32
    linalg.yield %10 : f32
  } -> tensor<8x1x16xf32>
  return %y : tensor<8x1x16xf32>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// A bf16 product (AVX512-BF16 without AMX): with bf16=true the same kernel
// on pairs of k, vdpbf16ps into f32 accumulators, 8 rows x 2 panels; each
// step reads 64 bytes (32 bf16) of each panel and broadcasts one pair of
// each row. Without the option the product is left alone (for AMX).
// CHECK-LABEL: func.func @bf16_matmul
// CHECK: linalg.generic
// CHECK-NOT: llvm.call_intrinsic
// BF16-LABEL: func.func @bf16_matmul
// BF16: scf.for {{.+}} step %c8
// BF16: scf.for {{.+}} step %c2
// BF16: scf.for {{.+}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// BF16: vector.transfer_read {{.+}} : tensor<2x4x32xbf16>, vector<32xbf16>
// BF16: vector.transfer_read {{.+}} : tensor<2x4x32xbf16>, vector<32xbf16>
// BF16: %[[PAIR:.+]] = vector.transfer_read {{.+}} : tensor<8x8xbf16>, vector<2xbf16>
// BF16: %[[I:.+]] = vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xi32>
// BF16: %[[S:.+]] = vector.extract %[[I]][0] : i32 from vector<1xi32>
// BF16: %[[B:.+]] = vector.broadcast %[[S]] : i32 to vector<16xi32>
// BF16: vector.bitcast %[[B]] : vector<16xi32> to vector<32xbf16>
// BF16-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"({{.+}}) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
// BF16-NOT: llvm.call_intrinsic
// BF16: scf.yield
// BF16-COUNT-16: vector.transfer_write {{.+}} : vector<16xf32>, tensor<8x2x16xf32>
// BF16-NOT: linalg.generic
func.func @bf16_matmul(%qa: tensor<8x4x2xbf16>, %w: tensor<2x4x16x2xbf16>) -> tensor<8x2x16xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x2x16xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2x16xf32>) -> tensor<8x2x16xf32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<8x4x2xbf16>, tensor<2x4x16x2xbf16>) outs(%z : tensor<8x2x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.addf %c, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<8x2x16xf32>
  return %0 : tensor<8x2x16xf32>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// 1 MiB of weights (32 panels of 32 columns, K = 1024) for 49 rows: panels
// outermost, so that each panel is read once with the seven 7-row tiles
// inside it, instead of all the weights once per row tile. The threads
// split the panels (51M multiply-adds), each writing its own columns.
// CHECK-LABEL: func.func @wide_weights
// CHECK: scf.forall (%[[G:.+]]) in (32) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<49x32x32xi32>)
// CHECK: %[[COLS:.+]] = tensor.extract_slice %[[OUT]][0, %[[G]], 0] [49, 1, 32] [1, 1, 1]
// CHECK: scf.for %[[M:.+]] = %c0 to %c49 step %c7 iter_args(%{{.+}} = %[[COLS]])
// CHECK: scf.for {{.+}} to %c256
// CHECK: vector.transfer_read %{{.+}}[%[[G]], %{{.+}}, %c0], {{.+}} : tensor<32x256x128xi8>, vector<64xi8>
// CHECK-COUNT-14: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: vector.transfer_write {{.+}}[%[[M]], %c0, %c0] {{.+}} : vector<16xi32>, tensor<49x1x32xi32>
// PAR-LABEL: func.func @wide_weights
// PAR: scf.forall (%[[G:.+]]) in (32) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<49x32x32xi32>)
// PAR: %[[COLS:.+]] = tensor.extract_slice %[[OUT]][0, %[[G]], 0] [49, 1, 32] [1, 1, 1]
// PAR: scf.for %{{.+}} = %c0 to %c49 step %c7 iter_args(%{{.+}} = %[[COLS]])
// PAR-COUNT-14: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// PAR: vector.transfer_write {{.+}} : vector<16xi32>, tensor<49x1x32xi32>
// PAR: tensor.parallel_insert_slice %{{.+}} into %[[OUT]][0, %[[G]], 0] [49, 1, 32] [1, 1, 1]
func.func @wide_weights(%qa: tensor<49x256x4xi8>, %w: tensor<32x256x32x4xi8>) -> tensor<49x32x32xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<49x32x32xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<49x32x32xi32>) -> tensor<49x32x32xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<49x256x4xi8>, tensor<32x256x32x4xi8>) outs(%z : tensor<49x32x32xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<49x32x32xi32>
  return %0 : tensor<49x32x32xi32>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// One row (a classifier at batch 1) is one row tile: the threads share its
// panel groups instead, four panels each.
// PAR-LABEL: func.func @one_row
// PAR: scf.forall (%[[G:.+]]) in (2) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<1x8x16xi32>)
// PAR: %[[P0:.+]] = arith.muli %[[G]], %c4
// PAR: %[[COLS:.+]] = tensor.extract_slice %[[OUT]][0, %[[P0]], 0] [1, 4, 16] [1, 1, 1]
// PAR-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// PAR-NOT: llvm.call_intrinsic
// PAR: tensor.parallel_insert_slice %{{.+}} into %[[OUT]][0, %[[P0]], 0] [1, 4, 16] [1, 1, 1]
func.func @one_row(%qa: tensor<1x64x4xi8>, %w: tensor<8x64x16x4xi8>) -> tensor<1x8x16xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x8x16xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x8x16xi32>) -> tensor<1x8x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<1x64x4xi8>, tensor<8x64x16x4xi8>) outs(%z : tensor<1x8x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<1x8x16xi32>
  return %0 : tensor<1x8x16xi32>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>
#nhwc = affine_map<(n, h, w, c) -> (n, h, w, c)>
#chan = affine_map<(n, h, w, c) -> (c)>

// Static int8's requantization, the product's one user through reshapes,
// runs on the registers: the kernel writes its int8 result [1, H, W, C],
// one row of H per iteration (W = 4 pixel rows, one tile), and never the
// i32 product. The loop is marked as overwriting the tensor it carries.
// CHECK-LABEL: func.func @requantize_on_registers
// CHECK-NOT: linalg.generic
// CHECK: %[[OUT:.+]] = tensor.empty() : tensor<1x2x4x32xi8>
// CHECK: scf.for %[[H:.+]] = %c0 to %c2 step %c1 iter_args(%{{.+}} = %[[OUT]]) -> (tensor<1x2x4x32xi8>)
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: arith.sitofp %{{.+}} : vector<16xi32> to vector<16xf32>
// CHECK: arith.mulf %{{.+}} : vector<16xf32>
// CHECK: arith.fptosi %{{.+}} : vector<16xf32> to vector<16xi32>
// CHECK: %[[Q:.+]] = arith.trunci %{{.+}} : vector<16xi32> to vector<16xi8>
// CHECK: vector.transfer_write %[[Q]], %{{.+}}[%c0, %[[H]], %{{.+}}, %{{.+}}] {{.+}} : vector<16xi8>, tensor<1x2x4x32xi8>
// CHECK: } {kiln.overwritten_outs}
// Across threads one iteration per tile of a row (row h, tile t): here one
// tile of 4 pixels per row.
// PAR-LABEL: func.func @requantize_on_registers
// PAR: scf.forall (%[[I:.+]]) in (2) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<1x2x4x32xi8>)
// PAR: %[[H:.+]] = arith.divui %[[I]], %c1
// PAR: %[[T:.+]] = arith.remui %[[I]], %c1
// PAR: %[[W0:.+]] = arith.muli %[[T]], %c4
// PAR: %[[ROW:.+]] = tensor.extract_slice %[[OUT]][0, %[[H]], %[[W0]], 0] [1, 1, 4, 32]
// PAR-COUNT-8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// PAR: vector.transfer_write %{{.+}}, %{{.+}}[%c0, %c0, %c0, %{{.+}}] {{.+}} : vector<16xi8>, tensor<1x1x4x32xi8>
// PAR: tensor.parallel_insert_slice %{{.+}} into %[[OUT]][0, %[[H]], %[[W0]], 0] [1, 1, 4, 32]
// PAR: } {kiln.overwritten_outs}
func.func @requantize_on_registers(%qa: tensor<8x64x4xi8>, %w: tensor<2x64x16x4xi8>, %scale: tensor<32xf32>) -> tensor<1x2x4x32xi8> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x2x16xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<8x2x16xi32>) -> tensor<8x2x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<8x64x4xi8>, tensor<2x64x16x4xi8>) outs(%z : tensor<8x2x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<8x2x16xi32>
  %flat = tensor.collapse_shape %0 [[0, 1, 2]] : tensor<8x2x16xi32> into tensor<256xi32>
  %nhwc = tensor.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 2, 4, 32] : tensor<256xi32> into tensor<1x2x4x32xi32>
  %qe = tensor.empty() : tensor<1x2x4x32xi8>
  %q = linalg.generic {indexing_maps = [#nhwc, #chan, #nhwc], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%nhwc, %scale : tensor<1x2x4x32xi32>, tensor<32xf32>) outs(%qe : tensor<1x2x4x32xi8>) {
  ^bb0(%v: i32, %s: f32, %o: i8):
    %f = arith.sitofp %v : i32 to f32
    %m = arith.mulf %f, %s : f32
    %i = arith.fptosi %m : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<1x2x4x32xi8>
  return %q : tensor<1x2x4x32xi8>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>
#id2 = affine_map<(m, c) -> (m, c)>

// Weights of 1 MiB go panels outermost, which the consumer's row order
// cannot: the requantization stays a pass of its own.
// CHECK-LABEL: func.func @wide_weights_keep_consumer
// BF16-LABEL: func.func @wide_weights_keep_consumer
// CHECK: scf.forall (%{{.+}}) in (32)
// CHECK: } {kiln.overwritten_outs}
// CHECK: linalg.generic
// CHECK: arith.trunci
func.func @wide_weights_keep_consumer(%qa: tensor<49x256x4xi8>, %w: tensor<32x256x32x4xi8>) -> tensor<49x1024xi8> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<49x32x32xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<49x32x32xi32>) -> tensor<49x32x32xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<49x256x4xi8>, tensor<32x256x32x4xi8>) outs(%z : tensor<49x32x32xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<49x32x32xi32>
  %rows = tensor.collapse_shape %0 [[0], [1, 2]] : tensor<49x32x32xi32> into tensor<49x1024xi32>
  %qe = tensor.empty() : tensor<49x1024xi8>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%rows : tensor<49x1024xi32>) outs(%qe : tensor<49x1024xi8>) {
  ^bb0(%v: i32, %o: i8):
    %t = arith.trunci %v : i32 to i8
    linalg.yield %t : i8
  } -> tensor<49x1024xi8>
  return %q : tensor<49x1024xi8>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>
#mpr = affine_map<(m, p, r) -> (m, p, r)>
#pr = affine_map<(m, p, r) -> (p, r)>

// A Gemm's requantization reads the product as it is, [M, P, R], with its
// per-column values as [P, R]: the kernel writes the int8 result there.
// CHECK-LABEL: func.func @gemm_requantize_on_registers
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: vector.transfer_read %{{.+}} : tensor<2x16xf32>, vector<16xf32>
// CHECK: arith.trunci %{{.+}} : vector<16xi32> to vector<16xi8>
// CHECK: vector.transfer_write %{{.+}} : vector<16xi8>, tensor<8x2x16xi8>
// CHECK: } {kiln.overwritten_outs}
func.func @gemm_requantize_on_registers(%qa: tensor<8x64x4xi8>, %w: tensor<2x64x16x4xi8>, %scale: tensor<2x16xf32>) -> tensor<8x2x16xi8> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x2x16xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<8x2x16xi32>) -> tensor<8x2x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<8x64x4xi8>, tensor<2x64x16x4xi8>) outs(%z : tensor<8x2x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<8x2x16xi32>
  %qe = tensor.empty() : tensor<8x2x16xi8>
  %q = linalg.generic {indexing_maps = [#mpr, #pr, #mpr], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%0, %scale : tensor<8x2x16xi32>, tensor<2x16xf32>) outs(%qe : tensor<8x2x16xi8>) {
  ^bb0(%v: i32, %s: f32, %o: i8):
    %f = arith.sitofp %v : i32 to f32
    %m = arith.mulf %f, %s : f32
    %i = arith.fptosi %m : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<8x2x16xi8>
  return %q : tensor<8x2x16xi8>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>
#nhwc = affine_map<(n, h, w, c) -> (n, h, w, c)>
#chan = affine_map<(n, h, w, c) -> (c)>

// A bf16 product's consumer that writes bf16 (the bias, the activation and
// the next layer's rounding) runs on the vdpbf16ps kernel's registers too.
// BF16-LABEL: func.func @bf16_consumer_on_registers
// BF16-NOT: linalg.generic
// BF16: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// BF16: arith.addf %{{.+}} : vector<16xf32>
// BF16: %[[R:.+]] = arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// BF16: vector.transfer_write %[[R]], %{{.+}} : vector<16xbf16>, tensor<1x2x4x32xbf16>
// BF16: } {kiln.overwritten_outs}
func.func @bf16_consumer_on_registers(%qa: tensor<8x32x2xbf16>, %w: tensor<2x32x16x2xbf16>, %bias: tensor<32xf32>) -> tensor<1x2x4x32xbf16> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x2x16xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2x16xf32>) -> tensor<8x2x16xf32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<8x32x2xbf16>, tensor<2x32x16x2xbf16>) outs(%z : tensor<8x2x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.addf %c, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<8x2x16xf32>
  %flat = tensor.collapse_shape %0 [[0, 1, 2]] : tensor<8x2x16xf32> into tensor<256xf32>
  %nhwc = tensor.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 2, 4, 32] : tensor<256xf32> into tensor<1x2x4x32xf32>
  %re = tensor.empty() : tensor<1x2x4x32xbf16>
  %r = linalg.generic {indexing_maps = [#nhwc, #chan, #nhwc], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%nhwc, %bias : tensor<1x2x4x32xf32>, tensor<32xf32>) outs(%re : tensor<1x2x4x32xbf16>) {
  ^bb0(%v: f32, %b: f32, %o: bf16):
    %s = arith.addf %v, %b : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x2x4x32xbf16>
  return %r : tensor<1x2x4x32xbf16>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>
#nhwc = affine_map<(n, h, w, c) -> (n, h, w, c)>
#bias = affine_map<(n, h, w, c) -> (n, 0, 0, c)>

// A per-channel operand as an imported QDQ bias arrives, [1, 1, 1, C] (the
// graph's [1, C, 1, 1] made NHWC) read at (n, 0, 0, c), is a channel vector
// too: the consumer still runs on the registers, reading it as [C].
// CHECK-LABEL: func.func @requantize_nhwc_bias
// CHECK-NOT: linalg.generic
// CHECK: %[[B:.+]] = tensor.collapse_shape %arg2 {{\[\[}}0, 1, 2, 3]] : tensor<1x1x1x32xf32> into tensor<32xf32>
// CHECK: scf.for
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: vector.transfer_read %[[B]]
// CHECK: arith.addf %{{.+}} : vector<16xf32>
// CHECK: arith.trunci %{{.+}} : vector<16xi32> to vector<16xi8>
func.func @requantize_nhwc_bias(%qa: tensor<8x64x4xi8>, %w: tensor<2x64x16x4xi8>, %bias: tensor<1x1x1x32xf32>) -> tensor<1x2x4x32xi8> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x2x16xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<8x2x16xi32>) -> tensor<8x2x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<8x64x4xi8>, tensor<2x64x16x4xi8>) outs(%z : tensor<8x2x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<8x2x16xi32>
  %flat = tensor.collapse_shape %0 [[0, 1, 2]] : tensor<8x2x16xi32> into tensor<256xi32>
  %nhwc = tensor.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 2, 4, 32] : tensor<256xi32> into tensor<1x2x4x32xi32>
  %qe = tensor.empty() : tensor<1x2x4x32xi8>
  %q = linalg.generic {indexing_maps = [#nhwc, #bias, #nhwc], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%nhwc, %bias : tensor<1x2x4x32xi32>, tensor<1x1x1x32xf32>) outs(%qe : tensor<1x2x4x32xi8>) {
  ^bb0(%v: i32, %b: f32, %o: i8):
    %f = arith.sitofp %v : i32 to f32
    %m = arith.addf %f, %b : f32
    %i = arith.fptosi %m : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<1x2x4x32xi8>
  return %q : tensor<1x2x4x32xi8>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>
#nhwc = affine_map<(n, h, w, c) -> (n, h, w, c)>
#one = affine_map<(n, h, w, c) -> (n, 0, 0, 0)>
#none = affine_map<(n, h, w, c) -> ()>
#chan = affine_map<(n, h, w, c) -> (c)>

// A ConvInteger's dequantization (ORT's dynamic int8): the run-time zero
// point and scale arrive as [1, 1, 1, 1] and 0-d tensors, the result is
// f32 for the next DynamicQuantizeLinear. Still the product's consumer on
// the registers: each one-element operand is read once, ahead of the loops,
// and the kernel writes f32.
// CHECK-LABEL: func.func @dequantize_on_registers
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[ZP:.+]] = tensor.extract %arg2[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : tensor<1x1x1x1xi32>
// CHECK-DAG: %[[S:.+]] = tensor.extract %arg4[] : tensor<f32>
// CHECK: scf.for
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: arith.sitofp %{{.+}} : vector<16xi32> to vector<16xf32>
// CHECK: vector.transfer_write %{{.+}} : vector<16xf32>, tensor<1x2x4x32xf32>
func.func @dequantize_on_registers(%qa: tensor<8x64x4xi8>, %w: tensor<2x64x16x4xi8>, %zp: tensor<1x1x1x1xi32>, %sums: tensor<32xi32>, %scale: tensor<f32>) -> tensor<1x2x4x32xf32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x2x16xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<8x2x16xi32>) -> tensor<8x2x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<8x64x4xi8>, tensor<2x64x16x4xi8>) outs(%z : tensor<8x2x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<8x2x16xi32>
  %flat = tensor.collapse_shape %0 [[0, 1, 2]] : tensor<8x2x16xi32> into tensor<256xi32>
  %nhwc = tensor.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 2, 4, 32] : tensor<256xi32> into tensor<1x2x4x32xi32>
  %fe = tensor.empty() : tensor<1x2x4x32xf32>
  %f = linalg.generic {indexing_maps = [#nhwc, #one, #chan, #none, #nhwc], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%nhwc, %zp, %sums, %scale : tensor<1x2x4x32xi32>, tensor<1x1x1x1xi32>, tensor<32xi32>, tensor<f32>) outs(%fe : tensor<1x2x4x32xf32>) {
  ^bb0(%v: i32, %z0: i32, %s0: i32, %sc: f32, %o: f32):
    %share = arith.muli %z0, %s0 : i32
    %d = arith.subi %v, %share : i32
    %x = arith.sitofp %d : i32 to f32
    %y = arith.mulf %x, %sc : f32
    linalg.yield %y : f32
  } -> tensor<1x2x4x32xf32>
  return %f : tensor<1x2x4x32xf32>
}

// -----

#win = affine_map<(n, oh, ow, kh, j) -> (n, oh + kh, ow * 16 + j)>
#id5 = affine_map<(n, oh, ow, kh, j) -> (n, oh, ow, kh, j)>
#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// A 3x3 convolution over 16 channels as LowerQuantized unfolds it: the
// windows of the padded [1, 6, 6 x 16] input copied into rows [16, 144]. The
// kernel reads the windows from the padded input itself: no copy is left,
// the k loop is a loop over the 3 taps around one over the 12 groups of the
// tap's 48 contiguous bytes, and row m reads input row m / 4 + kh from
// column (m % 4) * 16.
// CHECK-LABEL: func.func @unfolded_windows
// CHECK-SAME: (%[[SRC:.+]]: tensor<1x6x96xi8>, %[[W4:.+]]: tensor<1x36x16x4xi8>)
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C12:.+]] = arith.constant 12 : index
// CHECK-DAG: %[[IN:.+]] = tensor.collapse_shape %[[SRC]] {{\[\[}}0, 1], [2]] : tensor<1x6x96xi8> into tensor<6x96xi8>
// CHECK: scf.for %[[M:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK: %[[PIX:.+]] = arith.remui %[[M]], %[[C4]]
// CHECK: %[[LINE:.+]] = arith.divui %[[M]], %[[C4]]
// CHECK: %[[COL:.+]] = arith.muli %[[PIX]], %{{.+}}
// CHECK: scf.for %[[KH:.+]] = %{{.+}} to %[[C3]] step
// CHECK: %[[DOWN:.+]] = arith.muli %[[KH]], %{{.+}}
// CHECK: %[[ROW:.+]] = arith.addi %{{.+}}, %[[DOWN]]
// CHECK: %[[FIRST:.+]] = arith.muli %[[KH]], %[[C12]]
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %[[C12]] step
// CHECK: %[[K4:.+]] = arith.addi %[[FIRST]], %[[J]]
// CHECK: vector.transfer_read %{{.+}}[%{{.+}}, %[[K4]], %{{.+}}]{{.+}} : tensor<1x36x64xi8>, vector<64xi8>
// CHECK: %[[AT:.+]] = arith.addi %[[COL]], %{{.+}}
// CHECK: vector.transfer_read %[[IN]][%[[ROW]], %[[AT]]]{{.+}} : tensor<6x96xi8>, vector<4xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: linalg.generic
func.func @unfolded_windows(%src: tensor<1x6x96xi8>, %w: tensor<1x36x16x4xi8>) -> tensor<16x1x16xi32> {
  %c0 = arith.constant 0 : i32
  %e5 = tensor.empty() : tensor<1x4x4x3x48xi8>
  %cols = linalg.generic {indexing_maps = [#win, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%src : tensor<1x6x96xi8>) outs(%e5 : tensor<1x4x4x3x48xi8>) {
  ^bb0(%a: i8, %o: i8):
    linalg.yield %a : i8
  } -> tensor<1x4x4x3x48xi8>
  %rows = tensor.collapse_shape %cols [[0, 1, 2], [3, 4]] : tensor<1x4x4x3x48xi8> into tensor<16x144xi8>
  %qa = tensor.expand_shape %rows [[0], [1, 2]] output_shape [16, 36, 4] : tensor<16x144xi8> into tensor<16x36x4xi8>
  %e = tensor.empty() : tensor<16x1x16xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<16x1x16xi32>) -> tensor<16x1x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<16x36x4xi8>, tensor<1x36x16x4xi8>) outs(%z : tensor<16x1x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<16x1x16xi32>
  return %0 : tensor<16x1x16xi32>
}

// -----

#win = affine_map<(n, oh, ow, kh, j) -> (n, oh * 2 + kh, ow * 32 + j)>
#id5 = affine_map<(n, oh, ow, kh, j) -> (n, oh, ow, kh, j)>
#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// Stride 2 over two images, K = 144 padded to 160 (the padded columns meet
// zero weights): rows cross images (image m / 16 starts at input row 9 n),
// the column of a pixel is 32 (m % 4), and the k loop stops at the 36
// groups the window has.
// CHECK-LABEL: func.func @unfolded_windows_strided_padded
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG: %[[C9:.+]] = arith.constant 9 : index
// CHECK-DAG: %[[C12:.+]] = arith.constant 12 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK: %[[PIX:.+]] = arith.remui
// CHECK: %[[LINE:.+]] = arith.divui
// CHECK: %[[OH:.+]] = arith.remui %[[LINE]]
// CHECK: %[[N:.+]] = arith.divui %[[LINE]]
// CHECK: arith.muli %[[N]], %[[C9]]
// CHECK: arith.muli %[[PIX]], %[[C32]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[C3]] step
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[C12]] step
// CHECK: vector.transfer_read {{.+}} : tensor<18x288xi8>, vector<4xi8>
// CHECK-NOT: linalg.generic
func.func @unfolded_windows_strided_padded(%src: tensor<2x9x288xi8>, %w: tensor<1x40x16x4xi8>) -> tensor<32x1x16xi32> {
  %c0 = arith.constant 0 : i32
  %c0i8 = arith.constant 0 : i8
  %e5 = tensor.empty() : tensor<2x4x4x3x48xi8>
  %cols = linalg.generic {indexing_maps = [#win, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%src : tensor<2x9x288xi8>) outs(%e5 : tensor<2x4x4x3x48xi8>) {
  ^bb0(%a: i8, %o: i8):
    linalg.yield %a : i8
  } -> tensor<2x4x4x3x48xi8>
  %rows = tensor.collapse_shape %cols [[0, 1, 2], [3, 4]] : tensor<2x4x4x3x48xi8> into tensor<32x144xi8>
  %ep = tensor.empty() : tensor<32x160xi8>
  %zp = linalg.fill ins(%c0i8 : i8) outs(%ep : tensor<32x160xi8>) -> tensor<32x160xi8>
  %ins = tensor.insert_slice %rows into %zp[0, 0] [32, 144] [1, 1] : tensor<32x144xi8> into tensor<32x160xi8>
  %qa = tensor.expand_shape %ins [[0], [1, 2]] output_shape [32, 40, 4] : tensor<32x160xi8> into tensor<32x40x4xi8>
  %e = tensor.empty() : tensor<32x1x16xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<32x1x16xi32>) -> tensor<32x1x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<32x40x4xi8>, tensor<1x40x16x4xi8>) outs(%z : tensor<32x1x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<32x1x16xi32>
  return %0 : tensor<32x1x16xi32>
}

// -----

#win = affine_map<(n, oh, ow, kh, kw, c) -> (n, oh + kh * 2, ow + kw * 2, c)>
#id6 = affine_map<(n, oh, ow, kh, kw, c) -> (n, oh, ow, kh, kw, c)>
#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// 8 channels with dilation 2: unfolded per tap (kh, kw, c). The kernel loops
// over the kernel rows, the taps of a row (2 x 8 bytes apart in a row of the
// padded [8, 8 x 8] input) and the 2 groups of a tap's 8 bytes.
// CHECK-LABEL: func.func @unfolded_taps_dilated
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG: %[[C6:.+]] = arith.constant 6 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[IN:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2, 3]] : tensor<1x8x8x8xi8> into tensor<8x64xi8>
// CHECK: scf.for %[[KH:.+]] = %{{.+}} to %[[C3]] step
// CHECK: %[[FIRST:.+]] = arith.muli %[[KH]], %[[C6]]
// CHECK: scf.for %[[KW:.+]] = %{{.+}} to %[[C3]] step
// CHECK: arith.muli %[[KW]], %[[C16]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[C2]] step
// CHECK: vector.transfer_read %[[IN]]{{.+}} : tensor<8x64xi8>, vector<4xi8>
// CHECK-NOT: linalg.generic
func.func @unfolded_taps_dilated(%src: tensor<1x8x8x8xi8>, %w: tensor<1x18x16x4xi8>) -> tensor<16x1x16xi32> {
  %c0 = arith.constant 0 : i32
  %e6 = tensor.empty() : tensor<1x4x4x3x3x8xi8>
  %cols = linalg.generic {indexing_maps = [#win, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%src : tensor<1x8x8x8xi8>) outs(%e6 : tensor<1x4x4x3x3x8xi8>) {
  ^bb0(%a: i8, %o: i8):
    linalg.yield %a : i8
  } -> tensor<1x4x4x3x3x8xi8>
  %qa = tensor.collapse_shape %cols [[0, 1, 2], [3, 4], [5]] : tensor<1x4x4x3x3x8xi8> into tensor<16x9x8xi8>
  %qa2 = tensor.collapse_shape %qa [[0], [1, 2]] : tensor<16x9x8xi8> into tensor<16x72xi8>
  %qa3 = tensor.expand_shape %qa2 [[0], [1, 2]] output_shape [16, 18, 4] : tensor<16x72xi8> into tensor<16x18x4xi8>
  %e = tensor.empty() : tensor<16x1x16xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<16x1x16xi32>) -> tensor<16x1x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa3, %w : tensor<16x18x4xi8>, tensor<1x18x16x4xi8>) outs(%z : tensor<16x1x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<16x1x16xi32>
  return %0 : tensor<16x1x16xi32>
}

// -----

#win = affine_map<(n, oh, ow, kh, j) -> (n, oh + kh, ow * 16 + j * 2)>
#id5 = affine_map<(n, oh, ow, kh, j) -> (n, oh, ow, kh, j)>
#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// A window that does not read a contiguous run per tap stays unfolded.
// CHECK-LABEL: func.func @windows_not_contiguous
// CHECK: linalg.generic
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0], [1, 2]] : tensor<16x36x4xi8> into tensor<16x144xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
func.func @windows_not_contiguous(%src: tensor<1x6x192xi8>, %w: tensor<1x36x16x4xi8>) -> tensor<16x1x16xi32> {
  %c0 = arith.constant 0 : i32
  %e5 = tensor.empty() : tensor<1x4x4x3x48xi8>
  %cols = linalg.generic {indexing_maps = [#win, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%src : tensor<1x6x192xi8>) outs(%e5 : tensor<1x4x4x3x48xi8>) {
  ^bb0(%a: i8, %o: i8):
    linalg.yield %a : i8
  } -> tensor<1x4x4x3x48xi8>
  %rows = tensor.collapse_shape %cols [[0, 1, 2], [3, 4]] : tensor<1x4x4x3x48xi8> into tensor<16x144xi8>
  %qa = tensor.expand_shape %rows [[0], [1, 2]] output_shape [16, 36, 4] : tensor<16x144xi8> into tensor<16x36x4xi8>
  %e = tensor.empty() : tensor<16x1x16xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<16x1x16xi32>) -> tensor<16x1x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<16x36x4xi8>, tensor<1x36x16x4xi8>) outs(%z : tensor<16x1x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<16x1x16xi32>
  return %0 : tensor<16x1x16xi32>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// Rows of run-time count (a symbolic batch or sequence): full tiles of 8
// rows up to M - M mod 8, then one tile for each bit of M mod 8 (4, 2 and
// 1 rows), so that no tile has a run-time size. M is at most 64 here: at
// 16384 multiply-adds (parallel-work) the full tiles are an scf.forall of
// M / 8 iterations, and the rest follows.
// CHECK-LABEL: func.func @run_time_rows
// CHECK: %[[QA3:.+]] = tensor.extract_slice
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK: %[[M:.+]] = tensor.dim %[[QA3]], %{{.+}} : tensor<?x4x4xi8>
// CHECK: %[[FULL:.+]] = arith.divui %[[M]], %[[C8]]
// CHECK: %[[SPLIT:.+]] = arith.muli %[[FULL]], %[[C8]]
// CHECK-DAG: %[[NOT7:.+]] = arith.constant -8 : index
// CHECK: %[[OUT:.+]] = tensor.empty(%[[M]]) : tensor<?x2x32xi32>
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[SPLIT]] step %[[C8]] iter_args(%{{.+}} = %[[OUT]])
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: %[[REST:.+]] = arith.subi %[[M]], %[[SPLIT]]
// CHECK: %[[BIT4:.+]] = arith.andi %[[REST]], %[[C4]]
// CHECK: %[[HAS4:.+]] = arith.cmpi ne, %[[BIT4]]
// CHECK: %[[ABOVE4:.+]] = arith.andi %[[REST]], %[[NOT7]]
// CHECK: arith.addi %[[SPLIT]], %[[ABOVE4]]
// CHECK: scf.if %[[HAS4]]
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: llvm.call_intrinsic
// CHECK: scf.if
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: llvm.call_intrinsic
// CHECK: scf.if
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: llvm.call_intrinsic
// CHECK: return
// PAR-LABEL: func.func @run_time_rows
// PAR: %[[QA3:.+]] = tensor.extract_slice
// PAR: %[[M:.+]] = tensor.dim %[[QA3]]
// PAR: %[[FULL:.+]] = arith.divui %[[M]], %c8
// PAR: scf.forall (%[[I:.+]]) in (%[[FULL]]) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<?x2x32xi32>)
// PAR: %[[M0:.+]] = arith.muli %[[I]], %c8
// PAR: tensor.extract_slice %[[OUT]][%[[M0]], 0, 0] [8, 2, 32] [1, 1, 1] : tensor<?x2x32xi32> to tensor<8x2x32xi32>
// PAR-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// PAR: scf.forall.in_parallel
// PAR: scf.if
func.func @run_time_rows(%all: tensor<?x4x4xi8>, %w: tensor<2x4x32x4xi8>) -> tensor<?x2x32xi32> {
  %c0 = arith.constant 0 : i32
  %i0 = arith.constant 0 : index
  %n = tensor.dim %all, %i0 : tensor<?x4x4xi8>
  %m = affine.min affine_map<(d0) -> (d0, 64)>(%n)
  %qa = tensor.extract_slice %all[0, 0, 0] [%m, 4, 4] [1, 1, 1] : tensor<?x4x4xi8> to tensor<?x4x4xi8>
  %e = tensor.empty(%m) : tensor<?x2x32xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<?x2x32xi32>) -> tensor<?x2x32xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<?x4x4xi8>, tensor<2x4x32x4xi8>) outs(%z : tensor<?x2x32xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<?x2x32xi32>
  return %0 : tensor<?x2x32xi32>
}
