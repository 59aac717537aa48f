// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// An If of a run-time condition whose branches hold a matmul runs only the
// taken branch: each branch is a kiln.loop of one iteration or none, the
// else branch's carrying the result from zeros, the then branch's from what
// the else branch's left. Nothing selects between two computed results.
// CHECK-LABEL: func.func @expensive
// CHECK-SAME: (%[[C:.*]]: tensor<i1>, %[[X:.*]]: tensor<2x4xf32>, %[[W:.*]]: tensor<4x3xf32>)
// CHECK-DAG: %[[ZERO:.*]] = kiln.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK: %[[NE:.*]] = kiln.where %[[C]], %{{.*}}, %{{.*}} : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: %[[E:.*]] = "kiln.loop"(%[[NE]], %[[ZERO]]) <{scan_bound = 0 : i64}> ({
// CHECK: kiln.neg
// CHECK: kiln.yield %{{.*}} : tensor<2x3xf32>
// CHECK: %[[NT:.*]] = kiln.where %[[C]], %{{.*}}, %{{.*}} : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: %[[T:.*]] = "kiln.loop"(%[[NT]], %[[E]]) <{scan_bound = 0 : i64}> ({
// CHECK: kiln.relu
// CHECK: kiln.yield %{{.*}} : tensor<2x3xf32>
// CHECK-NOT: kiln.where
// CHECK: return %[[T]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @expensive(%c: tensor<i1>, %x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<*xf32> {
    %y = "onnx.If"(%c) ({
      %m = "onnx.MatMul"(%x, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
      %r = "onnx.Relu"(%m) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      "onnx.Yield"(%r) : (tensor<2x3xf32>) -> ()
    }, {
      %m = "onnx.MatMul"(%x, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
      %n = "onnx.Neg"(%m) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      "onnx.Yield"(%n) : (tensor<2x3xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %y : tensor<*xf32>
  }
}

// -----

// Cheap branches (elementwise ops) both run and Where keeps one result: a
// loop would cost more than the branch it skips.
// CHECK-LABEL: func.func @cheap
// CHECK-NOT: kiln.loop
// CHECK: kiln.relu
// CHECK: kiln.neg
// CHECK: kiln.where
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @cheap(%c: tensor<i1>, %x: tensor<2x3xf32>) -> tensor<*xf32> {
    %y = "onnx.If"(%c) ({
      %r = "onnx.Relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      "onnx.Yield"(%r) : (tensor<2x3xf32>) -> ()
    }, {
      %n = "onnx.Neg"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      "onnx.Yield"(%n) : (tensor<2x3xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %y : tensor<*xf32>
  }
}

// -----

// Expensive branches whose results have no static shape before conversion
// (no inferred types) still both run: a loop-carried value needs its shape
// up front.
// CHECK-LABEL: func.func @untyped
// CHECK-NOT: kiln.loop
// CHECK: kiln.where
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @untyped(%c: tensor<i1>, %x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<*xf32> {
    %y = "onnx.If"(%c) ({
      %m = "onnx.MatMul"(%x, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<*xf32>
      "onnx.Yield"(%m) : (tensor<*xf32>) -> ()
    }, {
      %m = "onnx.MatMul"(%x, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<*xf32>
      %n = "onnx.Neg"(%m) : (tensor<*xf32>) -> tensor<*xf32>
      "onnx.Yield"(%n) : (tensor<*xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %y : tensor<*xf32>
  }
}

// -----

// Results of run-time size (a symbolic batch): each branch is a kiln.loop of
// one iteration or none that stacks its result as a scan output (sizes
// computed before the loop), and the If's result is the one row of the two
// stacks.
// CHECK-LABEL: func.func @symbolic
// CHECK-SAME: (%[[C:.*]]: tensor<i1>
// CHECK: %[[NT:.*]] = kiln.where %[[C]], %{{.*}}, %{{.*}} : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: %[[T:.*]] = "kiln.loop"(%[[NT]]) <{scan_bound = 1 : i64}> ({
// CHECK: kiln.relu
// CHECK: kiln.yield %{{.*}} : tensor<?x3xf32>
// CHECK: }) : (tensor<i64>) -> tensor<?x?x3xf32>
// CHECK: %[[NE:.*]] = kiln.where %[[C]], %{{.*}}, %{{.*}} : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: %[[E:.*]] = "kiln.loop"(%[[NE]]) <{scan_bound = 1 : i64}> ({
// CHECK: kiln.neg
// CHECK: %[[BOTH:.*]] = kiln.concat %[[T]], %[[E]] {axis = 0 : i64} : (tensor<?x?x3xf32>, tensor<?x?x3xf32>) -> tensor<?x?x3xf32>
// CHECK: %[[Y:.*]] = kiln.gather %[[BOTH]], %{{.*}} {axis = 0 : i64} : (tensor<?x?x3xf32>, tensor<i64>) -> tensor<?x3xf32>
// CHECK-NOT: kiln.where
// CHECK: return %[[Y]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @symbolic(%c: tensor<i1>, %x: tensor<?x4xf32> {onnx.dim_params = ["B", ""]}, %w: tensor<4x3xf32>) -> tensor<*xf32> {
    %y = "onnx.If"(%c) ({
      %m = "onnx.MatMul"(%x, %w) : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
      %r = "onnx.Relu"(%m) : (tensor<?x3xf32>) -> tensor<?x3xf32>
      "onnx.Yield"(%r) : (tensor<?x3xf32>) -> ()
    }, {
      %m = "onnx.MatMul"(%x, %w) : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
      %n = "onnx.Neg"(%m) : (tensor<?x3xf32>) -> tensor<?x3xf32>
      "onnx.Yield"(%n) : (tensor<?x3xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %y : tensor<*xf32>
  }
}

// -----

// A branch whose result's size is what its data says (Compress by a mask
// input) cannot be stacked at a size known before it runs: both branches
// run. Their rows differ in number (kept rows, B), so the taken branch's
// result is kept whole and the other's cut to nothing, and the two joined.
// CHECK-LABEL: func.func @data_sized
// CHECK-NOT: kiln.loop
// CHECK: %[[K:.+]] = kiln.compress
// CHECK: %[[N:.+]] = kiln.neg
// CHECK: %[[C:.+]] = tensor.extract %{{.+}}[] : tensor<i1>
// CHECK: %[[NOT:.+]] = arith.xori %[[C]], %true
// CHECK: %[[KT:.+]] = arith.select %[[C]], %{{.+}}, %c0
// CHECK: %[[T:.+]] = kiln.sized_slice %[[K]] offsets(%{{.+}}, %{{.+}}) sizes(%{{.+}}, %{{.+}})
// CHECK: %[[KE:.+]] = arith.select %[[NOT]], %{{.+}}, %c0
// CHECK: %[[E:.+]] = kiln.sized_slice %[[N]]
// CHECK-NOT: kiln.where
// CHECK: kiln.concat %[[T]], %[[E]] {axis = 0 : i64}
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @data_sized(%c: tensor<i1>, %x: tensor<?x4xf32> {onnx.dim_params = ["B", ""]}, %keep: tensor<?xi1> {onnx.dim_params = ["B"]}, %w: tensor<4x3xf32>) -> tensor<*xf32> {
    %y = "onnx.If"(%c) ({
      %m = "onnx.MatMul"(%x, %w) : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
      %k = "onnx.Compress"(%m, %keep) {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?xi1>) -> tensor<?x3xf32>
      "onnx.Yield"(%k) : (tensor<?x3xf32>) -> ()
    }, {
      %m = "onnx.MatMul"(%x, %w) : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
      %n = "onnx.Neg"(%m) : (tensor<?x3xf32>) -> tensor<?x3xf32>
      "onnx.Yield"(%n) : (tensor<?x3xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %y : tensor<*xf32>
  }
}

// -----

// Cheap branches whose results differ in a run-time size (a stride-2 pool
// of a symbolic length T in one, T itself in the other): the sizes are
// compared once both branches have converted, (T - 2) // 2 + 1 against T,
// and the taken result is cut out and joined; no Where and no run-time
// check that the two lengths agree.
// CHECK-LABEL: func.func @cheap_different_lengths
// CHECK: kiln.max_pool
// CHECK: kiln.relu
// CHECK-NOT: kiln.where
// CHECK-NOT: kiln.guard
// CHECK: %[[T:.+]] = kiln.sized_slice
// CHECK: %[[E:.+]] = kiln.sized_slice
// CHECK: %[[Y:.+]] = kiln.concat %[[T]], %[[E]] {axis = 2 : i64} : (tensor<?x4x?xf32>, tensor<?x4x?xf32>) -> tensor<?x4x?xf32>
// CHECK: return %[[Y]]
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @cheap_different_lengths(%c: tensor<i1>, %x: tensor<?x4x?xf32> {kiln.symbols = array<i64: 0, -1, 1>, onnx.dim_params = ["B", "", "T"]}) -> tensor<*xf32> attributes {kiln.symbol_bounds = array<i64: 1, 4, 8, 256>} {
    %y = "onnx.If"(%c) ({
      %p = "onnx.MaxPool"(%x) {kernel_shape = [2], strides = [2]} : (tensor<?x4x?xf32>) -> tensor<*xf32>
      "onnx.Yield"(%p) : (tensor<*xf32>) -> ()
    }, {
      %r = "onnx.Relu"(%x) : (tensor<?x4x?xf32>) -> tensor<*xf32>
      "onnx.Yield"(%r) : (tensor<*xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %y : tensor<*xf32>
  }
}

// -----

// Expensive branches (products) that each run in a loop of one iteration or
// none, their results differing in a run-time size (rows T // 2 and T):
// each stack's row count (1 where its branch ran, 0 where not) is folded
// into that axis, and the two joined are the taken branch's result.
// CHECK-LABEL: func.func @stacked_different_lengths
// CHECK: %[[TS:.+]] = "kiln.loop"
// CHECK: kiln.matmul
// CHECK: %[[ES:.+]] = "kiln.loop"
// CHECK: kiln.matmul
// CHECK: %[[TF:.+]] = kiln.sized_reshape %[[TS]]
// CHECK-SAME: tensor<?x?x3xf32> to tensor<?x3xf32>
// CHECK: %[[EF:.+]] = kiln.sized_reshape %[[ES]]
// CHECK-SAME: tensor<?x?x3xf32> to tensor<?x3xf32>
// CHECK: %[[J:.+]] = kiln.concat %[[TF]], %[[EF]] {axis = 0 : i64}
// CHECK: %[[ROW:.+]] = kiln.reshape %[[J]] : tensor<?x3xf32> to tensor<1x?x3xf32>
// CHECK: %[[Y:.+]] = kiln.gather %[[ROW]]
// CHECK-NOT: kiln.guard
// CHECK: return %[[Y]]
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @stacked_different_lengths(%c: tensor<i1>, %x: tensor<?x4xf32> {kiln.symbols = array<i64: 0, -1>, onnx.dim_params = ["T", ""]}, %w: tensor<4x3xf32>) -> tensor<*xf32> attributes {kiln.symbol_bounds = array<i64: 2, 64>} {
    %y = "onnx.If"(%c) ({
      %s0 = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
      %s1 = "onnx.Constant"() {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
      %ax = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
      %st = "onnx.Constant"() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
      %h = "onnx.Slice"(%x, %s0, %s1, %ax, %st) : (tensor<?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4xf32>
      %m = "onnx.MatMul"(%h, %w) : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
      "onnx.Yield"(%m) : (tensor<?x3xf32>) -> ()
    }, {
      %m = "onnx.MatMul"(%x, %w) : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
      "onnx.Yield"(%m) : (tensor<?x3xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %y : tensor<*xf32>
  }
}

// -----

// Cheap branches whose results differ in two run-time sizes (a 2x2 pool of
// a symbolic H x W, and the input itself): each result flattened and cut to
// all of its elements or none, the two joined, and the elements viewed at
// the taken branch's sizes, chosen by the condition.
// CHECK-LABEL: func.func @branches_differ_in_two_axes
// CHECK-SAME: -> tensor<1x4x?x?xf32>
// CHECK: kiln.max_pool2d
// CHECK: kiln.relu
// CHECK-NOT: kiln.guard
// CHECK: %[[C:.+]] = tensor.extract %arg0[]
// CHECK: %[[TF:.+]] = kiln.sized_reshape %{{.+}} : tensor<1x4x?x?xf32> to tensor<?xf32>
// CHECK: %[[T:.+]] = kiln.sized_slice %[[TF]]
// CHECK: %[[EF:.+]] = kiln.sized_reshape %{{.+}} : tensor<1x4x?x?xf32> to tensor<?xf32>
// CHECK: %[[E:.+]] = kiln.sized_slice %[[EF]]
// CHECK: %[[J:.+]] = kiln.concat %[[T]], %[[E]] {axis = 0 : i64}
// CHECK: %[[H:.+]] = arith.select %[[C]]
// CHECK: %[[W:.+]] = arith.select %[[C]]
// CHECK: %[[Y:.+]] = kiln.sized_reshape %[[J]][%[[H]], %[[W]]] : tensor<?xf32> to tensor<1x4x?x?xf32>
// CHECK-NOT: kiln.guard
// CHECK: return %[[Y]]
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @branches_differ_in_two_axes(%c: tensor<i1>, %x: tensor<1x4x?x?xf32> {kiln.symbols = array<i64: -1, -1, 0, 1>, onnx.dim_params = ["", "", "H", "W"]}) -> tensor<*xf32> attributes {kiln.symbol_bounds = array<i64: 4, 64, 4, 64>} {
    %y = "onnx.If"(%c) ({
      %p = "onnx.MaxPool"(%x) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x4x?x?xf32>) -> tensor<*xf32>
      "onnx.Yield"(%p) : (tensor<*xf32>) -> ()
    }, {
      %r = "onnx.Relu"(%x) : (tensor<1x4x?x?xf32>) -> tensor<*xf32>
      "onnx.Yield"(%r) : (tensor<*xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %y : tensor<*xf32>
  }
}

// -----

// Expensive branches (a stride-2 and a stride-1 convolution, each run in a
// loop of one iteration or none) whose results differ in two run-time sizes:
// each stack (its one row, or none) flattened, the two joined, and viewed as
// one row at the sizes of the branch whose stack has its row.
// CHECK-LABEL: func.func @stacked_differ_in_two_axes
// CHECK: %[[TS:.+]] = "kiln.loop"
// CHECK: kiln.conv2d
// CHECK: %[[ES:.+]] = "kiln.loop"
// CHECK: kiln.conv2d
// CHECK: %[[RAN:.+]] = arith.cmpi ne
// CHECK: %[[TF:.+]] = kiln.sized_reshape %[[TS]][%{{.+}}] : tensor<?x1x4x?x?xf32> to tensor<?xf32>
// CHECK: %[[EF:.+]] = kiln.sized_reshape %[[ES]][%{{.+}}] : tensor<?x1x4x?x?xf32> to tensor<?xf32>
// CHECK: %[[J:.+]] = kiln.concat %[[TF]], %[[EF]] {axis = 0 : i64}
// CHECK: %[[H:.+]] = arith.select %[[RAN]]
// CHECK: %[[W:.+]] = arith.select %[[RAN]]
// CHECK: %[[ROW:.+]] = kiln.sized_reshape %[[J]][%[[H]], %[[W]]] : tensor<?xf32> to tensor<1x1x4x?x?xf32>
// CHECK: %[[Y:.+]] = kiln.gather %[[ROW]]
// CHECK-NOT: kiln.guard
// CHECK: return %[[Y]]
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @stacked_differ_in_two_axes(%c: tensor<i1>, %x: tensor<1x4x?x?xf32> {kiln.symbols = array<i64: -1, -1, 0, 1>, onnx.dim_params = ["", "", "H", "W"]}, %w: tensor<4x4x3x3xf32>) -> tensor<*xf32> attributes {kiln.symbol_bounds = array<i64: 4, 64, 4, 64>} {
    %y = "onnx.If"(%c) ({
      %p = "onnx.Conv"(%x, %w) {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x4x?x?xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x?x?xf32>
      "onnx.Yield"(%p) : (tensor<1x4x?x?xf32>) -> ()
    }, {
      %r = "onnx.Conv"(%x, %w) {pads = [1, 1, 1, 1]} : (tensor<1x4x?x?xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x?x?xf32>
      "onnx.Yield"(%r) : (tensor<1x4x?x?xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %y : tensor<*xf32>
  }
}

// -----

// Results of static shapes that differ in both axes (2x3 and 3x4): the
// result's sizes are the data's, the taken branch's.
// CHECK-LABEL: func.func @static_shapes_differ
// CHECK-SAME: -> tensor<?x?xf32>
// CHECK: %[[C:.+]] = tensor.extract %arg0[]
// CHECK: kiln.reshape %arg1 : tensor<2x3xf32> to tensor<6xf32>
// CHECK: kiln.reshape %arg2 : tensor<3x4xf32> to tensor<12xf32>
// CHECK: %[[J:.+]] = kiln.concat
// CHECK: %[[R:.+]] = arith.select %[[C]], %c2{{.*}}, %c3
// CHECK: %[[K:.+]] = arith.select %[[C]], %c3{{.*}}, %c4
// CHECK: kiln.sized_reshape %[[J]][%[[R]], %[[K]]] : tensor<?xf32> to tensor<?x?xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @static_shapes_differ(%c: tensor<i1>, %x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<*xf32> {
    %r = "onnx.If"(%c) ({
      "onnx.Yield"(%x) : (tensor<2x3xf32>) -> ()
    }, {
      "onnx.Yield"(%y) : (tensor<3x4xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %r : tensor<*xf32>
  }
}
