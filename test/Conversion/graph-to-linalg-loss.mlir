// RUN: pipecc-opt %s --pipecc-lower-graph-to-linalg | FileCheck %s

// Softmax: one loop nest over the rows; per row a loop for the maximum
// (init -inf), one storing exp(x - max) and summing it, one dividing the
// stored exps by the sum. No linalg op and no per-row tensor.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>)
// CHECK-NOT: linalg.
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK: %[[RESULT:.*]] = scf.for %[[ROW:[^ ]*]] = %{{.*}} to %c4{{(_[0-9]+)?}} step %{{.*}} iter_args(%[[OUT:.*]] = %[[EMPTY]]) -> (tensor<4x3xf32>) {
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAX:.*]] = scf.for %[[C:[^ ]*]] = %{{.*}} to %c3{{(_[0-9]+)?}} step %{{.*}} iter_args(%[[M:.*]] = %[[NEG_INF]]) -> (f32) {
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%[[ROW]], %[[C]]]
// CHECK: arith.maximumf %[[V]], %[[M]] : f32
// CHECK: %[[SUM:.*]]:2 = scf.for %[[C2:[^ ]*]] = {{.*}} iter_args(%[[S:.*]] = %{{.*}}, %[[OUT2:.*]] = %[[OUT]]) -> (f32, tensor<4x3xf32>) {
// CHECK: %[[V2:.*]] = tensor.extract %[[X]][%[[ROW]], %[[C2]]]
// CHECK: %[[SHIFTED:.*]] = arith.subf %[[V2]], %[[MAX]]
// CHECK: %[[E:.*]] = math.exp %[[SHIFTED]]
// CHECK: arith.addf %[[S]], %[[E]]
// CHECK: tensor.insert %[[E]] into %[[OUT2]][%[[ROW]], %[[C2]]]
// CHECK: scf.for %[[C3:[^ ]*]] = {{.*}} iter_args(%[[OUT3:.*]] = %[[SUM]]#1) -> (tensor<4x3xf32>) {
// CHECK: %[[E3:.*]] = tensor.extract %[[OUT3]][%[[ROW]], %[[C3]]]
// CHECK: %[[Y:.*]] = arith.divf %[[E3]], %[[SUM]]#0
// CHECK: tensor.insert %[[Y]] into %[[OUT3]][%[[ROW]], %[[C3]]]
// CHECK: return %[[RESULT]]
func.func @softmax(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = graph.softmax %x axis = 1 : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// Along a leading axis the rows are the other dims' loops, outermost first.
// CHECK-LABEL: func.func @softmax_axis0
// CHECK: scf.for %[[I:[^ ]*]] = %{{.*}} to %c3{{(_[0-9]+)?}} {{.*}} -> (tensor<2x3x4xf32>)
// CHECK: scf.for %[[J:[^ ]*]] = %{{.*}} to %c4{{(_[0-9]+)?}} {{.*}} -> (tensor<2x3x4xf32>)
// CHECK: scf.for %[[C:[^ ]*]] = %{{.*}} to %c2{{(_[0-9]+)?}} {{.*}} -> (f32)
// CHECK: tensor.extract %arg0[%[[C]], %[[I]], %[[J]]]
func.func @softmax_axis0(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = graph.softmax %x axis = 0 : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// Cross-entropy: one loop over the label positions carries the total and
// the count; per position the row's maximum and sum of exps are loops, the
// label's logit is read with tensor.extract (an ignored label reads class
// 0), and logsumexp - logit is added where the label counts. Then
// total / count.
// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[L:.*]]: tensor<4xi64>)
// CHECK-NOT: linalg.
// CHECK: %[[TOTALS:.*]]:2 = scf.for %[[ROW:[^ ]*]] = %{{.*}} to %c4{{(_[0-9]+)?}} {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[COUNT:.*]] = %{{.*}}) -> (f32, f32) {
// CHECK: %[[LABEL:.*]] = tensor.extract %[[L]][%[[ROW]]]
// CHECK: %[[IGNORE:.*]] = arith.constant -100 : i64
// CHECK: %[[KEEP:.*]] = arith.cmpi ne, %[[LABEL]], %[[IGNORE]] : i64
// CHECK: %[[SAFE:.*]] = arith.select %[[KEEP]], %[[LABEL]]
// CHECK: %[[M:.*]] = scf.for {{.*}} -> (f32)
// CHECK: arith.maximumf
// CHECK: %[[S:.*]] = scf.for {{.*}} -> (f32)
// CHECK: math.exp
// CHECK: %[[CLS:.*]] = arith.index_cast %[[SAFE]] : i64 to index
// CHECK: %[[LOGIT:.*]] = tensor.extract %[[X]][%[[ROW]], %[[CLS]]] : tensor<4x3xf32>
// CHECK: %[[LOG:.*]] = math.log %[[S]]
// CHECK: %[[LSE:.*]] = arith.addf %[[M]], %[[LOG]]
// CHECK: arith.subf %[[LSE]], %[[LOGIT]]
// CHECK: scf.yield
// A mean over no counted label is 0: the count is at least 1.
// CHECK: %[[DEN:.*]] = arith.maximumf %[[TOTALS]]#1, %{{.*}} : f32
// CHECK: %[[MEAN:.*]] = arith.divf %[[TOTALS]]#0, %[[DEN]] : f32
// CHECK: tensor.from_elements %[[MEAN]] : tensor<f32>
func.func @cross_entropy(%x: tensor<4x3xf32>, %l: tensor<4xi64>) -> tensor<f32> {
  %0 = graph.cross_entropy %x, %l {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// Spatial logits [N, C, d]: the label positions are (N, d); the class is
// dimension 1 of every read.
// CHECK-LABEL: func.func @cross_entropy_spatial
// CHECK: scf.for %[[N:[^ ]*]] = %{{.*}} to %c2{{(_[0-9]+)?}}
// CHECK: scf.for %[[D:[^ ]*]] = %{{.*}} to %c5{{(_[0-9]+)?}}
// CHECK: scf.for %[[C:[^ ]*]] = %{{.*}} to %c3{{(_[0-9]+)?}}
// CHECK: tensor.extract %arg0[%[[N]], %[[C]], %[[D]]] : tensor<2x3x5xf32>
// CHECK: %[[CLS:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: tensor.extract %arg0[%[[N]], %[[CLS]], %[[D]]] : tensor<2x3x5xf32>
func.func @cross_entropy_spatial(%x: tensor<2x3x5xf32>, %l: tensor<2x5xi32>) -> tensor<f32> {
  %0 = graph.cross_entropy %x, %l : tensor<2x3x5xf32>, tensor<2x5xi32> -> tensor<f32>
  return %0 : tensor<f32>
}

// (softmax - onehot) * dloss / count, zero where the label is ignored: the
// count first, then per row the maximum, the stored exps and their sum,
// and one pass writing the gradient over the stored exps.
// CHECK-LABEL: func.func @cross_entropy_grad
// CHECK-NOT: linalg.
// CHECK: %[[COUNT:.*]] = scf.for {{.*}} -> (f32)
// CHECK: %[[DEN:.*]] = arith.maximumf %[[COUNT]], %{{.*}} : f32
// CHECK: %[[DLOSS:.*]] = tensor.extract %arg2[] : tensor<f32>
// CHECK: %[[SCALE:.*]] = arith.divf %[[DLOSS]], %[[DEN]] : f32
// CHECK: scf.for %[[ROW:[^ ]*]] = %{{.*}} to %c4{{(_[0-9]+)?}} {{.*}} -> (tensor<4x3xf32>)
// CHECK: %[[LABEL:.*]] = tensor.extract %arg1[%[[ROW]]]
// CHECK: %[[KEEP:.*]] = arith.cmpi ne, %[[LABEL]]
// CHECK: scf.for {{.*}} -> (f32)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]]:2 = scf.for {{.*}} -> (f32, tensor<4x3xf32>)
// CHECK: math.exp
// CHECK: scf.for %[[C:[^ ]*]] = {{.*}} -> (tensor<4x3xf32>)
// CHECK: %[[P:.*]] = arith.divf %{{.*}}, %[[SUM]]#0
// CHECK: %[[CLS:.*]] = arith.index_cast %[[C]] : index to i64
// CHECK: arith.cmpi eq, %[[CLS]], %[[LABEL]]
// CHECK: arith.mulf %{{.*}}, %[[SCALE]]
// CHECK: arith.select %[[KEEP]]
// CHECK: tensor.insert
func.func @cross_entropy_grad(%x: tensor<4x3xf32>, %l: tensor<4xi64>, %dl: tensor<f32>) -> tensor<4x3xf32> {
  %0 = graph.cross_entropy_grad %x, %l, %dl {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<4xi64>, tensor<f32>
  return %0 : tensor<4x3xf32>
}

// The labels a counted-mean loss counts: those that are not ignore_index.
// CHECK-LABEL: func.func @label_count
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%arg0 : tensor<2x3xi64>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[IGNORE:.*]] = arith.constant -100 : i64
// CHECK: %[[KEEP:.*]] = arith.cmpi ne, %{{.*}}, %[[IGNORE]] : i64
// CHECK: arith.select %[[KEEP]]
// CHECK: arith.addf
func.func @label_count(%l: tensor<2x3xi64>) -> tensor<f32> {
  %0 = graph.label_count %l {ignore_index = -100 : i64} : tensor<2x3xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @mse
// CHECK: %[[TOTAL:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%arg0, %arg1 : tensor<3x2xf32>, tensor<3x2xf32>)
// CHECK: %[[D:.*]] = arith.subf
// CHECK: arith.mulf %[[D]], %[[D]]
// CHECK: %[[N:.*]] = arith.constant dense<6.000000e+00> : tensor<f32>
// CHECK: linalg.generic {{.*}} ins(%[[TOTAL]], %[[N]] : tensor<f32>, tensor<f32>)
// CHECK: arith.divf
func.func @mse(%y: tensor<3x2xf32>, %t: tensor<3x2xf32>) -> tensor<f32> {
  %0 = graph.mse_loss %y, %t : tensor<3x2xf32>, tensor<3x2xf32> -> tensor<f32>
  return %0 : tensor<f32>
}
