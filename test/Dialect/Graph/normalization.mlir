// The fused norms, the new elementwise and loss ops and gather_nd print and parse
// back, and their verifiers name what is wrong.
// RUN: pipecc-opt %s -split-input-file | pipecc-opt -split-input-file | FileCheck %s
// RUN: pipecc-opt %s -split-input-file -test-graph-cost -o /dev/null | FileCheck %s --check-prefix=COST

// CHECK-LABEL: func.func @norms
// CHECK: graph.layer_norm %arg0 scale %arg1 : tensor<6xf32> bias %arg2 : tensor<6xf32> axis = 2 epsilon = 1.000000e-05 : tensor<2x5x6xf32>
// CHECK: graph.layer_norm %arg0 axis = 1 epsilon = 0.000000e+00 : tensor<2x5x6xf32>
// CHECK: graph.rms_norm %arg0 scale %arg1 : tensor<6xf32> axis = 2 epsilon = 9.9999999999999995E-7 : tensor<2x5x6xf32>
// CHECK: graph.layer_norm_grad %arg0, %arg0 scale %arg1 : tensor<6xf32> axis = 2 epsilon = 1.000000e-05 : tensor<2x5x6xf32>
// CHECK: graph.rms_norm_grad %arg0, %arg0 axis = 2 epsilon = 1.000000e-05 : tensor<2x5x6xf32>
// COST-LABEL: cost of @norms
// 8 flops per element (60), one square root per row (10).
// COST-NEXT: graph.layer_norm: flops=480 transcendentals=10 read=288 written=240
// COST-NEXT: graph.layer_norm: flops=480 transcendentals=2 read=240 written=240
// COST-NEXT: graph.rms_norm: flops=240 transcendentals=10 read=264 written=240
// COST-NEXT: graph.layer_norm_grad: flops=840 transcendentals=10
// COST-NEXT: graph.rms_norm_grad: flops=540 transcendentals=10
func.func @norms(%x: tensor<2x5x6xf32>, %g: tensor<6xf32>, %b: tensor<6xf32>) {
  %0 = graph.layer_norm %x scale %g : tensor<6xf32> bias %b : tensor<6xf32> axis = 2 epsilon = 1.0e-05 : tensor<2x5x6xf32>
  %1 = graph.layer_norm %x axis = 1 epsilon = 0.0 : tensor<2x5x6xf32>
  %2 = graph.rms_norm %x scale %g : tensor<6xf32> axis = 2 epsilon = 1.0e-06 : tensor<2x5x6xf32>
  %3 = graph.layer_norm_grad %x, %x scale %g : tensor<6xf32> axis = 2 epsilon = 1.0e-05 : tensor<2x5x6xf32>
  %4 = graph.rms_norm_grad %x, %x axis = 2 epsilon = 1.0e-05 : tensor<2x5x6xf32>
  return
}

// -----

// CHECK-LABEL: func.func @activations
// CHECK: graph.sigmoid %arg0 : tensor<4x3xf32>
// CHECK: graph.sin %arg0 : tensor<4x3xf32>
// CHECK: graph.cos %arg0 : tensor<4x3xf32>
// CHECK: graph.log_softmax %arg0 axis = 1 : tensor<4x3xf32>
// CHECK: graph.nll_loss %{{.*}}, %arg1 reduction = "mean" ignore_index = -100 : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
// CHECK: graph.nll_loss %{{.*}}, %arg1 reduction = "none" : tensor<4x3xf32>, tensor<4xi64> -> tensor<4xf32>
// CHECK: graph.nll_loss_grad %arg1, %{{.*}} reduction = "none" : tensor<4xi64>, tensor<4xf32> -> tensor<4x3xf32>
// COST-LABEL: cost of @activations
// COST-NEXT: graph.sigmoid: flops=24 transcendentals=12
// COST-NEXT: graph.sin: flops=0 transcendentals=12
// COST-NEXT: graph.cos: flops=0 transcendentals=12
// COST-NEXT: graph.log_softmax: flops=48 transcendentals=12
// COST-NEXT: graph.nll_loss: flops=4 transcendentals=0 read=48 written=4
func.func @activations(%x: tensor<4x3xf32>, %labels: tensor<4xi64>) {
  %0 = graph.sigmoid %x : tensor<4x3xf32>
  %1 = graph.sin %x : tensor<4x3xf32>
  %2 = graph.cos %x : tensor<4x3xf32>
  %3 = graph.log_softmax %x axis = 1 : tensor<4x3xf32>
  %4 = graph.nll_loss %3, %labels reduction = "mean" ignore_index = -100 : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  %5 = graph.nll_loss %3, %labels reduction = "none" : tensor<4x3xf32>, tensor<4xi64> -> tensor<4xf32>
  %6 = graph.nll_loss_grad %labels, %5 reduction = "none" : tensor<4xi64>, tensor<4xf32> -> tensor<4x3xf32>
  return
}

// -----

// CHECK-LABEL: func.func @gather_nd
// CHECK: graph.gather_nd %arg0, %arg1 batch_dims = 0 : tensor<4x5x6xf32>, tensor<3x2xi64> -> tensor<3x6xf32>
// CHECK: graph.gather_nd %arg2, %arg3 batch_dims = 1 : tensor<4x5xi1>, tensor<4x2x1xi64> -> tensor<4x2xi1>
// CHECK: graph.gather_nd_grad %arg1, %{{.*}} batch_dims = 0 : tensor<3x2xi64>, tensor<3x6xf32> -> tensor<4x5x6xf32>
// COST-LABEL: cost of @gather_nd
// COST-NEXT: graph.gather_nd: flops=0 transcendentals=0 read=528 written=72
func.func @gather_nd(%x: tensor<4x5x6xf32>, %i: tensor<3x2xi64>, %m: tensor<4x5xi1>, %j: tensor<4x2x1xi64>) {
  %0 = graph.gather_nd %x, %i batch_dims = 0 : tensor<4x5x6xf32>, tensor<3x2xi64> -> tensor<3x6xf32>
  %1 = graph.gather_nd %m, %j batch_dims = 1 : tensor<4x5xi1>, tensor<4x2x1xi64> -> tensor<4x2xi1>
  %2 = graph.gather_nd_grad %i, %0 batch_dims = 0 : tensor<3x2xi64>, tensor<3x6xf32> -> tensor<4x5x6xf32>
  return
}
