// RUN: kiln-opt %s --split-input-file --kiln-quantize-concat-parts | FileCheck %s

// DynamicQuantizeLinear of a concatenation, as it imports: the range is the
// minimum and maximum of each part, and the quantizing chain runs on each
// part; only the uint8 parts are concatenated.
// CHECK-LABEL: func.func @dynamic_quantize_concat
// CHECK-SAME: (%[[A:.+]]: tensor<1x4x4x16xf32>, %[[B:.+]]: tensor<1x4x4x8xf32>)
// CHECK-DAG: %[[LOA:.+]] = kiln.reduce_min %[[A]] {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<1x4x4x16xf32> -> tensor<f32>
// CHECK-DAG: %[[LOB:.+]] = kiln.reduce_min %[[B]] {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<1x4x4x8xf32> -> tensor<f32>
// CHECK-DAG: %[[LO:.+]] = kiln.min %[[LOA]], %[[LOB]]
// CHECK-DAG: %[[HIA:.+]] = kiln.reduce_max %[[A]]
// CHECK-DAG: %[[HIB:.+]] = kiln.reduce_max %[[B]]
// CHECK-DAG: %[[HI:.+]] = kiln.max %[[HIA]], %[[HIB]]
// CHECK: %[[SCALE:.+]] = kiln.div %{{.+}}, %{{.+}} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: %[[DA:.+]] = kiln.div %[[A]], %[[SCALE]] : (tensor<1x4x4x16xf32>, tensor<f32>) -> tensor<1x4x4x16xf32>
// CHECK: %[[RA:.+]] = kiln.round %[[DA]] : tensor<1x4x4x16xf32>
// CHECK: %[[ZA:.+]] = kiln.add %[[RA]], %{{.+}} : (tensor<1x4x4x16xf32>, tensor<f32>) -> tensor<1x4x4x16xf32>
// CHECK: %[[CA:.+]] = kiln.clip %[[ZA]]
// CHECK: %[[QA:.+]] = kiln.cast %[[CA]] to ui8 : tensor<1x4x4x16xf32> -> tensor<1x4x4x16xui8>
// CHECK: %[[DB:.+]] = kiln.div %[[B]], %[[SCALE]] : (tensor<1x4x4x8xf32>, tensor<f32>) -> tensor<1x4x4x8xf32>
// CHECK: %[[QB:.+]] = kiln.cast %{{.+}} to ui8 : tensor<1x4x4x8xf32> -> tensor<1x4x4x8xui8>
// CHECK: %[[Q:.+]] = kiln.concat %[[QA]], %[[QB]] {axis = 3 : i64} : (tensor<1x4x4x16xui8>, tensor<1x4x4x8xui8>) -> tensor<1x4x4x24xui8>
// CHECK-NOT: kiln.concat
// CHECK: return %[[Q]], %[[LO]], %[[HI]]
func.func @dynamic_quantize_concat(%a: tensor<1x4x4x16xf32>, %b: tensor<1x4x4x8xf32>) -> (tensor<1x4x4x24xui8>, tensor<f32>, tensor<f32>) {
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %q255 = kiln.constant dense<255.0> : tensor<f32>
  %c = kiln.concat %a, %b {axis = 3 : i64} : (tensor<1x4x4x16xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x24xf32>
  %lo = kiln.reduce_min %c {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<1x4x4x24xf32> -> tensor<f32>
  %hi = kiln.reduce_max %c {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<1x4x4x24xf32> -> tensor<f32>
  %lo0 = kiln.min %lo, %zero : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %hi0 = kiln.max %hi, %zero : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %span = kiln.sub %hi0, %lo0 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %scale = kiln.div %span, %q255 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %m = kiln.div %lo0, %scale : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %zpf = kiln.sub %zero, %m : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %zpr = kiln.round %zpf : tensor<f32>
  %x = kiln.div %c, %scale : (tensor<1x4x4x24xf32>, tensor<f32>) -> tensor<1x4x4x24xf32>
  %r = kiln.round %x : tensor<1x4x4x24xf32>
  %z = kiln.add %r, %zpr : (tensor<1x4x4x24xf32>, tensor<f32>) -> tensor<1x4x4x24xf32>
  %cl = kiln.clip %z {max = 2.550000e+02 : f32, min = 0.000000e+00 : f32} : tensor<1x4x4x24xf32>
  %q = kiln.cast %cl to ui8 : tensor<1x4x4x24xf32> -> tensor<1x4x4x24xui8>
  return %q, %lo, %hi : tensor<1x4x4x24xui8>, tensor<f32>, tensor<f32>
}

// -----

// A chain that does not end in an 8-bit cast, a range over axes that keep
// the concatenated one, and an operand with more than one element stay as
// they are.
// CHECK-LABEL: func.func @left_alone
// CHECK: %[[C:.+]] = kiln.concat
// CHECK: kiln.reduce_min %[[C]] {axes = array<i64: 0, 1, 2>, keepdims = false}
// CHECK: kiln.div %[[C]]
// CHECK: kiln.cast %{{.+}} to f16
// CHECK: %[[D:.+]] = kiln.concat
// CHECK: kiln.mul %[[D]]
// CHECK: kiln.cast %{{.+}} to ui8
func.func @left_alone(%a: tensor<1x4x4x16xf32>, %b: tensor<1x4x4x8xf32>, %s: tensor<f32>, %v: tensor<24xf32>) -> (tensor<24xf32>, tensor<1x4x4x24xf16>, tensor<1x4x4x24xui8>) {
  %c = kiln.concat %a, %b {axis = 3 : i64} : (tensor<1x4x4x16xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x24xf32>
  %lo = kiln.reduce_min %c {axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<1x4x4x24xf32> -> tensor<24xf32>
  %x = kiln.div %c, %s : (tensor<1x4x4x24xf32>, tensor<f32>) -> tensor<1x4x4x24xf32>
  %h = kiln.cast %x to f16 : tensor<1x4x4x24xf32> -> tensor<1x4x4x24xf16>
  %d = kiln.concat %a, %b {axis = 3 : i64} : (tensor<1x4x4x16xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x24xf32>
  %y = kiln.mul %d, %v : (tensor<1x4x4x24xf32>, tensor<24xf32>) -> tensor<1x4x4x24xf32>
  %q = kiln.cast %y to ui8 : tensor<1x4x4x24xf32> -> tensor<1x4x4x24xui8>
  return %lo, %h, %q : tensor<24xf32>, tensor<1x4x4x24xf16>, tensor<1x4x4x24xui8>
}

// -----

// Parts made for the concatenation alone are written into it in place:
// split, the range and the quantization would take a pass per part.
// CHECK-LABEL: func.func @parts_made_for_it
// CHECK: %[[C:.+]] = kiln.concat
// CHECK: kiln.reduce_min %[[C]]
// CHECK: kiln.div %[[C]]
// CHECK-NOT: kiln.concat
func.func @parts_made_for_it(%a: tensor<1x4x4x16xf32>, %b: tensor<1x4x4x8xf32>, %s: tensor<f32>) -> (tensor<1x4x4x24xui8>, tensor<f32>) {
  %ra = kiln.relu %a : tensor<1x4x4x16xf32>
  %rb = kiln.relu %b : tensor<1x4x4x8xf32>
  %c = kiln.concat %ra, %rb {axis = 3 : i64} : (tensor<1x4x4x16xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x24xf32>
  %lo = kiln.reduce_min %c {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<1x4x4x24xf32> -> tensor<f32>
  %x = kiln.div %c, %s : (tensor<1x4x4x24xf32>, tensor<f32>) -> tensor<1x4x4x24xf32>
  %q = kiln.cast %x to ui8 : tensor<1x4x4x24xf32> -> tensor<1x4x4x24xui8>
  return %q, %lo : tensor<1x4x4x24xui8>, tensor<f32>
}
