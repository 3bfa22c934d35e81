// RUN: pipecc-opt %s --pipecc-lower-graph-to-linalg | FileCheck %s

// Matmuls become named linalg ops on a zero-filled init, so that
// pipecc-matmul-to-blas finds them after bufferization.

// CHECK-LABEL: func.func @plain
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<2x4xf32>)
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<2x3xf32>, tensor<3x4xf32>) outs(%[[F]] : tensor<2x4xf32>)
func.func @plain(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = graph.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @lhs_t
// CHECK: linalg.matmul_transpose_a ins(%arg0, %arg1 : tensor<3x2xf32>, tensor<3x4xf32>)
func.func @lhs_t(%a: tensor<3x2xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = graph.matmul %a, %b transpose_lhs : tensor<3x2xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @rhs_t
// CHECK: linalg.matmul_transpose_b ins(%arg0, %arg1 : tensor<2x3xf32>, tensor<4x3xf32>)
func.func @rhs_t(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x4xf32> {
  %0 = graph.matmul %a, %b transpose_rhs : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// No named op transposes both: the lhs is transposed first.
// CHECK-LABEL: func.func @both_t
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg0 : tensor<3x2xf32>) outs(%{{.*}} : tensor<2x3xf32>) permutation = [1, 0]
// CHECK: linalg.matmul_transpose_b ins(%[[T]], %arg1 : tensor<2x3xf32>, tensor<4x3xf32>)
func.func @both_t(%a: tensor<3x2xf32>, %b: tensor<4x3xf32>) -> tensor<2x4xf32> {
  %0 = graph.matmul %a, %b transpose_lhs transpose_rhs : tensor<3x2xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// x @ W^T with a batched x: one matmul over the rows of all batches.
// CHECK-LABEL: func.func @rows
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<5x2x3xf32> into tensor<10x3xf32>
// CHECK: %[[P:.*]] = linalg.matmul_transpose_b ins(%[[X]], %arg1 : tensor<10x3xf32>, tensor<4x3xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [5, 2, 4] : tensor<10x4xf32> into tensor<5x2x4xf32>
// CHECK-NOT: linalg.broadcast
func.func @rows(%a: tensor<5x2x3xf32>, %b: tensor<4x3xf32>) -> tensor<5x2x4xf32> {
  %0 = graph.matmul %a, %b transpose_rhs : tensor<5x2x3xf32>, tensor<4x3xf32> -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}

// Equal batch dims: no broadcast, no reshape.
// CHECK-LABEL: func.func @same_batch
// CHECK-NOT: linalg.broadcast
// CHECK: linalg.batch_matmul_transpose_a ins(%arg0, %arg1 : tensor<5x3x2xf32>, tensor<5x3x4xf32>)
func.func @same_batch(%a: tensor<5x3x2xf32>, %b: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
  %0 = graph.matmul %a, %b transpose_lhs : tensor<5x3x2xf32>, tensor<5x3x4xf32> -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}

// Batch dims [2,1] and [3] broadcast to [2,3]: each operand is broadcast
// (the size-1 dim dropped first), then the batch dims collapse into one.
// CHECK-LABEL: func.func @batch_broadcast
// CHECK: %[[L:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1, 2], [3]] : tensor<2x1x2x3xf32> into tensor<2x2x3xf32>
// CHECK: %[[LB:.*]] = linalg.broadcast ins(%[[L]] : tensor<2x2x3xf32>) outs(%{{.*}} : tensor<2x3x2x3xf32>) dimensions = [1]
// CHECK: %[[LC:.*]] = tensor.collapse_shape %[[LB]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x2x3xf32> into tensor<6x2x3xf32>
// CHECK: %[[RB:.*]] = linalg.broadcast ins(%arg1 : tensor<3x3x4xf32>) outs(%{{.*}} : tensor<2x3x3x4xf32>) dimensions = [0]
// CHECK: %[[RC:.*]] = tensor.collapse_shape %[[RB]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x3x4xf32> into tensor<6x3x4xf32>
// CHECK: %[[P:.*]] = linalg.batch_matmul ins(%[[LC]], %[[RC]] : tensor<6x2x3xf32>, tensor<6x3x4xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 2, 4] : tensor<6x2x4xf32> into tensor<2x3x2x4xf32>
func.func @batch_broadcast(%a: tensor<2x1x2x3xf32>, %b: tensor<3x3x4xf32>) -> tensor<2x3x2x4xf32> {
  %0 = graph.matmul %a, %b : tensor<2x1x2x3xf32>, tensor<3x3x4xf32> -> tensor<2x3x2x4xf32>
  return %0 : tensor<2x3x2x4xf32>
}
