// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-gpu-map-to-launch),gpu-launch-sink-index-computations,gpu-kernel-outlining,nvvm-attach-target{chip=sm_80 O=3},gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1},reconcile-unrealized-casts),gpu-module-to-binary{format=isa})" | FileCheck %s

// The shared-memory tiles of a matmul in PTX: two workgroup buffers of
// 16 x 64 floats become .shared arrays; each thread copies its 4 elements of
// each slice with one 16-byte global load (ld.global.v4); the barriers are
// bar.sync, and the inner loop reads shared memory into 16 fmas.
// CHECK: gpu.binary @kiln_kernels
// CHECK-SAME: .target sm_80
// CHECK-SAME: .entry main_graph_k0(
// CHECK-SAME: .shared .align {{[0-9]+}} .b8 __wg_{{[a-z_0-9]+}}[4096];
// CHECK-SAME: .shared .align {{[0-9]+}} .b8 __wg_{{[a-z_0-9]+}}[4096];
// CHECK-SAME: ld.global.v4.b32
// CHECK-SAME: st.shared.b32
// CHECK-SAME: ld.global.v4.b32
// CHECK-SAME: bar.sync {{(\\09)?}}0;
// CHECK-SAME: ld.shared.b32
// CHECK-SAME: fma.rn.f32
// CHECK-SAME: bar.sync {{(\\09)?}}0;
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @main_graph(%a: memref<128x64xf32>, %b: memref<64x128xf32>, %c: memref<128x128xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<128x64xf32>, memref<64x128xf32>) outs(%c : memref<128x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
