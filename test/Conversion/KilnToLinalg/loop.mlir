// RUN: kiln-opt %s --kiln-convert-kiln-to-linalg | FileCheck %s

// kiln.loop becomes an scf.for marked kiln.graph_loop over the clamped trip
// count: the loop-carried value is materialized in its iter_arg (so that it
// keeps one buffer), each scan slice is inserted at row i of a buffer of
// scan_bound rows, and the result is the first trip-count rows. (A loop-
// carried graph input is copied by bufferization: kiln-mark-inputs-read-only
// marks the inputs not writable before it.)
// CHECK-LABEL: func.func @loop
// CHECK-SAME: %[[M:[^:]*]]: tensor<i64>
// CHECK-SAME: %[[H:[^:]*]]: tensor<2xf32>
// CHECK: %[[E:.*]] = tensor.extract %[[M]][] : tensor<i64>
// CHECK: %[[N:.*]] = arith.index_cast %[[E]] : i64 to index
// CHECK: %[[P:.*]] = arith.maxsi %[[N]], %[[C0:.*]] : index
// CHECK: %[[T:.*]] = arith.minsi %[[P]], %{{.*}} : index
// CHECK: %[[ROWS:.*]] = tensor.empty() : tensor<8x2xf32>
// CHECK: %[[F:.*]]:2 = scf.for %[[IV:.*]] = %[[C0]] to %[[T]] step %{{.*}} iter_args(%[[V:.*]] = %[[H]], %[[S:.*]] = %[[ROWS]])
// CHECK: %[[I64:.*]] = arith.index_cast %[[IV]] : index to i64
// CHECK: tensor.from_elements %[[I64]] : tensor<i64>
// CHECK: %[[W:.*]] = linalg.generic
// CHECK: %[[KEEP:.*]] = bufferization.materialize_in_destination %[[W]] in %[[V]]
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[W]] into %[[S]][%[[IV]], 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<8x2xf32>
// CHECK: scf.yield %[[KEEP]], %[[INS]]
// CHECK: } {kiln.graph_loop}
// CHECK: %[[OUT:.*]] = tensor.extract_slice %[[F]]#1[0, 0] [%[[T]], 2] [1, 1] : tensor<8x2xf32> to tensor<?x2xf32>
// CHECK: return %[[F]]#0, %[[OUT]]
func.func @loop(%m: tensor<i64>, %h: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  %r:2 = "kiln.loop"(%m, %h) <{scan_bound = 8 : i64}> ({
  ^bb0(%i: tensor<i64>, %v: tensor<2xf32>):
    %w = kiln.add %v, %v : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    kiln.yield %w, %w : tensor<2xf32>, tensor<2xf32>
  }) : (tensor<i64>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>)
  return %r#0, %r#1 : tensor<2xf32>, tensor<?x2xf32>
}

// With early_exit, an scf.while whose state is the loop's (tensors first),
// then the iteration number and the condition: it runs while i < the
// clamped trip count and the last condition the body yielded is true, and
// the scan output's rows are the iterations run (at most the trip count).
// CHECK-LABEL: func.func @while_loop
// CHECK: %[[T:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: %[[ROWS:.*]] = tensor.empty() : tensor<8x2xf32>
// CHECK: %[[W:.*]]:4 = scf.while (%[[V:.*]] = %{{.*}}, %[[S:.*]] = %[[ROWS]], %[[I:.*]] = %{{.*}}, %[[GO:.*]] = %true)
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[I]], %[[T]] : index
// CHECK: %[[MORE:.*]] = arith.andi %[[LT]], %[[GO]] : i1
// CHECK: scf.condition(%[[MORE]]) %[[V]], %[[S]], %[[I]], %[[GO]]
// CHECK: } do {
// CHECK: ^bb0(%[[V2:.*]]: tensor<2xf32>, %[[S2:.*]]: tensor<8x2xf32>, %[[I2:.*]]: index, %{{.*}}: i1):
// CHECK: %[[C:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK: %[[KEEP:.*]] = bufferization.materialize_in_destination %{{.*}} in %[[V2]]
// CHECK: %[[INS:.*]] = tensor.insert_slice %{{.*}} into %[[S2]][%[[I2]], 0] [1, 2] [1, 1]
// CHECK: %[[NEXT:.*]] = arith.addi %[[I2]], %{{.*}} : index
// CHECK: scf.yield %[[KEEP]], %[[INS]], %[[NEXT]], %[[C]]
// CHECK: } attributes {kiln.graph_loop}
// CHECK: %[[DONE:.*]] = arith.minsi %[[W]]#2, %[[T]] : index
// CHECK: %[[OUT:.*]] = tensor.extract_slice %[[W]]#1[0, 0] [%[[DONE]], 2] [1, 1] : tensor<8x2xf32> to tensor<?x2xf32>
// CHECK: return %[[W]]#0, %[[OUT]]
func.func @while_loop(%m: tensor<i64>, %h: tensor<2xf32>, %lim: tensor<f32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  %r:2 = "kiln.loop"(%m, %h) <{early_exit, scan_bound = 8 : i64}> ({
  ^bb0(%i: tensor<i64>, %v: tensor<2xf32>):
    %w = kiln.add %v, %v : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %top = kiln.reduce_max %w {axes = array<i64: 0>, keepdims = false} : tensor<2xf32> -> tensor<f32>
    %go = kiln.less %top, %lim : (tensor<f32>, tensor<f32>) -> tensor<i1>
    kiln.yield %go, %w, %w : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }) : (tensor<i64>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>)
  return %r#0, %r#1 : tensor<2xf32>, tensor<?x2xf32>
}
