// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics
// RUN: not kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln 2>&1 | FileCheck %s

// Every node that cannot be converted is reported against the node, naming
// it, its op type and opset, and saying why. Imported locations are bare node
// names without a file position, so -verify-diagnostics sees them as unknown
// locations: each expectation is written next to its node as @unknown, and
// the second RUN checks the messages in order as a user sees them.

// The full message as a user sees it.
// CHECK: error: {{.*}}node 'x' (Frobnicate, opset 13): op type Frobnicate is not supported by Kiln yet; remove or replace it before compiling
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @unsupported_op(%x: tensor<4xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'x' (Frobnicate, opset 13): op type Frobnicate is not supported}}
    %y = "onnx.Frobnicate"(%x) : (tensor<4xf32>) -> tensor<*xf32> loc("x")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: {{.*}}node 'add' (Add, opset 6): Kiln supports Add from opset 7; re-export the model with a newer opset
module attributes {onnx.opset_import = {ai.onnx = 6 : i64}} {
  func.func @below_first_version(%x: tensor<4xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'add' (Add, opset 6): Kiln supports Add from opset 7; re-export the model with a newer opset}}
    %y = "onnx.Add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("add")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: {{.*}}node 'fused' (FusedConv, opset 1): the operator domain 'com.microsoft' is not supported
module attributes {onnx.opset_import = {ai.onnx = 13 : i64, com.microsoft = 1 : i64}} {
  func.func @other_domain(%x: tensor<4xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'fused' (FusedConv, opset 1): the operator domain 'com.microsoft' is not supported; Kiln compiles the default ONNX domain (ai.onnx)}}
    %y = "onnx.com.microsoft.FusedConv"(%x) : (tensor<4xf32>) -> tensor<*xf32> loc("fused")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: {{.*}}node 'reshape' (Reshape, opset 13): the target shape must be a compile-time constant
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @reshape_dynamic_shape(%x: tensor<2x3xf32>, %shape: tensor<2xi64>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'reshape' (Reshape, opset 13): the target shape must be a compile-time constant}}
    %y = "onnx.Reshape"(%x, %shape) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("reshape")
    return %y : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @reshape_bad_minus_one(%x: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %s1 = onnx.Initializer "s1" dense<[4, -1]> : tensor<2xi64> loc("s1")
    %s2 = onnx.Initializer "s2" dense<[-1, -1]> : tensor<2xi64> loc("s2")
    %s3 = onnx.Initializer "s3" dense<[4, 2]> : tensor<2xi64> loc("s3")
    // expected-error@unknown {{node 'r1' (Reshape, opset 13): cannot infer the -1 dimension: 6 elements do not divide by 4}}
    %a = "onnx.Reshape"(%x, %s1) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("r1")
    // expected-error@unknown {{node 'r2' (Reshape, opset 13): shape has more than one -1}}
    %b = "onnx.Reshape"(%x, %s2) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("r2")
    // The kiln verifier's reason, without the kiln op's name.
    // expected-error@unknown {{node 'r3' (Reshape, opset 13): cannot reshape 6 elements [2,3] into 8 [4,2]}}
    %c = "onnx.Reshape"(%x, %s3) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("r3")
    return %a, %b, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// CHECK: error: {{.*}}node 'bn' (BatchNormalization, opset 15): training_mode=1 is not supported; export the model in inference (eval) mode
module attributes {onnx.opset_import = {ai.onnx = 15 : i64}} {
  func.func @batch_norm_training(%x: tensor<1x4x8x8xf32>, %p: tensor<4xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'bn' (BatchNormalization, opset 15): training_mode=1 is not supported}}
    %y = "onnx.BatchNormalization"(%x, %p, %p, %p, %p) {training_mode = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("bn")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: {{.*}}node 'pool' (MaxPool, opset 12): the Indices output is not supported
module attributes {onnx.opset_import = {ai.onnx = 12 : i64}} {
  func.func @max_pool_indices_used(%x: tensor<1x4x8x8xf32>) -> (tensor<*xf32>, tensor<*xi64>) {
    // expected-error@unknown {{node 'pool' (MaxPool, opset 12): the Indices output is not supported}}
    %y, %i = "onnx.MaxPool"(%x) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x4x8x8xf32>) -> (tensor<*xf32>, tensor<*xi64>) loc("pool")
    return %y, %i : tensor<*xf32>, tensor<*xi64>
  }
}

// -----

// CHECK: error: {{.*}}node 'drop' (Dropout, opset 13): output 1 is used but Kiln does not compute it
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @dropout_mask_used(%x: tensor<4xf32>) -> (tensor<*xf32>, tensor<*xi1>) {
    // expected-error@unknown {{node 'drop' (Dropout, opset 13): output 1 is used but Kiln does not compute it}}
    %y, %mask = "onnx.Dropout"(%x) : (tensor<4xf32>) -> (tensor<*xf32>, tensor<*xi1>) loc("drop")
    return %y, %mask : tensor<*xf32>, tensor<*xi1>
  }
}

// -----

// Several bad nodes in one function are all reported, not only the first.
// CHECK: error: {{.*}}node 'bad1' (Frobnicate, opset 13)
// CHECK: error: {{.*}}node 'bad2' (Reshape, opset 13)
// CHECK: error: {{.*}}node 'bad3' (Softmax, opset 13)
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @all_errors_reported(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'bad1' (Frobnicate, opset 13): op type Frobnicate is not supported}}
    %a = "onnx.Frobnicate"(%x) : (tensor<2x3xf32>) -> tensor<*xf32> loc("bad1")
    // expected-error@unknown {{node 'bad2' (Reshape, opset 13): the target shape must be a compile-time constant}}
    %b = "onnx.Reshape"(%x, %s) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("bad2")
    // expected-error@unknown {{node 'bad3' (Softmax, opset 13): axis 2 is out of range for rank 2}}
    %c = "onnx.Softmax"(%x) {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<*xf32> loc("bad3")
    return %a, %b, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Nodes fed by a failed node are skipped: one error for the root cause, none
// for its consumers, while independent nodes still convert.
// CHECK: error: {{.*}}node 'root' (Frobnicate, opset 13)
// CHECK-NOT: error:
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @reported_once(%x: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'root' (Frobnicate, opset 13)}}
    %a = "onnx.Frobnicate"(%x) : (tensor<2x3xf32>) -> tensor<*xf32> loc("root")
    %b = "onnx.Relu"(%a) : (tensor<*xf32>) -> tensor<*xf32> loc("consumer")
    %c = "onnx.Add"(%b, %a) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("consumer_of_consumer")
    %d = "onnx.Relu"(%x) : (tensor<2x3xf32>) -> tensor<*xf32> loc("independent")
    return %c, %d : tensor<*xf32>, tensor<*xf32>
  }
}
