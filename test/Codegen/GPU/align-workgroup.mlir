// RUN: kiln-opt %s --kiln-gpu-align-workgroup | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-align-workgroup="alignment=64" | FileCheck %s --check-prefix=A64

// Every workgroup buffer of every kernel gets llvm.align (32 by default, the
// alignment of a wmma fragment); a larger one it already has is kept.
// CHECK-LABEL: gpu.func @kernel
// CHECK-SAME: workgroup(%{{.+}} : memref<64xf16, #gpu.address_space<workgroup>> {llvm.align = 32 : i64}, %{{.+}} : memref<64xf32, #gpu.address_space<workgroup>> {llvm.align = 128 : i64})
// A64-LABEL: gpu.func @kernel
// A64-SAME: {llvm.align = 64 : i64}, %{{.+}} : memref<64xf32, #gpu.address_space<workgroup>> {llvm.align = 128 : i64})
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%arg0: memref<64xf16>) workgroup(%a : memref<64xf16, #gpu.address_space<workgroup>>, %b : memref<64xf32, #gpu.address_space<workgroup>> {llvm.align = 128 : i64}) kernel {
      gpu.return
    }
  }
}
