// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics

// Scan outputs over a run-time trip count need a bound on it: M from a
// graph input's value (not its shape) has none.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @runtime_trips_scan(%m: tensor<i64>, %x: tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %none = onnx.NoValue
    // expected-error@unknown {{node 'loop' (Loop, opset 13): stacks 1 scan output(s) over a trip count M that Kiln cannot bound (M is computed at run time, not from the shapes of the inputs); scan outputs of unbounded length are not supported: give M as a size of an input dimension with a range (--dim, --input-shape), or declare the scan outputs' length in the model}}
    %r:2 = "onnx.Loop"(%m, %none, %x) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
      "onnx.Yield"(%c, %v, %v) : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, none, tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("loop")
    return %r#0, %r#1 : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// A loop-carried value must keep its shape over a run-time trip count.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @growing_state(%m: tensor<i64>, %x: tensor<3xf32>) -> tensor<*xf32> {
    %none = onnx.NoValue
    // expected-error@unknown {{node 'loop' (Loop, opset 13): loop-carried value 0 is 'tensor<3xf32>' before the loop and 'tensor<6xf32>' after an iteration; a loop-carried value that changes shape is not supported with a run-time trip count}}
    %r = "onnx.Loop"(%m, %none, %x) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<*xf32>):
      %w = "onnx.Concat"(%v, %v) {axis = 0 : si64} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
      "onnx.Yield"(%c, %w) : (tensor<i1>, tensor<*xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, none, tensor<3xf32>) -> tensor<*xf32> loc("loop")
    return %r : tensor<*xf32>
  }
}

// -----

// With a run-time size the types agree (tensor<?xf32>) but the sizes double:
// refused too, since every iteration writes over the init's buffer.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @growing_runtime_state(%m: tensor<i64>, %x: tensor<?xf32> {onnx.name = "x"}) -> tensor<*xf32> {
    %none = onnx.NoValue
    // expected-error@unknown {{node 'loop' (Loop, opset 13): loop-carried value 0 has x[0] elements along axis 0 before the loop and 2 * x[0] after an iteration, which Kiln cannot prove equal}}
    %r = "onnx.Loop"(%m, %none, %x) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<*xf32>):
      %w = "onnx.Concat"(%v, %v) {axis = 0 : si64} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
      "onnx.Yield"(%c, %w) : (tensor<i1>, tensor<*xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, none, tensor<?xf32>) -> tensor<*xf32> loc("loop")
    return %r : tensor<*xf32>
  }
}

// -----

// A constant condition takes one branch; Scan unrolls over its static axis.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @fine(%x: tensor<3xf32>, %y: tensor<4xf32>, %s: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %c = "onnx.Constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
    %r = "onnx.If"(%c) ({
      "onnx.Yield"(%x) : (tensor<3xf32>) -> ()
    }, {
      "onnx.Yield"(%y) : (tensor<4xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    %sum, %steps = "onnx.Scan"(%x, %s) ({
    ^bb0(%acc: tensor<3xf32>, %row: tensor<3xf32>):
      %n = "onnx.Add"(%acc, %row) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      "onnx.Yield"(%n, %n) : (tensor<3xf32>, tensor<3xf32>) -> ()
    }) {num_scan_inputs = 1 : si64, onnx.regions = ["body"]} : (tensor<3xf32>, tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("scan")
    return %r, %sum, %steps : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// A loop without a trip count that its body stops: scan outputs would have
// no bound on their length.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @while_with_scan(%x: tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %none = onnx.NoValue
    // expected-error@unknown {{node 'loop' (Loop, opset 13): has no trip count M and its body decides when to stop, so its 1 scan output(s) have no bound on their length; give the loop a trip count M (a constant, or a size of an input dimension with a range)}}
    %r:2 = "onnx.Loop"(%none, %none, %x) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
      %k = "onnx.Constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
      %go = "onnx.Less"(%i, %k) : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "onnx.Yield"(%go, %v, %v) : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> ()
    }) {onnx.regions = ["body"]} : (none, none, tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("loop")
    return %r#0, %r#1 : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// A body that computes its condition as something other than one bool.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @float_condition(%m: tensor<i64>, %x: tensor<3xf32>) -> tensor<*xf32> {
    %none = onnx.NoValue
    // expected-error@unknown {{node 'loop' (Loop, opset 13): the body's condition output is 'tensor<f32>'; it must be one bool}}
    %r = "onnx.Loop"(%m, %none, %x) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
      %s = "onnx.ReduceSum"(%v) {keepdims = 0 : si64} : (tensor<3xf32>) -> tensor<f32>
      "onnx.Yield"(%s, %v) : (tensor<f32>, tensor<3xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, none, tensor<3xf32>) -> tensor<*xf32> loc("loop")
    return %r : tensor<*xf32>
  }
}

// -----

// A Scan over a symbolic axis (the loop path) whose body takes no slice
// argument for its scan input.
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @scan_body_arity(%h: tensor<2xf32>, %x: tensor<?x2xf32> {kiln.symbols = array<i64: 0, -1>, onnx.dim_params = ["seq", ""]}) -> (tensor<*xf32>, tensor<*xf32>) attributes {kiln.symbol_bounds = array<i64: 1, 40>} {
    // expected-error@unknown {{node 'scan' (Scan, opset 16): the body must take 2 values (the states, then one slice per scan input) and yield 2 (the states, then one per scan output)}}
    %r:2 = "onnx.Scan"(%h, %x) ({
    ^bb0(%s: tensor<2xf32>):
      "onnx.Yield"(%s, %s) : (tensor<2xf32>, tensor<2xf32>) -> ()
    }) {num_scan_inputs = 1 : si64, onnx.regions = ["body"]} : (tensor<2xf32>, tensor<?x2xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("scan")
    return %r#0, %r#1 : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Scan and output axes the tensors do not have.
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @scan_axes(%h: tensor<2xf32>, %x: tensor<?x2xf32> {kiln.symbols = array<i64: 0, -1>, onnx.dim_params = ["seq", ""]}) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) attributes {kiln.symbol_bounds = array<i64: 1, 40>} {
    // expected-error@unknown {{node 'in_axis' (Scan, opset 16): scan input 0 ('tensor<?x2xf32>') has no axis 5}}
    %r:2 = "onnx.Scan"(%h, %x) ({
    ^bb0(%s: tensor<2xf32>, %xt: tensor<2xf32>):
      %w = "onnx.Add"(%s, %xt) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "onnx.Yield"(%w, %w) : (tensor<2xf32>, tensor<2xf32>) -> ()
    }) {num_scan_inputs = 1 : si64, scan_input_axes = [5], onnx.regions = ["body"]} : (tensor<2xf32>, tensor<?x2xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("in_axis")
    // expected-error@unknown {{node 'out_axis' (Scan, opset 16): scan output 0 is stacked on axis 7, which the body's output ('tensor<2xf32>') does not have}}
    %q:2 = "onnx.Scan"(%h, %x) ({
    ^bb0(%s: tensor<2xf32>, %xt: tensor<2xf32>):
      %w = "onnx.Add"(%s, %xt) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "onnx.Yield"(%w, %w) : (tensor<2xf32>, tensor<2xf32>) -> ()
    }) {num_scan_inputs = 1 : si64, scan_output_axes = [7], onnx.regions = ["body"]} : (tensor<2xf32>, tensor<?x2xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("out_axis")
    return %r#0, %r#1, %q#0, %q#1 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Results of a run-time If whose ranks differ: every output of the C ABI
// has one rank, so the model is refused, naming both types.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @ranks_differ(%c: tensor<i1>, %x: tensor<2x3xf32>, %y: tensor<6xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'if' (If, opset 13): the branches produce different shapes ('tensor<2x3xf32>' and 'tensor<6xf32>'); Kiln keeps the taken branch's result when the ranks agree (opset 11 or later)}}
    %r = "onnx.If"(%c) ({
      "onnx.Yield"(%x) : (tensor<2x3xf32>) -> ()
    }, {
      "onnx.Yield"(%y) : (tensor<6xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %r : tensor<*xf32>
  }
}
