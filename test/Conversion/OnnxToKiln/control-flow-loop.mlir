// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// A Loop whose trip count comes at run time is one kiln.loop, not unrolled:
// the body is converted in place, the condition input (always true) is gone
// and the iteration number is a rank-0 i64.
// CHECK-LABEL: func.func @runtime_trips
// CHECK-SAME: (%[[M:.*]]: tensor<i64>, %[[X:.*]]: tensor<3xf32>)
// CHECK: %[[R:.*]] = "kiln.loop"(%[[M]], %[[X]]) <{scan_bound = 0 : i64}> ({
// CHECK-NEXT: ^bb0(%[[I:.*]]: tensor<i64>, %[[V:.*]]: tensor<3xf32>):
// CHECK: %[[F:.*]] = kiln.cast %[[I]] to f32 : tensor<i64> -> tensor<f32>
// CHECK: %[[W:.*]] = kiln.add %[[V]], %[[F]]
// CHECK: kiln.yield %[[W]] : tensor<3xf32>
// CHECK-NEXT: }) : (tensor<i64>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: return %[[R]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @runtime_trips(%m: tensor<i64>, %x: tensor<3xf32>) -> tensor<*xf32> {
    %none = onnx.NoValue
    %r = "onnx.Loop"(%m, %none, %x) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
      %f = "onnx.Cast"(%i) {to = 1 : si64} : (tensor<i64>) -> tensor<f32>
      %w = "onnx.Add"(%v, %f) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
      "onnx.Yield"(%c, %w) : (tensor<i1>, tensor<3xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, none, tensor<3xf32>) -> tensor<*xf32> loc("loop")
    return %r : tensor<*xf32>
  }
}

// -----

// M from a symbolic dimension: the scan output is stacked into rows bounded
// by the symbol's range (--dim seq=1..40), and a run-time condition input
// makes the trip count cond ? M : 0.
// CHECK-LABEL: func.func @scan_over_symbol
// CHECK: %[[T:.*]] = kiln.where
// CHECK: "kiln.loop"(%[[T]], %{{.*}}) <{scan_bound = 40 : i64}>
// CHECK: kiln.gather %arg0, %{{.*}} {axis = 0 : i64}
// CHECK: kiln.yield %{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xf32>
// CHECK: -> (tensor<2xf32>, tensor<?x2xf32>)
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @scan_over_symbol(%x: tensor<?x2xf32> {kiln.symbols = array<i64: 0, -1>, onnx.dim_params = ["seq", ""]}, %go: tensor<i1>, %h: tensor<2xf32>) -> (tensor<*xf32>, tensor<*xf32>) attributes {kiln.symbol_bounds = array<i64: 1, 40>} {
    %none = onnx.NoValue
    %s = "onnx.Shape"(%x) : (tensor<?x2xf32>) -> tensor<2xi64>
    %zero = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %m = "onnx.Gather"(%s, %zero) {axis = 0 : si64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
    %r:2 = "onnx.Loop"(%m, %go, %h) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
      %xt = "onnx.Gather"(%x, %i) {axis = 0 : si64} : (tensor<?x2xf32>, tensor<i64>) -> tensor<2xf32>
      %w = "onnx.Add"(%v, %xt) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "onnx.Yield"(%c, %w, %w) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("loop")
    return %r#0, %r#1 : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// M = min(seq, 3) (`range(min(x.size(0), 3))`): not a polynomial of the
// sizes, but the constant bounds it, so the scan output takes 3 rows. An M
// that is a size (seq, without a condition input) is built from the size
// itself, so that the rows of its scan outputs are that size.
// CHECK-LABEL: func.func @min_bounded_trips
// CHECK: %[[MIN:.*]] = kiln.min
// CHECK: "kiln.loop"(%{{.*}}, %{{.*}}) <{scan_bound = 3 : i64}>
// CHECK: %[[D:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x2xf32>
// CHECK: %[[N:.*]] = arith.index_cast %[[D]] : index to i64
// CHECK: %[[T:.*]] = tensor.from_elements %[[N]] : tensor<i64>
// CHECK: "kiln.loop"(%[[T]], %{{.*}}) <{scan_bound = 40 : i64}>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @min_bounded_trips(%x: tensor<?x2xf32> {kiln.symbols = array<i64: 0, -1>, onnx.dim_params = ["seq", ""]}, %h: tensor<2xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) attributes {kiln.symbol_bounds = array<i64: 1, 40>} {
    %none = onnx.NoValue
    %s = "onnx.Shape"(%x) : (tensor<?x2xf32>) -> tensor<2xi64>
    %zero = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %three = "onnx.Constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %n = "onnx.Gather"(%s, %zero) {axis = 0 : si64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
    %m = "onnx.Min"(%n, %three) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %r:2 = "onnx.Loop"(%m, %none, %h) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
      %xt = "onnx.Gather"(%x, %i) {axis = 0 : si64} : (tensor<?x2xf32>, tensor<i64>) -> tensor<2xf32>
      %w = "onnx.Add"(%v, %xt) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "onnx.Yield"(%c, %w, %w) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, none, tensor<2xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("min_loop")
    %q:2 = "onnx.Loop"(%n, %none, %h) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
      %xt = "onnx.Gather"(%x, %i) {axis = 0 : si64} : (tensor<?x2xf32>, tensor<i64>) -> tensor<2xf32>
      %w = "onnx.Mul"(%v, %xt) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "onnx.Yield"(%c, %w, %w) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, none, tensor<2xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("size_loop")
    return %r#0, %r#1, %q#0, %q#1 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// `outs.append(y)` in a scripted loop: a sequence carried from SequenceEmpty
// through SequenceInsert, read after the loop by ConcatFromSequence, is a
// scan output of y (stacked on axis 1 here: a Transpose of the rows).
// CHECK-LABEL: func.func @sequence_append
// CHECK-NOT: Sequence
// CHECK: %[[L:.*]]:2 = "kiln.loop"(%{{.*}}, %arg1) <{scan_bound = 40 : i64}>
// CHECK: kiln.yield %{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xf32>
// CHECK: -> (tensor<2xf32>, tensor<?x2xf32>)
// CHECK: kiln.transpose %[[L]]#1 {perm = array<i64: 1, 0>} : tensor<?x2xf32> -> tensor<2x?xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @sequence_append(%x: tensor<?xf32> {kiln.symbols = array<i64: 0>, onnx.dim_params = ["seq"]}, %h: tensor<2xf32>) -> (tensor<*xf32>, tensor<*xf32>) attributes {kiln.symbol_bounds = array<i64: 1, 40>} {
    %none = onnx.NoValue
    %shape = "onnx.Shape"(%x) : (tensor<?xf32>) -> tensor<1xi64>
    %zero = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %m = "onnx.Gather"(%shape, %zero) {axis = 0 : si64} : (tensor<1xi64>, tensor<i64>) -> tensor<i64>
    %empty = "onnx.SequenceEmpty"() {dtype = 1 : si64} : () -> tensor<*xf32>
    %r:2 = "onnx.Loop"(%m, %none, %h, %empty) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>, %s: tensor<*xf32>):
      %w = "onnx.Add"(%v, %v) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %s2 = "onnx.SequenceInsert"(%s, %w) : (tensor<*xf32>, tensor<2xf32>) -> tensor<*xf32>
      "onnx.Yield"(%c, %w, %s2) : (tensor<i1>, tensor<2xf32>, tensor<*xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, none, tensor<2xf32>, tensor<*xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("loop")
    %y = "onnx.ConcatFromSequence"(%r#1) {axis = 1 : si64, new_axis = 1 : si64} : (tensor<*xf32>) -> tensor<*xf32>
    return %r#0, %y : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// A body that computes its own condition, with a run-time M: one kiln.loop
// with early_exit whose body yields the condition first.
// CHECK-LABEL: func.func @early_exit
// CHECK: "kiln.loop"(%arg0, %arg1) <{early_exit, scan_bound = 0 : i64}>
// CHECK: %[[GO:.*]] = kiln.less %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK: %[[W:.*]] = kiln.add
// CHECK: kiln.yield %[[GO]], %[[W]] : tensor<i1>, tensor<3xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @early_exit(%m: tensor<i64>, %x: tensor<3xf32>) -> tensor<*xf32> {
    %none = onnx.NoValue
    %r = "onnx.Loop"(%m, %none, %x) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
      %k = "onnx.Constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
      %go = "onnx.Less"(%i, %k) : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %w = "onnx.Add"(%v, %v) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      "onnx.Yield"(%go, %w) : (tensor<i1>, tensor<3xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, none, tensor<3xf32>) -> tensor<*xf32> loc("loop")
    return %r : tensor<*xf32>
  }
}

// -----

// An early exit with scan outputs: rows reserved for the constant M, the
// condition (declared [1]) yielded as a rank-0 i1.
// CHECK-LABEL: func.func @early_exit_scan
// CHECK: "kiln.loop"(%{{.*}}, %arg0) <{early_exit, scan_bound = 4 : i64}>
// CHECK: %[[GO:.*]] = kiln.reshape %{{.*}} : tensor<1xi1> to tensor<i1>
// CHECK: kiln.yield %[[GO]], %{{.*}}, %{{.*}} : tensor<i1>, tensor<3xf32>, tensor<3xf32>
// CHECK: -> (tensor<3xf32>, tensor<?x3xf32>)
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @early_exit_scan(%x: tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %m = "onnx.Constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %none = onnx.NoValue
    %r:2 = "onnx.Loop"(%m, %none, %x) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
      %k = "onnx.Constant"() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
      %go = "onnx.Less"(%i, %k) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi1>
      "onnx.Yield"(%go, %v, %v) : (tensor<1xi1>, tensor<3xf32>, tensor<3xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, none, tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("loop")
    return %r#0, %r#1 : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// A Scan over a symbolic axis is a kiln.loop over the axis's run-time
// length: the body gathers its slice (at length - 1 - i, a reversed input),
// the rows are bounded by the symbol's range, and an output stacked on
// axis 1 is a Transpose of the rows.
// CHECK-LABEL: func.func @scan_symbolic
// CHECK: %[[S:.*]] = kiln.shape_of %arg1
// CHECK: %[[N:.*]] = kiln.gather %[[S]]
// CHECK: %[[LAST:.*]] = kiln.sub %[[N]]
// CHECK: %[[R:.*]]:2 = "kiln.loop"(%[[N]], %arg0) <{scan_bound = 40 : i64}>
// CHECK-NEXT: ^bb0(%[[I:.*]]: tensor<i64>, %[[H:.*]]: tensor<2xf32>):
// CHECK: %[[J:.*]] = kiln.sub %[[LAST]], %[[I]]
// CHECK: %[[XT:.*]] = kiln.gather %arg1, %[[J]] {axis = 0 : i64}
// CHECK: %[[W:.*]] = kiln.add %[[H]], %[[XT]]
// CHECK: kiln.yield %[[W]], %[[W]]
// CHECK: kiln.transpose %[[R]]#1 {perm = array<i64: 1, 0>} : tensor<?x2xf32> -> tensor<2x?xf32>
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @scan_symbolic(%h: tensor<2xf32>, %x: tensor<?x2xf32> {kiln.symbols = array<i64: 0, -1>, onnx.dim_params = ["seq", ""]}) -> (tensor<*xf32>, tensor<*xf32>) attributes {kiln.symbol_bounds = array<i64: 1, 40>} {
    %r:2 = "onnx.Scan"(%h, %x) ({
    ^bb0(%s: tensor<2xf32>, %xt: tensor<2xf32>):
      %w = "onnx.Add"(%s, %xt) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "onnx.Yield"(%w, %w) : (tensor<2xf32>, tensor<2xf32>) -> ()
    }) {num_scan_inputs = 1 : si64, scan_input_directions = [1], scan_output_axes = [1], onnx.regions = ["body"]} : (tensor<2xf32>, tensor<?x2xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("scan")
    return %r#0, %r#1 : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// An export that declares every dimension carries x [n, c] through a
// MatMul with a [4, 4] weight: the body makes the state [n, 4]. The init is
// checked before the loop (a guard there ends the run; one in the body
// could not stop the write over the init's buffer) and the loop carries
// [n, 4] from the start.
// CHECK-LABEL: func.func @pinned_state
// CHECK-SAME: -> tensor<?x4xf32>
// CHECK: %[[C:.*]] = tensor.dim %arg0, %c1
// CHECK: arith.cmpi eq, %[[C]], %c4
// CHECK: kiln.guard {{.*}}kiln.fixed_size = 4 : i64, kiln.fixed_symbol = "c", message = "node 'pin_loop' (Loop, opset 13): the body needs loop-carried value 0's dimension 1 to be 4
// CHECK: %[[P:.*]] = kiln.sized_reshape %arg0[%{{.*}}] : tensor<?x?xf32> to tensor<?x4xf32>
// CHECK: "kiln.loop"(%arg1, %[[P]])
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<?x4xf32>):
// CHECK: kiln.yield %{{.*}} : tensor<?x4xf32>
// CHECK-NEXT: }) : (tensor<i64>, tensor<?x4xf32>) -> tensor<?x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @pinned_state(%x: tensor<?x?xf32> {kiln.symbols = array<i64: 0, 1>, onnx.dim_params = ["n", "c"]}, %m: tensor<i64>) -> (tensor<*xf32>) attributes {kiln.symbol_bounds = array<i64: 1, 8, 1, 8>} {
    %none = onnx.NoValue
    %w = "onnx.Constant"() {value = dense<0.5> : tensor<4x4xf32>} : () -> tensor<4x4xf32>
    %r = "onnx.Loop"(%m, %none, %x) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<?x?xf32>):
      %p = "onnx.MatMul"(%v, %w) : (tensor<?x?xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
      "onnx.Yield"(%c, %p) : (tensor<i1>, tensor<?x4xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, none, tensor<?x?xf32>) -> (tensor<*xf32>) loc("pin_loop")
    return %r : tensor<*xf32>
  }
}
