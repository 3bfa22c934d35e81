// The convolution and pooling ops print and parse back, in custom and
// generic form.
// RUN: pipecc-opt %s | pipecc-opt | FileCheck %s
// RUN: pipecc-opt %s --mlir-print-op-generic | pipecc-opt | FileCheck %s

// CHECK-LABEL: func.func @cnn_ops
func.func @cnn_ops(%x: tensor<2x4x9x8xf32>, %w: tensor<6x2x3x3xf32>, %dy: tensor<2x6x4x8xf32>, %p: tensor<2x4x5x4xf32>) {
  // CHECK: graph.conv %{{.*}}, %{{.*}} strides = [2, 1] pads = [1, 1, 0, 1] dilations = [1, 1] group = 2 : tensor<2x4x9x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x4x8xf32>
  %y = graph.conv %x, %w strides = [2, 1] pads = [1, 1, 0, 1] dilations = [1, 1] group = 2 : tensor<2x4x9x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x4x8xf32>
  // CHECK: graph.conv_input_grad %{{.*}}, %{{.*}} strides = [2, 1] pads = [1, 1, 0, 1] dilations = [1, 1] group = 2 : tensor<2x6x4x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x8xf32>
  %dx = graph.conv_input_grad %dy, %w strides = [2, 1] pads = [1, 1, 0, 1] dilations = [1, 1] group = 2 : tensor<2x6x4x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x8xf32>
  // CHECK: graph.conv_weight_grad %{{.*}}, %{{.*}} strides = [2, 1] pads = [1, 1, 0, 1] dilations = [1, 1] group = 2 : tensor<2x4x9x8xf32>, tensor<2x6x4x8xf32> -> tensor<6x2x3x3xf32>
  %dw = graph.conv_weight_grad %x, %dy strides = [2, 1] pads = [1, 1, 0, 1] dilations = [1, 1] group = 2 : tensor<2x4x9x8xf32>, tensor<2x6x4x8xf32> -> tensor<6x2x3x3xf32>
  // CHECK: graph.max_pool %{{.*}} kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] ceil_mode : tensor<2x4x9x8xf32> -> tensor<2x4x5x4xf32>
  %m = graph.max_pool %x kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] ceil_mode : tensor<2x4x9x8xf32> -> tensor<2x4x5x4xf32>
  // CHECK: graph.max_pool_grad %{{.*}}, %{{.*}} kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] ceil_mode : tensor<2x4x9x8xf32>, tensor<2x4x5x4xf32>
  %dm = graph.max_pool_grad %x, %p kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] ceil_mode : tensor<2x4x9x8xf32>, tensor<2x4x5x4xf32>
  // CHECK: graph.avg_pool %{{.*}} kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 0] dilations = [1, 1] count_include_pad : tensor<2x4x9x8xf32> -> tensor<2x4x5x4xf32>
  %a = graph.avg_pool %x kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 0] dilations = [1, 1] count_include_pad : tensor<2x4x9x8xf32> -> tensor<2x4x5x4xf32>
  // CHECK: graph.avg_pool_grad %{{.*}} kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 0] dilations = [1, 1] : tensor<2x4x5x4xf32> -> tensor<2x4x9x8xf32>
  %da = graph.avg_pool_grad %p kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 0] dilations = [1, 1] : tensor<2x4x5x4xf32> -> tensor<2x4x9x8xf32>
  return
}
