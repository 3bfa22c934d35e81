// RUN: pipecc-opt %s --pipecc-lower-graph-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @transpose
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK: linalg.transpose ins(%arg0 : tensor<2x3x4xf32>) outs(%[[E]] : tensor<4x2x3xf32>) permutation = [2, 0, 1]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = graph.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// Static reshapes: a collapse or an expand where the dims group, else
// through the flat vector; rank 0 has an empty reassociation.
// CHECK-LABEL: func.func @reshape
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK: tensor.expand_shape %arg1 [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK: tensor.collapse_shape %arg2 [] : tensor<1x1xf32> into tensor<f32>
func.func @reshape(%x: tensor<2x3x4xf32>, %s: tensor<f32>, %o: tensor<1x1xf32>)
    -> (tensor<6x4xf32>, tensor<4x6xf32>, tensor<1x1xf32>, tensor<f32>) {
  %0 = graph.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = graph.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
  %2 = graph.reshape %s : tensor<f32> -> tensor<1x1xf32>
  %3 = graph.reshape %o : tensor<1x1xf32> -> tensor<f32>
  return %0, %1, %2, %3 : tensor<6x4xf32>, tensor<4x6xf32>, tensor<1x1xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @broadcast
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%arg0 : tensor<3x1xf32>) outs(%{{.*}} : tensor<2x3x4xf32>)
func.func @broadcast(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %0 = graph.broadcast %x : tensor<3x1xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
