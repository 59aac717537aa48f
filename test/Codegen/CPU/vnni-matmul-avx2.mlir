// RUN: kiln-opt %s --split-input-file --kiln-cpu-vnni-matmul="avx2=true" | FileCheck %s

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// The int8 kernel's AVX2 form (targets with AVX2 and no AVX512-VNNI):
// pmaddwd multiplies 16-bit lanes, so the rows are zero-extended once ahead
// of the kernel and constant weights are sign-extended at compile time, in
// the same packed order (1, -2, 3, -4 -> 0x0100 0xFEFF 0x0300 0xFCFF; -128
// -> 0x80FF; 127 -> 0x7F00). A register of 16 columns is 4 parts of 8 i32
// lanes (4 columns, two partial sums each); a tile is 2 rows, so 8 parts.
// Each k step reads the 4 parts' weights once, broadcasts each row's 4
// widened k as one i64 and issues 8 pmaddwd, each added to its part. After
// the k loop each row's parts are summed pairwise into 16 columns.
// CHECK-LABEL: func.func @constant_weights
// CHECK-DAG: %[[Z:.+]] = arith.constant dense<0> : vector<8xi32>
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[C48:.+]] = arith.constant 48 : index
// CHECK: %[[QA:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0], [1, 2]] : tensor<4x2x4xi8> into tensor<4x8xi8>
// CHECK: %[[ROWS:.+]] = linalg.generic {{.+}} ins(%[[QA]] : tensor<4x8xi8>) outs(%{{.+}} : tensor<4x8xi16>)
// CHECK: arith.extui %{{.+}} : i8 to i16
// CHECK: %[[W:.+]] = arith.constant dense_resource<int16_weights> : tensor<1x2x64xi16>
// CHECK: scf.for %[[M:.+]] = %[[C0]] to %{{.+}} step %{{.+}} iter_args
// CHECK: scf.for %[[P:.+]] = %[[C0]] to
// CHECK: scf.for %[[K:.+]] = %[[C0]] to {{.+}} iter_args(%[[A0:[^ ]+]] = %[[Z]], %{{.+}} = %[[Z]], %{{.+}} = %[[Z]], %{{.+}} = %[[Z]], %{{.+}} = %[[Z]], %{{.+}} = %[[Z]], %{{.+}} = %[[Z]], %{{.+}} = %[[Z]]) -> (vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>)
// CHECK: %[[W0:.+]] = vector.transfer_read %[[W]][%[[P]], %[[K]], %[[C0]]]{{.+}} : tensor<1x2x64xi16>, vector<16xi16>
// CHECK: vector.transfer_read %[[W]][%[[P]], %[[K]], %[[C16]]]{{.+}} : tensor<1x2x64xi16>, vector<16xi16>
// CHECK: vector.transfer_read %[[W]][%[[P]], %[[K]], %[[C32]]]{{.+}} : tensor<1x2x64xi16>, vector<16xi16>
// CHECK: vector.transfer_read %[[W]][%[[P]], %[[K]], %[[C48]]]{{.+}} : tensor<1x2x64xi16>, vector<16xi16>
// CHECK: %[[R:.+]] = vector.transfer_read %[[ROWS]][%[[M]], %{{.+}}]{{.+}} : tensor<4x8xi16>, vector<4xi16>
// CHECK: %[[R64:.+]] = vector.bitcast %[[R]] : vector<4xi16> to vector<1xi64>
// CHECK: %[[S:.+]] = vector.extract %[[R64]][0] : i64 from vector<1xi64>
// CHECK: %[[BC:.+]] = vector.broadcast %[[S]] : i64 to vector<4xi64>
// CHECK: %[[A:.+]] = vector.bitcast %[[BC]] : vector<4xi64> to vector<16xi16>
// CHECK: %[[PR:.+]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[A]], %[[W0]]) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK: arith.addi %[[A0]], %[[PR]] : vector<8xi32>
// CHECK-COUNT-7: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK-NOT: llvm.call_intrinsic
// CHECK: scf.yield
// CHECK: %[[LO:.+]] = vector.shuffle %[[K0:.+]]#0, %[[K0]]#1 [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xi32>, vector<8xi32>
// CHECK: %[[HI:.+]] = vector.shuffle %[[K0]]#2, %[[K0]]#3 [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
// CHECK-DAG: %[[ODD:.+]] = vector.shuffle %[[LO]], %[[HI]] [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
// CHECK-DAG: %[[EVEN:.+]] = vector.shuffle %[[LO]], %[[HI]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK: %[[SUM:.+]] = arith.addi %[[EVEN]], %[[ODD]] : vector<16xi32>
// CHECK: vector.transfer_write %[[SUM]], %{{.+}}[%[[M]], %[[P]], %[[C0]]] {{.+}} : vector<16xi32>, tensor<4x1x16xi32>
// CHECK-COUNT-2: vector.shuffle %[[K0]]#
// CHECK-NOT: linalg.generic
// CHECK: int16_weights: "0x080000000100FEFF0300FCFF0500
// CHECK-SAME: 3D003E003F0080FF0100FEFF0300FCFF
// CHECK-SAME: 3D003E003F007F00"
func.func @constant_weights(%qa: tensor<4x2x4xi8>) -> tensor<4x1x16xi32> {
  %w = arith.constant dense<[[[[1, -2, 3, -4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16], [17, 18, 19, 20], [21, 22, 23, 24], [25, 26, 27, 28], [29, 30, 31, 32], [33, 34, 35, 36], [37, 38, 39, 40], [41, 42, 43, 44], [45, 46, 47, 48], [49, 50, 51, 52], [53, 54, 55, 56], [57, 58, 59, 60], [61, 62, 63, -128]], [[1, -2, 3, -4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16], [17, 18, 19, 20], [21, 22, 23, 24], [25, 26, 27, 28], [29, 30, 31, 32], [33, 34, 35, 36], [37, 38, 39, 40], [41, 42, 43, 44], [45, 46, 47, 48], [49, 50, 51, 52], [53, 54, 55, 56], [57, 58, 59, 60], [61, 62, 63, 127]]]]> : tensor<1x2x16x4xi8>
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<4x1x16xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<4x1x16xi32>) -> tensor<4x1x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<4x2x4xi8>, tensor<1x2x16x4xi8>) outs(%z : tensor<4x1x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<4x1x16xi32>
  return %0 : tensor<4x1x16xi32>
}

// -----

#qa = affine_map<(m, p, r, k, j) -> (m, k, j)>
#w = affine_map<(m, p, r, k, j) -> (p, k, r, j)>
#acc = affine_map<(m, p, r, k, j) -> (m, p, r)>

// Weights that are no constant are sign-extended in the k loop, 16 bytes a
// part; 3 rows are a tile of 2 and one of 1.
// CHECK-LABEL: func.func @weight_argument
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<3x8xi16>)
// CHECK: scf.for
// CHECK: %[[B:.+]] = vector.transfer_read %{{.+}} : tensor<1x2x64xi8>, vector<16xi8>
// CHECK: %[[BW:.+]] = arith.extsi %[[B]] : vector<16xi8> to vector<16xi16>
// CHECK-COUNT-3: arith.extsi %{{.+}} : vector<16xi8> to vector<16xi16>
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%{{.+}}, %[[BW]])
// CHECK-COUNT-7: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: scf.yield
// CHECK-COUNT-2: vector.transfer_write {{.+}} : vector<16xi32>, tensor<3x1x16xi32>
// CHECK: vector.transfer_read {{.+}} : tensor<1x2x64xi8>, vector<16xi8>
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK-NOT: llvm.call_intrinsic
// CHECK: scf.yield
// CHECK: vector.transfer_write {{.+}} : vector<16xi32>, tensor<3x1x16xi32>
func.func @weight_argument(%qa: tensor<3x2x4xi8>, %w: tensor<1x2x16x4xi8>) -> tensor<3x1x16xi32> {
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

// Rows of 1 MiB and more (a 3-channel stem's unfolded windows) are not
// copied to 16 bits ahead of the kernel: each row's group is read as 4
// bytes and widened in the k loop.
// CHECK-LABEL: func.func @large_rows
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK: %[[R:.+]] = vector.transfer_read %{{.+}} : tensor<8192x128xi8>, vector<4xi8>
// CHECK: %[[RW:.+]] = arith.extui %[[R]] : vector<4xi8> to vector<4xi16>
// CHECK: vector.bitcast %[[RW]] : vector<4xi16> to vector<1xi64>
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
func.func @large_rows(%qa: tensor<8192x32x4xi8>, %w: tensor<1x32x16x4xi8>) -> tensor<8192x1x16xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8192x1x16xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<8192x1x16xi32>) -> tensor<8192x1x16xi32>
  %0 = linalg.generic {indexing_maps = [#qa, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%qa, %w : tensor<8192x32x4xi8>, tensor<1x32x16x4xi8>) outs(%z : tensor<8192x1x16xi32>) attrs = {kiln.int8_matmul} {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %c, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<8192x1x16xi32>
  return %0 : tensor<8192x1x16xi32>
}
