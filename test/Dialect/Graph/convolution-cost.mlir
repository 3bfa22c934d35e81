// RUN: pipecc-opt %s -test-graph-cost -o /dev/null | FileCheck %s

// CHECK-LABEL: cost of @cnn
func.func @cnn(%x: tensor<2x4x9x8xf32>, %w: tensor<6x2x3x3xf32>, %dy: tensor<2x6x4x8xf32>, %p: tensor<2x4x5x4xf32>) {
  // 2 * (2*6*4*8 outputs) * (2 channels per group * 3*3 taps); reads
  // (576 + 108) * 4 bytes, writes 384 * 4.
  // CHECK-NEXT: graph.conv: flops=13824 transcendentals=0 read=2736 written=1536
  %y = graph.conv %x, %w strides = [2, 1] pads = [1, 1, 0, 1] dilations = [1, 1] group = 2 : tensor<2x4x9x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x4x8xf32>
  // Both gradients do the conv's multiply-adds.
  // CHECK-NEXT: graph.conv_input_grad: flops=13824
  %dx = graph.conv_input_grad %dy, %w strides = [2, 1] pads = [1, 1, 0, 1] dilations = [1, 1] group = 2 : tensor<2x6x4x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x8xf32>
  // CHECK-NEXT: graph.conv_weight_grad: flops=13824
  %dw = graph.conv_weight_grad %x, %dy strides = [2, 1] pads = [1, 1, 0, 1] dilations = [1, 1] group = 2 : tensor<2x4x9x8xf32>, tensor<2x6x4x8xf32> -> tensor<6x2x3x3xf32>
  // One comparison per (pooled element, tap): 160 * 4; the gradient finds
  // the maxima again and adds: twice that.
  // CHECK-NEXT: graph.max_pool: flops=640 transcendentals=0 read=2304 written=640
  %m = graph.max_pool %x kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] ceil_mode : tensor<2x4x9x8xf32> -> tensor<2x4x5x4xf32>
  // CHECK-NEXT: graph.max_pool_grad: flops=1280
  %dm = graph.max_pool_grad %x, %p kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] ceil_mode : tensor<2x4x9x8xf32>, tensor<2x4x5x4xf32>
  // 160 * (9 additions + 1 division).
  // CHECK-NEXT: graph.avg_pool: flops=1600
  %a = graph.avg_pool %x kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 0] dilations = [1, 1] count_include_pad : tensor<2x4x9x8xf32> -> tensor<2x4x5x4xf32>
  // CHECK-NEXT: graph.avg_pool_grad: flops=1600
  %da = graph.avg_pool_grad %p kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 0] dilations = [1, 1] : tensor<2x4x5x4xf32> -> tensor<2x4x9x8xf32>
  return
}
