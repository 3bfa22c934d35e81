// RUN: pipecc-opt %s -pipecc-autodiff | FileCheck %s

// Conv's input gradient is graph.conv_input_grad (a transposed convolution)
// and its weight gradient graph.conv_weight_grad, both under the conv's
// window; its bias, a broadcast add, gets the sum over batch and space. The
// pools' rules are their gradient ops under the same window; the first
// conv's input is a graph input, so no input gradient is built for it.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<f32> {graph.output = "loss"}, tensor<4x3x3x3xf32> {graph.grad = "w1"}, tensor<4x1x1xf32> {graph.grad = "b1"}, tensor<2x4x3x3xf32> {graph.grad = "w2"})
func.func @main(%x: tensor<2x3x8x8xf32> {graph.input = "x"}) -> (tensor<f32> {graph.output = "loss"}) {
  %w1 = graph.param "w1" trainable : tensor<4x3x3x3xf32>
  %b1 = graph.param "b1" trainable : tensor<4x1x1xf32>
  %w2 = graph.param "w2" trainable : tensor<2x4x3x3xf32>
  // CHECK: %[[Y:.*]] = graph.conv %arg0, %[[W1:.*]] strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] group = 1 {graph.op_id = 3 : i64}
  %y = graph.conv %x, %w1 strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] group = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  // CHECK: %[[YB:.*]] = graph.add %[[Y]]
  %yb = graph.add %y, %b1 : tensor<2x4x8x8xf32>, tensor<4x1x1xf32>
  // CHECK: %[[M:.*]] = graph.max_pool %[[YB]] kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] {graph.op_id = 5 : i64}
  %m = graph.max_pool %yb kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  // CHECK: %[[A:.*]] = graph.avg_pool %[[M]] kernel = [2, 2] strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] {graph.op_id = 6 : i64}
  %a = graph.avg_pool %m kernel = [2, 2] strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] : tensor<2x4x4x4xf32> -> tensor<2x4x3x3xf32>
  // CHECK: %[[C:.*]] = graph.conv %[[A]], %[[W2:.*]] strides = [2, 2] pads = [1, 1, 0, 0] dilations = [1, 1] group = 1 {graph.op_id = 7 : i64}
  %c = graph.conv %a, %w2 strides = [2, 2] pads = [1, 1, 0, 0] dilations = [1, 1] group = 1 : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x2x1x1xf32>
  %l = graph.reduce_sum %c axes = [0, 1, 2, 3] : tensor<2x2x1x1xf32> -> tensor<f32>
  // CHECK: %[[DC:.*]] = graph.broadcast
  // CHECK: %[[DA:.*]] = graph.conv_input_grad %[[DC]], %[[W2]] strides = [2, 2] pads = [1, 1, 0, 0] dilations = [1, 1] group = 1 {graph.grad_of = 7 : i64} : tensor<2x2x1x1xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  // CHECK: %[[DW2:.*]] = graph.conv_weight_grad %[[A]], %[[DC]] strides = [2, 2] pads = [1, 1, 0, 0] dilations = [1, 1] group = 1 {graph.grad_of = 7 : i64} : tensor<2x4x3x3xf32>, tensor<2x2x1x1xf32> -> tensor<2x4x3x3xf32>
  // CHECK: %[[DM:.*]] = graph.avg_pool_grad %[[DA]] kernel = [2, 2] strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] {graph.grad_of = 6 : i64} : tensor<2x4x3x3xf32> -> tensor<2x4x4x4xf32>
  // CHECK: %[[DYB:.*]] = graph.max_pool_grad %[[YB]], %[[DM]] kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] {graph.grad_of = 5 : i64}
  // CHECK: %[[DB1:.*]] = graph.reduce_sum %[[DYB]] axes = [0, 2, 3] {graph.grad_of = 4 : i64}
  // CHECK: %[[DB1R:.*]] = graph.reshape %[[DB1]]
  // CHECK: %[[DW1:.*]] = graph.conv_weight_grad %arg0, %[[DYB]] strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] group = 1 {graph.grad_of = 3 : i64}
  // CHECK-NOT: graph.conv_input_grad
  // CHECK: return %{{.*}}, %[[DW1]], %[[DB1R]], %[[DW2]]
  return %l : tensor<f32>
}
