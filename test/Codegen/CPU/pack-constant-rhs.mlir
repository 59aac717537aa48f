// RUN: kiln-opt %s --split-input-file --kiln-cpu-pack-constant-rhs="vector-width=16" --mlir-print-elementsattrs-with-hex-if-larger=100000 | FileCheck %s

// A matmul with constant weights B[K, N] = B[2, 128]: B is stored as panels
// P[N / 64][K][64] (4 registers wide), and the product becomes a generic over
// (m, panel, column, k) marked kiln.packed_rhs whose result is viewed back
// as [M, N]. Panel 0 holds columns 0-63 of both rows of B, panel 1 columns
// 64-127.
// CHECK-LABEL: func.func @matmul_constant_rhs
// CHECK: %[[P:.+]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 2.000000e+00, {{.+}}], [-1.000000e+00, {{.+}}]], {{\[\[}}6.500000e+01, {{.+}}], [-6.500000e+01, {{.+}}]]]> : tensor<2x2x64xf32>
// CHECK: %[[G:.+]] = linalg.generic {{.+}} ins(%arg0, %[[P]] : tensor<1x2xf32>, tensor<2x2x64xf32>) outs(%{{.+}} : tensor<1x2x64xf32>) attrs = {kiln.packed_rhs}
// CHECK: tensor.collapse_shape %[[G]] {{\[\[}}0], [1, 2]] : tensor<1x2x64xf32> into tensor<1x128xf32>
// CHECK-NOT: linalg.matmul
func.func @matmul_constant_rhs(%a: tensor<1x2xf32>) -> tensor<1x128xf32> {
  %b = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0, 128.0], [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0, -10.0, -11.0, -12.0, -13.0, -14.0, -15.0, -16.0, -17.0, -18.0, -19.0, -20.0, -21.0, -22.0, -23.0, -24.0, -25.0, -26.0, -27.0, -28.0, -29.0, -30.0, -31.0, -32.0, -33.0, -34.0, -35.0, -36.0, -37.0, -38.0, -39.0, -40.0, -41.0, -42.0, -43.0, -44.0, -45.0, -46.0, -47.0, -48.0, -49.0, -50.0, -51.0, -52.0, -53.0, -54.0, -55.0, -56.0, -57.0, -58.0, -59.0, -60.0, -61.0, -62.0, -63.0, -64.0, -65.0, -66.0, -67.0, -68.0, -69.0, -70.0, -71.0, -72.0, -73.0, -74.0, -75.0, -76.0, -77.0, -78.0, -79.0, -80.0, -81.0, -82.0, -83.0, -84.0, -85.0, -86.0, -87.0, -88.0, -89.0, -90.0, -91.0, -92.0, -93.0, -94.0, -95.0, -96.0, -97.0, -98.0, -99.0, -100.0, -101.0, -102.0, -103.0, -104.0, -105.0, -106.0, -107.0, -108.0, -109.0, -110.0, -111.0, -112.0, -113.0, -114.0, -115.0, -116.0, -117.0, -118.0, -119.0, -120.0, -121.0, -122.0, -123.0, -124.0, -125.0, -126.0, -127.0, -128.0]]> : tensor<2x128xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<1x128xf32>) -> tensor<1x128xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<1x2xf32>, tensor<2x128xf32>) outs(%c : tensor<1x128xf32>) -> tensor<1x128xf32>
  return %0 : tensor<1x128xf32>
}

// -----

// Weights computed at run time are read as they are.
// CHECK-LABEL: func.func @run_time_rhs
// CHECK: linalg.matmul
func.func @run_time_rhs(%a: tensor<1x2xf32>, %b: tensor<2x128xf32>) -> tensor<1x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<1x128xf32>) -> tensor<1x128xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<1x2xf32>, tensor<2x128xf32>) outs(%c : tensor<1x128xf32>) -> tensor<1x128xf32>
  return %0 : tensor<1x128xf32>
}

// -----

// Rows of run-time extent (a symbolic dimension): the panels do not depend
// on M; the packed product's output is sized from the left-hand side's rows,
// and the fill of the original output is dropped.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: tensor.empty(%{{.+}}) : tensor<?x128xf32>
// CHECK: %[[M:.+]] = tensor.dim %arg0, %c0{{.*}} : tensor<?x2xf32>
// CHECK-NEXT: %[[E:.+]] = tensor.empty(%[[M]]) : tensor<?x2x64xf32>
// CHECK: %[[F:.+]] = linalg.fill {{.+}} outs(%[[E]] : tensor<?x2x64xf32>)
// CHECK: %[[G:.+]] = linalg.generic {{.+}} ins(%arg0, %{{.+}} : tensor<?x2xf32>, tensor<2x2x64xf32>) outs(%[[F]] : tensor<?x2x64xf32>) attrs = {kiln.packed_rhs}
// CHECK: tensor.collapse_shape %[[G]] {{\[\[}}0], [1, 2]] : tensor<?x2x64xf32> into tensor<?x128xf32>
// CHECK-NOT: linalg.matmul
// CHECK-NOT: tensor<?x128xf32>) -> tensor<?x128xf32>
func.func @dynamic_rows(%a: tensor<?x2xf32>) -> tensor<?x128xf32> {
  %b = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0, 128.0], [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0, -10.0, -11.0, -12.0, -13.0, -14.0, -15.0, -16.0, -17.0, -18.0, -19.0, -20.0, -21.0, -22.0, -23.0, -24.0, -25.0, -26.0, -27.0, -28.0, -29.0, -30.0, -31.0, -32.0, -33.0, -34.0, -35.0, -36.0, -37.0, -38.0, -39.0, -40.0, -41.0, -42.0, -43.0, -44.0, -45.0, -46.0, -47.0, -48.0, -49.0, -50.0, -51.0, -52.0, -53.0, -54.0, -55.0, -56.0, -57.0, -58.0, -59.0, -60.0, -61.0, -62.0, -63.0, -64.0, -65.0, -66.0, -67.0, -68.0, -69.0, -70.0, -71.0, -72.0, -73.0, -74.0, -75.0, -76.0, -77.0, -78.0, -79.0, -80.0, -81.0, -82.0, -83.0, -84.0, -85.0, -86.0, -87.0, -88.0, -89.0, -90.0, -91.0, -92.0, -93.0, -94.0, -95.0, -96.0, -97.0, -98.0, -99.0, -100.0, -101.0, -102.0, -103.0, -104.0, -105.0, -106.0, -107.0, -108.0, -109.0, -110.0, -111.0, -112.0, -113.0, -114.0, -115.0, -116.0, -117.0, -118.0, -119.0, -120.0, -121.0, -122.0, -123.0, -124.0, -125.0, -126.0, -127.0, -128.0]]> : tensor<2x128xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x2xf32>
  %e = tensor.empty(%m) : tensor<?x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<?x128xf32>) -> tensor<?x128xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<?x2xf32>, tensor<2x128xf32>) outs(%c : tensor<?x128xf32>) -> tensor<?x128xf32>
  return %0 : tensor<?x128xf32>
}
