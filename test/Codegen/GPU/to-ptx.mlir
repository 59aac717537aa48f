// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-gpu-map-to-launch),gpu-launch-sink-index-computations,gpu-kernel-outlining,nvvm-attach-target{chip=sm_90 features=+ptx80 O=3},gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1},reconcile-unrealized-casts),gpu-module-to-binary{format=isa})" | FileCheck %s

// The device half of the GPU pipeline: the kernel is outlined into the one
// kiln_kernels module and becomes PTX for sm_90 (PTX ISA 8.0); the host
// keeps a launch whose arguments are the function's own buffers, one bare
// pointer each.
// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME: %[[X:[^:]+]]: memref<300xf32>, %[[Y:[^:]+]]: memref<300xf32>
// CHECK: gpu.launch_func @kiln_kernels::@main_graph_k0 blocks in (%{{.+}}, %{{.+}}, %{{.+}}) threads in (%{{.+}}, %{{.+}}, %{{.+}}) args(%[[X]] : memref<300xf32>, %[[Y]] : memref<300xf32>)
// CHECK: gpu.binary @kiln_kernels
// CHECK-SAME: .version 8.0
// CHECK-SAME: .target sm_90
// CHECK-SAME: .entry main_graph_k0(
// CHECK-SAME: .param .u64 .ptr .align 1 main_graph_k0_param_0,
// CHECK-SAME: setp.gt.u32 {{.*}}, 299;
func.func @main_graph(%x: memref<300xf32>, %y: memref<300xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<300xf32>) outs(%y : memref<300xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  return
}
