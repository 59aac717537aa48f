// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-gpu-map-to-launch),gpu-launch-sink-index-computations,gpu-kernel-outlining,kiln-gpu-align-workgroup,nvvm-attach-target{chip=sm_80 O=3},gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1},reconcile-unrealized-casts),gpu-module-to-binary{format=isa})" | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-gpu-map-to-launch),gpu-launch-sink-index-computations,gpu-kernel-outlining,kiln-gpu-align-workgroup)" | FileCheck %s --check-prefix=ALIGN

// Tensor cores in PTX: the fp16 tiles are read by wmma fragment loads from
// shared memory that kiln-gpu-align-workgroup aligned to 32 bytes (a wmma
// load faults on less), and the products are wmma.mma.sync with fp32
// accumulators.
// ALIGN: gpu.func @main_graph_k0({{.*}}) workgroup(%{{.+}} : memref<64x16xf16, #gpu.address_space<workgroup>> {llvm.align = 32 : i64}, %{{.+}} : memref<16x64xf16, #gpu.address_space<workgroup>> {llvm.align = 32 : i64}, %{{.+}} : memref<64x64xf32, #gpu.address_space<workgroup>> {llvm.align = 32 : i64})
// CHECK: gpu.binary @kiln_kernels
// CHECK-SAME: .shared .align 32 .b8 __wg_main_graph_k0_0[2048];
// CHECK-SAME: .shared .align 32 .b8 __wg_main_graph_k0_1[2048];
// CHECK-SAME: .shared .align 32 .b8 __wg_main_graph_k0_2[16384];
// CHECK-SAME: bar.sync
// CHECK-SAME: wmma.load.a.sync.aligned.row.m16n16k16.shared.f16
// CHECK-SAME: wmma.load.b.sync.aligned.row.m16n16k16.shared.f16
// CHECK-SAME: wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32
// CHECK-SAME: wmma.store.d.sync.aligned.row.m16n16k16.shared.f32
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @main_graph(%a: memref<128x64xf16>, %b: memref<64x128xf16>, %c: memref<128x128xf16>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<128x64xf16>, memref<64x128xf16>) outs(%c : memref<128x128xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %m = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %m : f16
    linalg.yield %s : f16
  }
  return
}
