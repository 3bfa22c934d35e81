// pipecc-fuse-norms: decomposed layer and RMS norms become one op, with
// the following Mul and Add as scale and bias when those vary only along
// the normalised dimensions.
// RUN: pipecc-opt %s -split-input-file -pipecc-fuse-norms | FileCheck %s

// PyTorch's opset-13 LayerNorm (Pow 2 imports as a product).
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x6xf32>, %[[G:.*]]: tensor<6xf32>, %[[B:.*]]: tensor<6xf32>)
// CHECK-NEXT: %[[Y:.*]] = graph.layer_norm %[[X]] scale %[[G]] : tensor<6xf32> bias %[[B]] : tensor<6xf32> axis = 2 epsilon = 9.99{{[0-9]*}}E-6 : tensor<2x5x6xf32>
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm(%x: tensor<2x5x6xf32>, %g: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<2x5x6xf32> {
  %eps = graph.constant dense<1.0e-05> : tensor<f32>
  %m = graph.reduce_mean %x axes = [2] keep_dims : tensor<2x5x6xf32> -> tensor<2x5x1xf32>
  %c = graph.sub %x, %m : tensor<2x5x6xf32>, tensor<2x5x1xf32>
  %sq = graph.mul %c, %c : tensor<2x5x6xf32>, tensor<2x5x6xf32>
  %v = graph.reduce_mean %sq axes = [2] keep_dims : tensor<2x5x6xf32> -> tensor<2x5x1xf32>
  %ve = graph.add %v, %eps : tensor<2x5x1xf32>, tensor<f32>
  %sd = graph.sqrt %ve : tensor<2x5x1xf32>
  %n = graph.div %c, %sd : tensor<2x5x6xf32>, tensor<2x5x1xf32>
  %s = graph.mul %n, %g : tensor<2x5x6xf32>, tensor<6xf32>
  %y = graph.add %s, %b : tensor<2x5x6xf32>, tensor<6xf32>
  return %y : tensor<2x5x6xf32>
}

// -----

// Over the last two axes, with the scale of rank 3 (size-1 leading dim)
// and a bias that broadcasts along the row: both become row-shaped.
// CHECK-LABEL: func.func @two_axes
// CHECK: %[[G:.*]] = graph.reshape %arg1 : tensor<1x5x6xf32> -> tensor<5x6xf32>
// CHECK: %[[B1:.*]] = graph.reshape %arg2 : tensor<6xf32> -> tensor<1x6xf32>
// CHECK: %[[B:.*]] = graph.broadcast %[[B1]] : tensor<1x6xf32> -> tensor<5x6xf32>
// CHECK: graph.layer_norm %arg0 scale %[[G]] : tensor<5x6xf32> bias %[[B]] : tensor<5x6xf32> axis = 1
func.func @two_axes(%x: tensor<2x5x6xf32>, %g: tensor<1x5x6xf32>, %b: tensor<6xf32>) -> tensor<2x5x6xf32> {
  %eps = graph.constant dense<1.0e-05> : tensor<1xf32>
  %m = graph.reduce_mean %x axes = [2, 1] keep_dims : tensor<2x5x6xf32> -> tensor<2x1x1xf32>
  %c = graph.sub %x, %m : tensor<2x5x6xf32>, tensor<2x1x1xf32>
  %sq = graph.mul %c, %c : tensor<2x5x6xf32>, tensor<2x5x6xf32>
  %v = graph.reduce_mean %sq axes = [1, 2] keep_dims : tensor<2x5x6xf32> -> tensor<2x1x1xf32>
  %ve = graph.add %eps, %v : tensor<1xf32>, tensor<2x1x1xf32>
  %sd = graph.sqrt %ve : tensor<2x1x1xf32>
  %n = graph.div %c, %sd : tensor<2x5x6xf32>, tensor<2x1x1xf32>
  %s = graph.mul %g, %n : tensor<1x5x6xf32>, tensor<2x5x6xf32>
  %y = graph.add %s, %b : tensor<2x5x6xf32>, tensor<6xf32>
  return %y : tensor<2x5x6xf32>
}

// -----

// LLaMA's RMSNorm: Pow 2, ReduceMean, Add eps, Sqrt, Reciprocal (1 / x),
// Mul, then the weight on the left.
// CHECK-LABEL: func.func @rms_norm
// CHECK-NEXT: %[[Y:.*]] = graph.rms_norm %arg0 scale %arg1 : tensor<6xf32> axis = 2 epsilon = 9.99{{[0-9]*}}E-7 : tensor<2x5x6xf32>
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm(%x: tensor<2x5x6xf32>, %w: tensor<6xf32>) -> tensor<2x5x6xf32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %eps = graph.constant dense<1.0e-06> : tensor<f32>
  %sq = graph.mul %x, %x : tensor<2x5x6xf32>, tensor<2x5x6xf32>
  %v = graph.reduce_mean %sq axes = [2] keep_dims : tensor<2x5x6xf32> -> tensor<2x5x1xf32>
  %ve = graph.add %v, %eps : tensor<2x5x1xf32>, tensor<f32>
  %sd = graph.sqrt %ve : tensor<2x5x1xf32>
  %r = graph.div %one, %sd : tensor<f32>, tensor<2x5x1xf32>
  %n = graph.mul %x, %r : tensor<2x5x6xf32>, tensor<2x5x1xf32>
  %y = graph.mul %w, %n : tensor<6xf32>, tensor<2x5x6xf32>
  return %y : tensor<2x5x6xf32>
}

// -----

// x / sqrt(mean(x^2) + eps) without a weight: an RMS norm without scale.
// CHECK-LABEL: func.func @rms_norm_div
// CHECK-NEXT: graph.rms_norm %arg0 axis = 1 epsilon
// CHECK-NEXT: return
func.func @rms_norm_div(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %eps = graph.constant dense<1.0e-06> : tensor<f32>
  %sq = graph.mul %x, %x : tensor<4x6xf32>, tensor<4x6xf32>
  %v = graph.reduce_mean %sq axes = [1] keep_dims : tensor<4x6xf32> -> tensor<4x1xf32>
  %ve = graph.add %v, %eps : tensor<4x1xf32>, tensor<f32>
  %sd = graph.sqrt %ve : tensor<4x1xf32>
  %n = graph.div %x, %sd : tensor<4x6xf32>, tensor<4x1xf32>
  return %n : tensor<4x6xf32>
}

// -----

// An intermediate read outside the pattern (the mean) keeps it unfused;
// a "scale" that differs per row is not a scale.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: graph.layer_norm
// CHECK: graph.rms_norm %arg0 axis = 1
// CHECK-NEXT: graph.mul %{{.*}}, %arg1
// CHECK-NOT: graph.layer_norm
func.func @not_fused(%x: tensor<4x6xf32>, %w: tensor<4x1xf32>) -> (tensor<4x6xf32>, tensor<4x1xf32>, tensor<4x6xf32>) {
  %eps = graph.constant dense<1.0e-05> : tensor<f32>
  %m = graph.reduce_mean %x axes = [1] keep_dims : tensor<4x6xf32> -> tensor<4x1xf32>
  %c = graph.sub %x, %m : tensor<4x6xf32>, tensor<4x1xf32>
  %sq = graph.mul %c, %c : tensor<4x6xf32>, tensor<4x6xf32>
  %v = graph.reduce_mean %sq axes = [1] keep_dims : tensor<4x6xf32> -> tensor<4x1xf32>
  %ve = graph.add %v, %eps : tensor<4x1xf32>, tensor<f32>
  %sd = graph.sqrt %ve : tensor<4x1xf32>
  %n = graph.div %c, %sd : tensor<4x6xf32>, tensor<4x1xf32>
  %sq2 = graph.mul %x, %x : tensor<4x6xf32>, tensor<4x6xf32>
  %v2 = graph.reduce_mean %sq2 axes = [1] keep_dims : tensor<4x6xf32> -> tensor<4x1xf32>
  %ve2 = graph.add %v2, %eps : tensor<4x1xf32>, tensor<f32>
  %sd2 = graph.sqrt %ve2 : tensor<4x1xf32>
  %n2 = graph.div %x, %sd2 : tensor<4x6xf32>, tensor<4x1xf32>
  %s2 = graph.mul %n2, %w : tensor<4x6xf32>, tensor<4x1xf32>
  return %n, %m, %s2 : tensor<4x6xf32>, tensor<4x1xf32>, tensor<4x6xf32>
}
