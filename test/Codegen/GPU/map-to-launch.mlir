// RUN: kiln-opt %s --split-input-file --kiln-gpu-map-to-launch | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-gpu-map-to-launch=block-size=128 | FileCheck %s --check-prefix=B128
// RUN: kiln-opt %s --split-input-file --kiln-gpu-map-to-launch=coarsen=1 | FileCheck %s --check-prefix=ONE
// RUN: kiln-opt %s --split-input-file --kiln-gpu-map-to-launch=tile=false | FileCheck %s --check-prefix=NOTILE
// RUN: kiln-opt %s --split-input-file --kiln-gpu-map-to-launch=tensor-cores=false | FileCheck %s --check-prefix=NOTC

// Elementwise: one thread per element; 1000 points in blocks of 256 need 4
// blocks and a bounds check. The innermost dimension varies fastest. The
// arena view is cloned into the kernel, which captures only arguments. The
// payload's arithmetic may contract (a multiply and an add become one fma).
// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME: %[[X:[^:]+]]: memref<10x100xf32>, %[[Y:[^:]+]]: memref<10x100xf32>, %[[ARENA:[^:]+]]: memref<4000xi8>
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C4]], {{.*}} threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C256]], {{.*}} module(@kiln_kernels) function(@elementwise_k0)
// CHECK: %[[VIEW:.+]] = memref.view %[[ARENA]]
// CHECK: %[[MUL:.+]] = arith.muli %[[BX]], %{{.+}} : index
// CHECK: %[[LIN:.+]] = arith.addi %[[MUL]], %[[TX]] : index
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[LIN]], %{{.+}} : index
// CHECK: scf.if %[[IN]] {
// CHECK:   %[[J:.+]] = arith.remui %[[LIN]], %{{.+}} : index
// CHECK:   %[[I:.+]] = arith.divui %[[LIN]], %{{.+}} : index
// CHECK:   %[[A:.+]] = memref.load %[[X]][%[[I]], %[[J]]]
// CHECK:   %[[B:.+]] = memref.load %[[VIEW]][%[[I]], %[[J]]]
// CHECK:   %[[S:.+]] = arith.addf %[[A]], %[[B]] fastmath<contract> : f32
// CHECK:   memref.store %[[S]], %[[Y]][%[[I]], %[[J]]]
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
// B128-LABEL: func.func @elementwise(
// B128: %[[C8:.+]] = arith.constant 8 : index
// B128: gpu.launch blocks({{.*}}) in (%{{.+}} = %[[C8]],
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @elementwise(%x: memref<10x100xf32>, %y: memref<10x100xf32>, %arena: memref<4000xi8>) {
  %c0 = arith.constant 0 : index
  %v = memref.view %arena[%c0][] : memref<4000xi8> to memref<10x100xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %v : memref<10x100xf32>, memref<10x100xf32>) outs(%y : memref<10x100xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A matmul: the reduction is a loop carrying the accumulators in registers,
// loaded once and stored once. Coarsened by 4 along the rows (B does not
// depend on them): 2 x 8 threads, each with rows 4i..4i+3 of column j, so
// that B[k, j] is loaded once per 4 rows (CSE merges the four loads).
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:[^:]+]]: memref<8x16xf32>, %[[B:[^:]+]]: memref<16x8xf32>, %[[C:[^:]+]]: memref<8x8xf32>
// CHECK: %[[C16:.+]] = arith.constant 16 : index
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %[[C16]],
// CHECK-NOT: scf.if
// CHECK: %[[J:.+]] = arith.remui %{{.+}}, %{{.+}} : index
// CHECK: %[[I:.+]] = arith.divui %{{.+}}, %{{.+}} : index
// CHECK: %[[I0:.+]] = arith.muli %[[I]], %{{.+}} : index
// CHECK: %[[I1:.+]] = arith.addi %[[I0]], %{{.+}} : index
// CHECK: %[[INIT0:.+]] = memref.load %[[C]][%[[I0]], %[[J]]] : memref<8x8xf32>
// CHECK: %[[INIT1:.+]] = memref.load %[[C]][%[[I1]], %[[J]]] : memref<8x8xf32>
// CHECK: %[[SUM:.+]]:4 = scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC0:.+]] = %[[INIT0]], %[[ACC1:.+]] = %[[INIT1]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (f32, f32, f32, f32) {
// CHECK:   memref.load %[[A]][%[[I0]], %[[K]]]
// CHECK:   memref.load %[[B]][%[[K]], %[[J]]]
// CHECK:   arith.mulf
// CHECK:   %[[NEXT0:.+]] = arith.addf %[[ACC0]], %{{.+}} : f32
// CHECK:   memref.load %[[A]][%[[I1]], %[[K]]]
// CHECK:   memref.load %[[B]][%[[K]], %[[J]]]
// CHECK:   scf.yield %[[NEXT0]],
// CHECK: memref.store %[[SUM]]#0, %[[C]][%[[I0]], %[[J]]]
// CHECK: memref.store %[[SUM]]#1, %[[C]][%[[I1]], %[[J]]]
// ONE-LABEL: func.func @matmul(
// ONE-SAME: %[[A:[^:]+]]: memref<8x16xf32>, %[[B:[^:]+]]: memref<16x8xf32>, %[[C:[^:]+]]: memref<8x8xf32>
// ONE: %[[C64:.+]] = arith.constant 64 : index
// ONE: gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %[[C64]],
// ONE: %[[INIT:.+]] = memref.load %[[C]][%[[I:.+]], %[[J:.+]]] : memref<8x8xf32>
// ONE: %[[SUM:.+]] = scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32) {
// ONE:   memref.load %[[A]][%[[I]], %[[K]]]
// ONE:   memref.load %[[B]][%[[K]], %[[J]]]
// ONE:   %[[NEXT:.+]] = arith.addf %[[ACC]], %{{.+}} : f32
// ONE:   scf.yield %[[NEXT]] : f32
// ONE: memref.store %[[SUM]], %[[C]][%[[I]], %[[J]]]
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @matmul(%a: memref<8x16xf32>, %b: memref<16x8xf32>, %c: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<16x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// linalg.index becomes the thread's own coordinate; a scalar input is used
// as it is.
// CHECK-LABEL: func.func @iota(
// CHECK: gpu.launch
// CHECK: %[[I:.+]] = arith.addi
// CHECK: %[[CAST:.+]] = arith.index_cast %[[I]] : index to i32
// CHECK: %[[V:.+]] = arith.addi %[[CAST]], %{{.+}} : i32
// CHECK: memref.store %[[V]], %{{.+}}[%[[I]]] : memref<16xi32>
func.func @iota(%out: memref<16xi32>, %s: i32) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%s : i32) outs(%out : memref<16xi32>) {
  ^bb0(%in: i32, %o: i32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    %v = arith.addi %c, %in : i32
    linalg.yield %v : i32
  }
  return
}

// -----

// Anything else with side effects (here a run-time guard's store) runs in a
// one-thread kernel, with the constants it needs cloned in.
// CHECK-LABEL: func.func @guard(
// CHECK-COUNT-3: arith.constant 1 : index
// CHECK-NEXT: gpu.launch {{.*}} module(@kiln_kernels) function(@guard_k0)
// CHECK: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK: %[[STATUS:.+]] = memref.view
// CHECK: scf.if %{{.+}} {
// CHECK:   memref.store %{{.+}}, %[[STATUS]][%[[ZERO]]] : memref<1xi32>
// CHECK: gpu.terminator
// CHECK: return
func.func @guard(%arena: memref<64xi8>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %status = memref.view %arena[%c0][] : memref<64xi8> to memref<1xi32>
  scf.if %flag {
    memref.store %one, %status[%c0] : memref<1xi32>
  }
  return
}

// -----

// A value that later ops use (a scalar read from a tensor) never crosses
// kernels: the load, everything with side effects up to its last user and
// the pure ops depending on it run in one thread, launched where the group
// ends. The unrelated elementwise op after it gets its own parallel kernel.
// CHECK-LABEL: func.func @scalar_flow(
// CHECK-SAME: %[[S:[^:]+]]: memref<2xi64>, %[[OUT:[^:]+]]: memref<4xi64>, %[[Z:[^:]+]]: memref<8xf32>
// CHECK: gpu.launch {{.*}} function(@scalar_flow_k0)
// CHECK:   %[[V:.+]] = memref.load %[[S]]
// CHECK:   %[[W:.+]] = arith.addi %[[V]], %[[V]] : i64
// CHECK:   memref.store %[[W]], %[[OUT]]
// CHECK:   gpu.terminator
// CHECK: gpu.launch {{.*}} function(@scalar_flow_k1)
// CHECK:   memref.store %{{.+}}, %[[Z]]
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @scalar_flow(%s: memref<2xi64>, %out: memref<4xi64>, %z: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %v = memref.load %s[%c0] : memref<2xi64>
  %w = arith.addi %v, %v : i64
  memref.store %w, %out[%c1] : memref<4xi64>
  linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%z : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// A matmul big enough for shared-memory tiles: M = 64 rows (A only), N = 128
// columns (B only, the output's contiguous dimension), K = 40 (both). Tiles
// of 64 x 64 (2 blocks), 16 x 16 threads, K in slices of 16 (3 slices, the
// last one 8 wide). Each slice is copied into workgroup memory, [k][m] and
// [k][n], between two barriers, 4 elements of each per thread; A's copy
// walks along k (its contiguous dimension), B's along n. Each thread keeps
// 4 x 4 accumulators. Rows and columns need no bounds check; the K
// remainder is zero-filled and skipped.
// CHECK-LABEL: func.func @tiled_matmul(
// CHECK-SAME: %[[A:[^:]+]]: memref<64x40xf32>, %[[B:[^:]+]]: memref<40x128xf32>, %[[C:[^:]+]]: memref<64x128xf32>
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.+}} = %[[C2]], {{.*}} threads({{.*}}) in (%{{.+}} = %[[C256]], {{.*}} workgroup(%[[SA:.+]] : memref<16x64xf32, #gpu.address_space<workgroup>>, %[[SB:.+]] : memref<16x64xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-16: memref.load %[[C]]
// CHECK: %[[OUT:.+]]:16 = scf.for %[[KT:.+]] = %{{.+}} to %c3 step %{{.+}} iter_args(
// CHECK: vector.load %[[A]]{{.*}} {alignment = 16 : i64} : memref<64x40xf32>, vector<4xf32>
// CHECK-COUNT-4: memref.store %{{.+}}, %[[SA]][%{{.+}}, %{{.+}}]
// CHECK: vector.load %[[B]]{{.*}} {alignment = 16 : i64} : memref<40x128xf32>, vector<4xf32>
// CHECK-COUNT-4: memref.store %{{.+}}, %[[SB]][%{{.+}}, %{{.+}}]
// CHECK: gpu.barrier
// CHECK: %[[END:.+]] = arith.minsi
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[END]]
// CHECK-COUNT-4: memref.load %[[SA]]
// CHECK-COUNT-4: memref.load %[[SB]]
// CHECK-COUNT-16: arith.mulf
// CHECK: gpu.barrier
// CHECK-COUNT-16: memref.store %[[OUT]]#{{[0-9]+}}, %[[C]]
// CHECK-NOT: scf.if
// CHECK: gpu.terminator
// NOTILE-LABEL: func.func @tiled_matmul(
// NOTILE-NOT: workgroup
// NOTILE-NOT: gpu.barrier
// NOTILE: gpu.terminator
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @tiled_matmul(%a: memref<64x40xf32>, %b: memref<40x128xf32>, %c: memref<64x128xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x40xf32>, memref<40x128xf32>) outs(%c : memref<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A convolution (NHWC, HWCF filter, stride 1) as an implicit GEMM: M is the
// output pixels (n, oh, ow: 1 x 6 x 6 = 36, only the input depends on them),
// N the 32 filters, K = (kh, kw, c) = 3 x 3 x 8 = 72 in slices of 16. Rows
// past 36 are bounds-checked. Tiles of 32 x 32 give each thread two
// consecutive elements to copy: one 8-byte vector load of the input (two
// channels) and of the filter (two filters).
// CHECK-LABEL: func.func @tiled_conv(
// CHECK-SAME: %[[I:[^:]+]]: memref<1x8x8x8xf32>, %[[F:[^:]+]]: memref<3x3x8x32xf32>, %[[O:[^:]+]]: memref<1x6x6x32xf32>
// CHECK: gpu.launch {{.*}} workgroup(%[[SA:.+]] : memref<16x32xf32, #gpu.address_space<workgroup>>, %[[SB:.+]] : memref<16x32xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(
// CHECK: scf.if
// CHECK: vector.load %[[I]]{{.*}} : memref<1x8x8x8xf32>, vector<2xf32>
// CHECK: memref.store %{{.+}}, %[[SA]]
// CHECK: vector.load %[[F]]{{.*}} : memref<3x3x8x32xf32>, vector<2xf32>
// CHECK: memref.store %{{.+}}, %[[SB]]
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %[[O]]
#in = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh + kh, ow + kw, c)>
#filt = affine_map<(n, oh, ow, f, kh, kw, c) -> (kh, kw, c, f)>
#out = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh, ow, f)>
func.func @tiled_conv(%i: memref<1x8x8x8xf32>, %f: memref<3x3x8x32xf32>, %o: memref<1x6x6x32xf32>) {
  linalg.generic {indexing_maps = [#in, #filt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%i, %f : memref<1x8x8x8xf32>, memref<3x3x8x32xf32>) outs(%o : memref<1x6x6x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An fp16 multiply-add contraction runs on tensor cores: 4 warps (128
// threads) per block, each warp 2 x 2 fragments of 16 x 16 of the 64 x 64
// tile; the fp16 slices are staged as A[m][k] and B[k][n], the fp32
// accumulators start at zero and go through shared memory at the end, where
// each output gets its initial value added and is rounded to fp16.
// CHECK-LABEL: func.func @tensor_core_matmul(
// CHECK-SAME: %[[A:[^:]+]]: memref<64x40xf16>, %[[B:[^:]+]]: memref<40x128xf16>, %[[C:[^:]+]]: memref<64x128xf16>
// CHECK: %[[C128:.+]] = arith.constant 128 : index
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %[[C128]], {{.*}} workgroup(%[[SA:.+]] : memref<64x16xf16, #gpu.address_space<workgroup>>, %[[SB:.+]] : memref<16x64xf16, #gpu.address_space<workgroup>>, %[[SC:.+]] : memref<64x64xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-4: gpu.subgroup_mma_constant_matrix %{{.+}} : !gpu.mma_matrix<16x16xf32, "COp">
// CHECK: scf.for {{.*}} -> (!gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">)
// CHECK: memref.store %{{.+}}, %[[SA]]
// CHECK: memref.store %{{.+}}, %[[SB]]
// CHECK: gpu.barrier
// CHECK-COUNT-2: gpu.subgroup_mma_load_matrix %[[SA]][%{{.+}}, %{{.+}}] {leadDimension = 16 : index} : memref<64x16xf16, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "AOp">
// CHECK-COUNT-2: gpu.subgroup_mma_load_matrix %[[SB]][%{{.+}}, %{{.+}}] {leadDimension = 64 : index} : memref<16x64xf16, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "BOp">
// CHECK-COUNT-4: gpu.subgroup_mma_compute
// CHECK: gpu.barrier
// CHECK-COUNT-4: gpu.subgroup_mma_store_matrix %{{.+}}, %[[SC]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SC]]
// CHECK: %[[OLD:.+]] = memref.load %[[C]]
// CHECK: %[[WIDE:.+]] = arith.extf %[[OLD]] : f16 to f32
// CHECK: %[[SUM:.+]] = arith.addf %[[WIDE]], %{{.+}} : f32
// CHECK: %[[NARROW:.+]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK: memref.store %[[NARROW]], %[[C]]
// NOTC-LABEL: func.func @tensor_core_matmul(
// NOTC-NOT: subgroup_mma
// NOTC: workgroup(%{{.+}} : memref<16x64xf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<16x64xf16, #gpu.address_space<workgroup>>)
// NOTC-NOT: subgroup_mma
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @tensor_core_matmul(%a: memref<64x40xf16>, %b: memref<40x128xf16>, %c: memref<64x128xf16>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x40xf16>, memref<40x128xf16>) outs(%c : memref<64x128xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %m = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %m : f16
    linalg.yield %s : f16
  }
  return
}

// -----

// A cast in the payload: arith.extf carries its fastmath attribute only when
// one is set (reading the absent one crashed the pass on every Cast, Resize
// and window function).
// CHECK-LABEL: func.func @widen(
// CHECK: gpu.launch
// CHECK: %[[H:.+]] = memref.load
// CHECK: arith.extf %[[H]] fastmath<contract> : bf16 to f32
#id1 = affine_map<(d0) -> (d0)>
func.func @widen(%x: memref<12xbf16>, %y: memref<12xf32>) {
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<12xbf16>) outs(%y : memref<12xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %w = arith.extf %a : bf16 to f32
    linalg.yield %w : f32
  }
  return
}
