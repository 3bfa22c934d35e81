// RUN: pipecc-opt %s --pipecc-lower-graph-to-linalg | FileCheck %s

// A reduction is a linalg.generic into a filled init (0 for sums, -inf for
// max) without the reduced dims; keep_dims expands them back.

// CHECK-DAG: #[[IN3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT3:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>

// CHECK-LABEL: func.func @sum_keep_dims
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[IN3]], #[[OUT3]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%arg0 : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<2x4xf32>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape %[[SUM]] {{\[}}[0], [1, 2]] output_shape [2, 1, 4] : tensor<2x4xf32> into tensor<2x1x4xf32>
func.func @sum_keep_dims(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %0 = graph.reduce_sum %x axes = [1] keep_dims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// CHECK-LABEL: func.func @mean
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<2xf32>)
// CHECK: %[[N:.*]] = arith.constant 3.000000e+00 : f32
// CHECK: arith.divf %{{.*}}, %[[N]] : f32
func.func @mean(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = graph.reduce_mean %x axes = [1] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @max_all
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[SCALAR]]], iterator_types = ["reduction", "reduction"]}
// CHECK-SAME: outs(%[[INIT]] : tensor<f32>)
// CHECK: arith.maximumf
func.func @max_all(%x: tensor<2x3xf32>) -> tensor<f32> {
  %0 = graph.reduce_max %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}
