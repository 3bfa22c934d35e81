// RUN: pipecc-opt %s --pipecc-lower-graph-to-linalg | FileCheck %s

// A conv is im2col (a parallel generic over [G, C/G, k..., N, o...],
// collapsed to [G, C/G*k, N*o]) and one batched matmul with the weight as
// [G, O/G, C/G*k], whose [G, O/G, N, o] result is transposed to [N, O, o].
// CHECK-LABEL: func.func @conv
// CHECK: %[[COLS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<2x2x3x3x2x4x8xf32>)
// CHECK: tensor.extract %arg0
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[COLS]] {{.*}} into tensor<2x18x64xf32>
// CHECK: %[[W:.*]] = tensor.expand_shape %{{.*}} into tensor<2x3x18xf32>
// CHECK: %[[P:.*]] = linalg.batch_matmul ins(%[[W]], %[[C]] : tensor<2x3x18xf32>, tensor<2x18x64xf32>)
// CHECK: %[[PE:.*]] = tensor.expand_shape %[[P]] {{.*}} into tensor<2x3x2x32xf32>
// CHECK: linalg.transpose ins(%[[PE]] : tensor<2x3x2x32xf32>) outs(%{{.*}} : tensor<2x2x3x32xf32>) permutation = [2, 0, 1, 3]
func.func @conv(%x: tensor<2x4x9x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x6x4x8xf32> {
  %y = graph.conv %x, %w strides = [2, 1] pads = [1, 1, 0, 1] dilations = [1, 1] group = 2 : tensor<2x4x9x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x4x8xf32>
  return %y : tensor<2x6x4x8xf32>
}

// The weight gradient is the result gradient as [G, O/G, N*o] times the
// columns, transposed.
// CHECK-LABEL: func.func @conv_weight_grad
// CHECK: linalg.batch_matmul_transpose_b ins(%{{.*}}, %{{.*}} : tensor<2x3x64xf32>, tensor<2x18x64xf32>) outs(%{{.*}} : tensor<2x3x18xf32>)
func.func @conv_weight_grad(%x: tensor<2x4x9x8xf32>, %dy: tensor<2x6x4x8xf32>) -> tensor<6x2x3x3xf32> {
  %dw = graph.conv_weight_grad %x, %dy strides = [2, 1] pads = [1, 1, 0, 1] dilations = [1, 1] group = 2 : tensor<2x4x9x8xf32>, tensor<2x6x4x8xf32> -> tensor<6x2x3x3xf32>
  return %dw : tensor<6x2x3x3xf32>
}

// The input gradient is the transposed weight times the result gradient,
// folded back by col2im: a generic over the input with the taps as
// reduction loops.
// CHECK-LABEL: func.func @conv_input_grad
// CHECK: linalg.batch_matmul_transpose_a ins(%{{.*}}, %{{.*}} : tensor<2x3x18xf32>, tensor<2x3x64xf32>) outs(%{{.*}} : tensor<2x18x64xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<3x3xf32>) outs(%{{.*}} : tensor<2x4x9x8xf32>)
func.func @conv_input_grad(%dy: tensor<2x6x4x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x4x9x8xf32> {
  %dx = graph.conv_input_grad %dy, %w strides = [2, 1] pads = [1, 1, 0, 1] dilations = [1, 1] group = 2 : tensor<2x6x4x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x8xf32>
  return %dx : tensor<2x4x9x8xf32>
}

// Pools reduce over the taps; max pooling's gradient first finds each
// window's first maximum (an i64 tap number) and then gathers, for each
// input position, the gradients of the windows whose winner it is.
// CHECK-LABEL: func.func @pools
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<3x3xf32>) outs(%{{.*}} : tensor<2x4x5x4xf32>)
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<2x4x5x4xf32>, tensor<2x4x5x4xi64>)
// CHECK: arith.cmpf ogt
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4x9x8xf32>)
// Average pooling divides the window sums by constant counts.
// CHECK: arith.constant dense<{{.*}}> : tensor<5x4xf32>
// CHECK: arith.divf
func.func @pools(%x: tensor<2x4x9x8xf32>, %dy: tensor<2x4x5x4xf32>) -> (tensor<2x4x5x4xf32>, tensor<2x4x9x8xf32>, tensor<2x4x5x4xf32>) {
  %m = graph.max_pool %x kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] : tensor<2x4x9x8xf32> -> tensor<2x4x5x4xf32>
  %dm = graph.max_pool_grad %x, %dy kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] : tensor<2x4x9x8xf32>, tensor<2x4x5x4xf32>
  %a = graph.avg_pool %x kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] : tensor<2x4x9x8xf32> -> tensor<2x4x5x4xf32>
  return %m, %dm, %a : tensor<2x4x5x4xf32>, tensor<2x4x9x8xf32>, tensor<2x4x5x4xf32>
}
