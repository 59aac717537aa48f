// RUN: kiln-opt %s --split-input-file --kiln-lower-vector-ops | FileCheck %s

// A register-tile contraction (8x1 column times 1x32 row) becomes one FMA per
// output row: the A element broadcast, times the B row, plus the C row.
// CHECK-LABEL: func.func @contract_to_fma
// CHECK-SAME: (%[[A:.+]]: vector<8x1xf32>, %[[B:.+]]: vector<1x32xf32>, %[[C:.+]]: vector<8x32xf32>)
// CHECK: %[[BROW:.+]] = vector.extract %[[B]][0] : vector<32xf32> from vector<1x32xf32>
// CHECK: %[[A0:.+]] = vector.extract %[[A]][0, 0] : f32 from vector<8x1xf32>
// CHECK: %[[A0V:.+]] = vector.broadcast %[[A0]] : f32 to vector<32xf32>
// CHECK: %[[C0:.+]] = vector.extract %[[C]][0] : vector<32xf32> from vector<8x32xf32>
// CHECK: vector.fma %[[A0V]], %[[BROW]], %[[C0]] : vector<32xf32>
// CHECK-COUNT-7: vector.fma %{{.+}}, %[[BROW]], %{{.+}} : vector<32xf32>
// CHECK-NOT: vector.contract
// CHECK-NOT: vector.outerproduct
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @contract_to_fma(%a: vector<8x1xf32>, %b: vector<1x32xf32>, %c: vector<8x32xf32>) -> vector<8x32xf32> {
  %0 = vector.contract {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %c : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
  return %0 : vector<8x32xf32>
}

// -----

// Transcendentals become polynomial approximations on whole vectors.
// CHECK-LABEL: func.func @math_to_polynomials
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: math.fma {{.+}} : vector<16xf32>
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: return
func.func @math_to_polynomials(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.exp %x : vector<16xf32>
  %1 = math.tanh %0 : vector<16xf32>
  %2 = math.erf %1 : vector<16xf32>
  return %2 : vector<16xf32>
}

// -----

// A reduction along the inner dimension becomes adds of whole vectors across
// the outer (parallel) dimension.
// CHECK-LABEL: func.func @multi_reduction
// CHECK-SAME: (%{{.+}}: vector<4x16xf32>, %[[ACC:.+]]: vector<4xf32>)
// CHECK: arith.addf %{{.+}}, %[[ACC]] : vector<4xf32>
// CHECK-COUNT-15: arith.addf {{.+}} : vector<4xf32>
// CHECK-NOT: vector.multi_reduction
func.func @multi_reduction(%x: vector<4x16xf32>, %acc: vector<4xf32>) -> vector<4xf32> {
  %0 = vector.multi_reduction <add>, %x, %acc [1] : vector<4x16xf32> to vector<4xf32>
  return %0 : vector<4xf32>
}

// -----

// A row of inputs read only to be broadcast element by element (a
// convolution's input pixels) becomes one scalar load per element, which
// LLVM turns into a broadcast from memory, instead of a vector load and
// in-register shuffles.
// CHECK-LABEL: func.func @input_row_to_scalar_loads
// CHECK-SAME: (%[[X:.+]]: memref<4x2xf32>, %[[W:.+]]: vector<2x32xf32>, %[[ACC:.+]]: vector<4x32xf32>)
// CHECK-NOT: vector.transfer_read
// CHECK: %[[E:.+]] = memref.load %[[X]][%{{.+}}, %{{.+}}] : memref<4x2xf32>
// CHECK: %[[B:.+]] = vector.broadcast %[[E]] : f32 to vector<32xf32>
// CHECK: vector.fma %[[B]], %{{.+}}, %{{.+}} : vector<32xf32>
// CHECK-COUNT-7: memref.load %[[X]]
// CHECK-NOT: vector.transfer_read
#lhs2 = affine_map<(m, n, k) -> (m, k)>
#rhs2 = affine_map<(m, n, k) -> (k, n)>
#out2 = affine_map<(m, n, k) -> (m, n)>
func.func @input_row_to_scalar_loads(%x: memref<4x2xf32>, %w: vector<2x32xf32>, %acc: vector<4x32xf32>) -> vector<4x32xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %row = vector.transfer_read %x[%c0, %c0], %pad {in_bounds = [true, true]} : memref<4x2xf32>, vector<4x2xf32>
  %0 = vector.contract {indexing_maps = [#lhs2, #rhs2, #out2], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %row, %w, %acc : vector<4x2xf32>, vector<2x32xf32> into vector<4x32xf32>
  return %0 : vector<4x32xf32>
}

// -----

// A batched matmul's tile comes out of the vectorizer with both operands
// broadcast to the whole tile and a reduction of size 1: an elementwise
// multiply-add, which becomes one FMA on the tile (unrolled by the LLVM
// lowering) rather than a multiply and an add. With a reduction of 4 it stays
// a contraction (multiplied, then reduced).
// CHECK-LABEL: func.func @elementwise_contract_to_fma
// CHECK-SAME: (%[[A:.+]]: vector<8x32x1xf32>, %[[B:.+]]: vector<8x32x1xf32>, %[[C:.+]]: vector<8x32xf32>)
// CHECK: %[[A2:.+]] = vector.shape_cast %[[A]] : vector<8x32x1xf32> to vector<8x32xf32>
// CHECK: %[[B2:.+]] = vector.shape_cast %[[B]] : vector<8x32x1xf32> to vector<8x32xf32>
// CHECK: %[[R:.+]] = vector.fma %[[A2]], %[[B2]], %[[C]] : vector<8x32xf32>
// CHECK-NEXT: return %[[R]]
// CHECK-LABEL: func.func @elementwise_contract_reduced
// CHECK: arith.mulf
// CHECK-NOT: vector.fma
#id = affine_map<(m, n, k) -> (m, n, k)>
#acc = affine_map<(m, n, k) -> (m, n)>
func.func @elementwise_contract_to_fma(%a: vector<8x32x1xf32>, %b: vector<8x32x1xf32>, %c: vector<8x32xf32>) -> vector<8x32xf32> {
  %0 = vector.contract {indexing_maps = [#id, #id, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %c : vector<8x32x1xf32>, vector<8x32x1xf32> into vector<8x32xf32>
  return %0 : vector<8x32xf32>
}
func.func @elementwise_contract_reduced(%a: vector<8x32x4xf32>, %b: vector<8x32x4xf32>, %c: vector<8x32xf32>) -> vector<8x32xf32> {
  %0 = vector.contract {indexing_maps = [#id, #id, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %c : vector<8x32x4xf32>, vector<8x32x4xf32> into vector<8x32xf32>
  return %0 : vector<8x32xf32>
}

// -----

// A whole vector summed into one value (a row of layer norm or softmax, 64
// lanes a step) becomes one reduction marked reassoc, which LLVM adds as a
// tree, not a chain of 64 dependent adds. A sum into several values keeps
// the lowering above (see @multi_reduction).
// CHECK-LABEL: func.func @row_sum_to_reduction
// CHECK-SAME: (%[[X:.+]]: vector<1x64xf32>, %[[ACC:.+]]: vector<1xf32>)
// CHECK: %[[FLAT:.+]] = vector.shape_cast %[[X]] : vector<1x64xf32> to vector<64xf32>
// CHECK: %[[A:.+]] = vector.extract %[[ACC]][0] : f32 from vector<1xf32>
// CHECK: %[[S:.+]] = vector.reduction <add>, %[[FLAT]], %[[A]] fastmath<reassoc> : vector<64xf32> into f32
// CHECK: vector.broadcast %[[S]] : f32 to vector<1xf32>
// CHECK-NOT: vector.multi_reduction
func.func @row_sum_to_reduction(%x: vector<1x64xf32>, %acc: vector<1xf32>) -> vector<1xf32> {
  %0 = vector.multi_reduction <add>, %x, %acc [1] : vector<1x64xf32> to vector<1xf32>
  return %0 : vector<1xf32>
}

// -----

// A dot product (layer norm's variance: the centred row times itself) is
// the lanes multiplied, then one reassociating reduction; a contraction to
// more than one value is left to the outer-product lowering.
// CHECK-LABEL: func.func @dot_to_reduction
// CHECK-SAME: (%[[X:.+]]: vector<64xf32>, %[[Y:.+]]: vector<1x64xf32>, %[[ACC:.+]]: vector<1xf32>)
// CHECK: %[[YF:.+]] = vector.shape_cast %[[Y]] : vector<1x64xf32> to vector<64xf32>
// CHECK: %[[P:.+]] = arith.mulf %[[X]], %[[YF]] : vector<64xf32>
// CHECK: %[[A:.+]] = vector.extract %[[ACC]][0] : f32 from vector<1xf32>
// CHECK: vector.reduction <add>, %[[P]], %[[A]] fastmath<reassoc> : vector<64xf32> into f32
// CHECK-NOT: vector.contract
// CHECK-LABEL: func.func @dot_two_values
// CHECK-NOT: fastmath<reassoc>
#x = affine_map<(m, k) -> (k)>
#y = affine_map<(m, k) -> (m, k)>
#o = affine_map<(m, k) -> (m)>
func.func @dot_to_reduction(%x: vector<64xf32>, %y: vector<1x64xf32>, %acc: vector<1xf32>) -> vector<1xf32> {
  %0 = vector.contract {indexing_maps = [#x, #y, #o], iterator_types = ["parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %acc : vector<64xf32>, vector<1x64xf32> into vector<1xf32>
  return %0 : vector<1xf32>
}
func.func @dot_two_values(%x: vector<64xf32>, %y: vector<2x64xf32>, %acc: vector<2xf32>) -> vector<2xf32> {
  %0 = vector.contract {indexing_maps = [#x, #y, #o], iterator_types = ["parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %acc : vector<64xf32>, vector<2x64xf32> into vector<2xf32>
  return %0 : vector<2xf32>
}

// -----

// Mixed precision (bf16 operands, f32 sums) is left to the upstream
// lowering: the operands cannot be reinterpreted as the accumulator.
// CHECK-LABEL: func.func @mixed_precision_dot
// CHECK-NOT: fastmath<reassoc>
#mx = affine_map<(m, k) -> (k)>
#my = affine_map<(m, k) -> (m, k)>
#mo = affine_map<(m, k) -> (m)>
func.func @mixed_precision_dot(%x: vector<32xbf16>, %y: vector<1x32xbf16>, %acc: vector<1xf32>) -> vector<1xf32> {
  %0 = vector.contract {indexing_maps = [#mx, #my, #mo], iterator_types = ["parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %acc : vector<32xbf16>, vector<1x32xbf16> into vector<1xf32>
  return %0 : vector<1xf32>
}

// -----

// A 16 x 16 transpose of f32 is the shuffle network (vector.shuffle of
// whole rows), not 256 element extracts and inserts.
// CHECK-LABEL: func.func @transpose_16x16
// CHECK: vector.shuffle
// CHECK-NOT: vector.extract {{.+}} : f32 from
// CHECK-NOT: vector.transpose
func.func @transpose_16x16(%x: vector<16x16xf32>) -> vector<16x16xf32> {
  %0 = vector.transpose %x, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
  return %0 : vector<16x16xf32>
}

// -----

// exp's polynomial builds its power of two 2^k from the integral k in
// [-127, 127] as bitcast(k + 2^23 + 127) << 23 (0x4B00007F is 2^23 + 127),
// not (fptosi(k) + 127) << 23:
// the same bits, but a NaN input stays a NaN instead of a poison conversion
// (which let LLVM drop the stores of a softmax masked whole).
// CHECK-LABEL: func.func @exp_power_of_two
// CHECK-NOT: arith.fptosi
// CHECK: %[[SHIFT:.+]] = arith.constant dense<23> : vector<16xi32>
// CHECK: %[[MAGIC:.+]] = arith.constant dense<0x4B00007F> : vector<16xf32>
// CHECK-NEXT: %[[B:.+]] = arith.addf %{{.+}}, %[[MAGIC]] : vector<16xf32>
// CHECK: %[[I:.+]] = arith.bitcast %[[B]] : vector<16xf32> to vector<16xi32>
// CHECK: %[[P:.+]] = arith.shli %[[I]], %[[SHIFT]] : vector<16xi32>
// CHECK: arith.bitcast %[[P]] : vector<16xi32> to vector<16xf32>
// CHECK-NOT: arith.fptosi
func.func @exp_power_of_two(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.exp %x : vector<16xf32>
  return %e : vector<16xf32>
}

// -----

// sin's polynomial converts its quadrant index, which is NaN for a NaN
// input, in no 2^k form: the conversion reads 0 for a NaN instead.
// CHECK-LABEL: func.func @sin_quadrant
// CHECK: %[[NAN:.+]] = arith.cmpf uno, %[[K:.+]], %[[K]] : vector<16xf32>
// CHECK: %[[SAFE:.+]] = arith.select %[[NAN]], %{{.+}}, %[[K]] : vector<16xi1>, vector<16xf32>
// CHECK: arith.fptosi %[[SAFE]] : vector<16xf32> to vector<16xi32>
func.func @sin_quadrant(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.sin %x : vector<16xf32>
  return %e : vector<16xf32>
}

// -----

// An operand of a batched product whose indexing puts a broadcast dimension
// between its own (the attention scores' query rows, 8 of them against 32
// key columns) comes out of the vectorizer as a broadcast, a transpose and
// an extract. It becomes one splat per row feeding the FMA, not the 256
// extracts and inserts of an element-wise transpose.
// CHECK-LABEL: func.func @broadcast_operand_to_fma
// CHECK-SAME: (%[[A:.+]]: vector<8x1xf32>, %[[B:.+]]: vector<8x32x1xf32>, %[[C:.+]]: vector<8x32xf32>)
// CHECK-NOT: vector.transpose
// CHECK: %[[A0:.+]] = vector.extract %[[A]][0, 0] : f32 from vector<8x1xf32>
// CHECK-NEXT: vector.broadcast %[[A0]] : f32 to vector<32xf32>
// CHECK-COUNT-7: vector.broadcast %{{.+}} : f32 to vector<32xf32>
// CHECK-NOT: : f32 into vector<
// CHECK: %[[B2:.+]] = vector.shape_cast %[[B]] : vector<8x32x1xf32> to vector<8x32xf32>
// CHECK: vector.fma %{{.+}}, %[[B2]], %[[C]] : vector<8x32xf32>
#id = affine_map<(m, n, k) -> (m, n, k)>
#acc = affine_map<(m, n, k) -> (m, n)>
func.func @broadcast_operand_to_fma(%a: vector<8x1xf32>, %b: vector<8x32x1xf32>, %c: vector<8x32xf32>) -> vector<8x32xf32> {
  %0 = vector.broadcast %a : vector<8x1xf32> to vector<32x1x1x8x1xf32>
  %1 = vector.transpose %0, [1, 2, 3, 0, 4] : vector<32x1x1x8x1xf32> to vector<1x1x8x32x1xf32>
  %2 = vector.extract %1[0, 0] : vector<8x32x1xf32> from vector<1x1x8x32x1xf32>
  %3 = vector.contract {indexing_maps = [#id, #id, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %2, %b, %c : vector<8x32x1xf32>, vector<8x32x1xf32> into vector<8x32xf32>
  return %3 : vector<8x32xf32>
}

// -----

// A transpose of a broadcast that keeps the broadcast value's own
// dimensions in order is a broadcast: a splat per row. One that reorders
// them stays a transpose (element by element).
// CHECK-LABEL: func.func @transpose_of_broadcast
// CHECK-NOT: vector.transpose
// CHECK-COUNT-4: vector.broadcast %{{.+}} : f32 to vector<3xf32>
// CHECK-NOT: : f32 into vector<
// CHECK: return
// CHECK-LABEL: func.func @own_dims_reordered
// CHECK-COUNT-8: vector.insert %{{.+}} : f32 into vector<2x3x4xf32>
func.func @transpose_of_broadcast(%a: vector<4xf32>) -> vector<4x3xf32> {
  %0 = vector.broadcast %a : vector<4xf32> to vector<3x4xf32>
  %1 = vector.transpose %0, [1, 0] : vector<3x4xf32> to vector<4x3xf32>
  return %1 : vector<4x3xf32>
}
func.func @own_dims_reordered(%a: vector<4x2xf32>) -> vector<2x3x4xf32> {
  %0 = vector.broadcast %a : vector<4x2xf32> to vector<3x4x2xf32>
  %1 = vector.transpose %0, [2, 0, 1] : vector<3x4x2xf32> to vector<2x3x4xf32>
  return %1 : vector<2x3x4xf32>
}
