// RUN: pipecc-opt %s | pipecc-opt | FileCheck %s
// RUN: pipecc-opt %s --mlir-print-op-generic | pipecc-opt | FileCheck %s

// CHECK-LABEL: func.func @mlp
func.func @mlp(%x: tensor<16x64xf32> {graph.input = "x"},
               %labels: tensor<16xi64> {graph.input = "labels"})
    -> (tensor<f32> {graph.output = "loss"}) {
  // CHECK: %[[W:.*]] = graph.param "layers.0.weight" trainable : tensor<256x64xf32>
  %w = graph.param "layers.0.weight" trainable : tensor<256x64xf32>
  // CHECK: %[[B:.*]] = graph.param "layers.0.bias" trainable : tensor<256xf32> = dense<1.000000e+00>
  %b = graph.param "layers.0.bias" trainable : tensor<256xf32> = dense<1.0>
  // CHECK: graph.matmul %{{.*}}, %[[W]] transpose_rhs : tensor<16x64xf32>, tensor<256x64xf32> -> tensor<16x256xf32>
  %h = graph.matmul %x, %w transpose_rhs : tensor<16x64xf32>, tensor<256x64xf32> -> tensor<16x256xf32>
  // CHECK: graph.add %{{.*}}, %[[B]] : tensor<16x256xf32>, tensor<256xf32>
  %hb = graph.add %h, %b : tensor<16x256xf32>, tensor<256xf32>
  // CHECK: graph.relu %{{.*}} : tensor<16x256xf32>
  %r = graph.relu %hb : tensor<16x256xf32>
  %w2 = graph.param "layers.1.weight" trainable : tensor<256x10xf32>
  %logits = graph.matmul %r, %w2 : tensor<16x256xf32>, tensor<256x10xf32> -> tensor<16x10xf32>
  // CHECK: graph.cross_entropy %{{.*}}, %{{.*}} {ignore_index = -100 : i64} : tensor<16x10xf32>, tensor<16xi64> -> tensor<f32>
  %loss = graph.cross_entropy %logits, %labels {ignore_index = -100 : i64} : tensor<16x10xf32>, tensor<16xi64> -> tensor<f32>
  return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @every_op
func.func @every_op(%a: tensor<2x3x4xf32>, %b: tensor<4xf32>, %c: tensor<2x4x5xf32>) -> tensor<f32> {
  // CHECK: graph.constant dense<[4, 6]> : tensor<2xi64>
  %shape = graph.constant dense<[4, 6]> : tensor<2xi64>
  // CHECK: graph.sub {{.*}} : tensor<2x3x4xf32>, tensor<4xf32>
  %0 = graph.sub %a, %b : tensor<2x3x4xf32>, tensor<4xf32>
  // CHECK: graph.mul
  %1 = graph.mul %0, %a : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  // CHECK: graph.div
  %2 = graph.div %1, %b : tensor<2x3x4xf32>, tensor<4xf32>
  // CHECK: graph.tanh
  %3 = graph.tanh %2 : tensor<2x3x4xf32>
  // CHECK: graph.exp
  %4 = graph.exp %3 : tensor<2x3x4xf32>
  // CHECK: graph.log
  %5 = graph.log %4 : tensor<2x3x4xf32>
  // CHECK: graph.neg
  %6 = graph.neg %5 : tensor<2x3x4xf32>
  // CHECK: graph.matmul {{.*}} : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
  %7 = graph.matmul %6, %c : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
  // CHECK: graph.matmul {{.*}} transpose_lhs : tensor<2x4x3xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
  %t = graph.transpose %6 perm = [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %8 = graph.matmul %t, %c transpose_lhs : tensor<2x4x3xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
  // CHECK: graph.softmax {{.*}} axis = 2 : tensor<2x3x5xf32>
  %9 = graph.softmax %8 axis = 2 : tensor<2x3x5xf32>
  // CHECK: graph.reduce_sum {{.*}} axes = [2] keep_dims : tensor<2x3x5xf32> -> tensor<2x3x1xf32>
  %10 = graph.reduce_sum %9 axes = [2] keep_dims : tensor<2x3x5xf32> -> tensor<2x3x1xf32>
  // CHECK: graph.reduce_max {{.*}} axes = [0, 2] : tensor<2x3x5xf32> -> tensor<3xf32>
  %11 = graph.reduce_max %7 axes = [0, 2] : tensor<2x3x5xf32> -> tensor<3xf32>
  // CHECK: graph.reshape {{.*}} : tensor<2x3x5xf32> -> tensor<6x5xf32>
  %12 = graph.reshape %9 : tensor<2x3x5xf32> -> tensor<6x5xf32>
  %13 = graph.reduce_mean %12 axes = [0] : tensor<6x5xf32> -> tensor<5xf32>
  %14 = graph.reshape %13 : tensor<5xf32> -> tensor<1x5xf32>
  // CHECK: graph.mse_loss {{.*}} : tensor<1x5xf32>, tensor<1x5xf32> -> tensor<f32>
  %15 = graph.mse_loss %14, %14 : tensor<1x5xf32>, tensor<1x5xf32> -> tensor<f32>
  return %15 : tensor<f32>
}
