// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg | FileCheck %s

// kiln.random (LowerRandom.cpp): one call of the runtime's key function,
// then an elementwise generic hashing key + (row-major position + 1) * the
// golden-ratio increment with splitmix64's output function.

// Uniform f32 of a static shape: the top 24 bits times 2^-24.
// CHECK: func.func private @__kiln_random_key(i64, i32) -> i64
// CHECK-LABEL: func.func @uniform
// CHECK-DAG: %[[SEED:.+]] = arith.constant 42 : i64
// CHECK-DAG: %[[ON:.+]] = arith.constant 1 : i32
// CHECK: %[[KEY:.+]] = call @__kiln_random_key(%[[SEED]], %[[ON]]) : (i64, i32) -> i64
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<3x5xf32>)
// CHECK: %[[I0:.+]] = linalg.index 0 : index
// CHECK: %[[I1:.+]] = linalg.index 1 : index
// CHECK: %[[POS:.+]] = arith.addi %{{.+}}, %[[I1]] : index
// CHECK: %[[P64:.+]] = arith.index_castui %[[POS]] : index to i64
// CHECK: %[[NEXT:.+]] = arith.addi %[[P64]], %{{.+}} : i64
// CHECK: %[[STEP:.+]] = arith.muli %[[NEXT]], %{{.+}} : i64
// CHECK: %[[X:.+]] = arith.addi %[[KEY]], %[[STEP]] : i64
// CHECK: arith.shrui %[[X]], %{{.+}} : i64
// CHECK-COUNT-2: arith.muli
// CHECK: arith.xori
// CHECK: %[[TOP:.+]] = arith.shrui %{{.+}}, %{{.+}} : i64
// CHECK: %[[F:.+]] = arith.uitofp %[[TOP]] : i64 to f32
// CHECK: %[[U:.+]] = arith.mulf %[[F]], %{{.+}} : f32
// CHECK: linalg.yield %[[U]] : f32
func.func @uniform() -> tensor<3x5xf32> {
  %0 = kiln.random {distribution = "uniform", seed = 42 : i64, seeded = true} -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Normal f64 of a symbolic shape: sized by `like`, Box-Muller on the two
// 32-bit halves.
// CHECK-LABEL: func.func @normal_like
// CHECK: %[[KEY:.+]] = call @__kiln_random_key
// CHECK: %[[N:.+]] = tensor.dim %arg0, %{{.+}} : tensor<?x2xf16>
// CHECK: %[[E:.+]] = tensor.empty(%[[N]]) : tensor<?x2xf64>
// CHECK: linalg.generic {{.+}} outs(%[[E]] : tensor<?x2xf64>)
// CHECK: math.log %{{.+}} : f64
// CHECK: math.sqrt %{{.+}} : f64
// CHECK: math.cos %{{.+}} : f64
func.func @normal_like(%x: tensor<?x2xf16>) -> tensor<?x2xf64> {
  %0 = kiln.random %x : tensor<?x2xf16> {distribution = "normal", seed = 0 : i64, seeded = false} -> tensor<?x2xf64>
  return %0 : tensor<?x2xf64>
}
