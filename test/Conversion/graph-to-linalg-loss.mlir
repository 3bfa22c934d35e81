// RUN: pipecc-opt %s --pipecc-lower-graph-to-linalg | FileCheck %s

// Softmax: max (init -inf), sum of exp(x - max), then exp(x - max) / sum.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAX_INIT:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x3xf32>) outs(%[[MAX_INIT]] : tensor<4xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %[[MAX]] : tensor<4x3xf32>, tensor<4xf32>)
// CHECK: %[[SHIFTED:.*]] = arith.subf
// CHECK: math.exp %[[SHIFTED]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0, %[[MAX]], %[[SUM]] : tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.divf
func.func @softmax(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = graph.softmax %x axis = 1 : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// Cross-entropy: one reduction over the label positions reads the label's
// logit with tensor.extract (an ignored label reads class 0), sums
// logsumexp - logit and counts the positions used; then total / count.
// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[L:.*]]: tensor<4xi64>)
// CHECK: %[[MAX:.*]] = linalg.generic
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK: %[[TOTALS:.*]]:2 = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[L]], %[[MAX]], %[[SUM]] : tensor<4xi64>, tensor<4xf32>, tensor<4xf32>) outs(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>)
// CHECK: ^bb0(%[[LABEL:.*]]: i64, %[[M:.*]]: f32, %[[S:.*]]: f32, %[[ACC:.*]]: f32, %[[COUNT:.*]]: f32):
// CHECK: %[[IGNORE:.*]] = arith.constant -100 : i64
// CHECK: %[[KEEP:.*]] = arith.cmpi ne, %[[LABEL]], %[[IGNORE]] : i64
// CHECK: %[[SAFE:.*]] = arith.select %[[KEEP]], %[[LABEL]]
// CHECK: %[[ROW:.*]] = linalg.index 0 : index
// CHECK: %[[CLS:.*]] = arith.index_cast %[[SAFE]] : i64 to index
// CHECK: %[[LOGIT:.*]] = tensor.extract %[[X]][%[[ROW]], %[[CLS]]] : tensor<4x3xf32>
// CHECK: %[[LOG:.*]] = math.log %[[S]]
// CHECK: %[[LSE:.*]] = arith.addf %[[M]], %[[LOG]]
// CHECK: arith.subf %[[LSE]], %[[LOGIT]]
// CHECK: linalg.yield
// A mean over no counted label is 0: the count is at least 1.
// CHECK: %[[DEN:.*]] = linalg.generic {{.*}} ins(%[[TOTALS]]#1 : tensor<f32>)
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} ins(%[[TOTALS]]#0, %[[DEN]] : tensor<f32>, tensor<f32>)
// CHECK: arith.divf
func.func @cross_entropy(%x: tensor<4x3xf32>, %l: tensor<4xi64>) -> tensor<f32> {
  %0 = graph.cross_entropy %x, %l {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// Spatial logits [N, C, d]: the class is dimension 1 of the gather.
// CHECK-LABEL: func.func @cross_entropy_spatial
// CHECK: %[[N:.*]] = linalg.index 0 : index
// CHECK: %[[CLS:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[D:.*]] = linalg.index 1 : index
// CHECK: tensor.extract %arg0[%[[N]], %[[CLS]], %[[D]]] : tensor<2x3x5xf32>
func.func @cross_entropy_spatial(%x: tensor<2x3x5xf32>, %l: tensor<2x5xi32>) -> tensor<f32> {
  %0 = graph.cross_entropy %x, %l : tensor<2x3x5xf32>, tensor<2x5xi32> -> tensor<f32>
  return %0 : tensor<f32>
}

// (softmax - onehot) * dloss / count, zero where the label is ignored.
// CHECK-LABEL: func.func @cross_entropy_grad
// CHECK: %[[COUNT:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%arg1 : tensor<4xi64>)
// CHECK: %[[DEN:.*]] = linalg.generic {{.*}} ins(%[[COUNT]] : tensor<f32>)
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1, %{{.*}}, %{{.*}}, %arg2, %[[DEN]] : tensor<4x3xf32>, tensor<4xi64>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>)
// CHECK: %[[CLS:.*]] = linalg.index 1 : index
// CHECK: arith.index_cast %[[CLS]] : index to i64
// CHECK: arith.cmpi eq
// CHECK: arith.mulf
// CHECK: arith.cmpi ne
// CHECK: arith.select
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
