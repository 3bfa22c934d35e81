// RUN: pipecc-opt %s -split-input-file -pipecc-autodiff -verify-diagnostics | FileCheck %s

// A two-layer perceptron: each forward op gets an id, each backward op the id
// of the forward op it differentiates, and @main returns the loss and one
// gradient per trainable parameter, named by the parameter.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<f32> {graph.output = "loss"}, tensor<16x8xf32> {graph.grad = "w0"}, tensor<16xf32> {graph.grad = "b0"}, tensor<3x16xf32> {graph.grad = "w1"})
func.func @main(%x: tensor<4x8xf32> {graph.input = "x"}, %labels: tensor<4xi64> {graph.input = "labels"}) -> (tensor<f32> {graph.output = "loss"}) {
  %w0 = graph.param "w0" trainable : tensor<16x8xf32>
  %b0 = graph.param "b0" trainable : tensor<16xf32>
  %w1 = graph.param "w1" trainable : tensor<3x16xf32>
  // CHECK: %[[H:.*]] = graph.matmul %arg0, %{{.*}} transpose_rhs {graph.op_id = 3 : i64}
  %h = graph.matmul %x, %w0 transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  // CHECK: %[[HB:.*]] = graph.add %[[H]], %{{.*}} {graph.op_id = 4 : i64}
  %hb = graph.add %h, %b0 : tensor<4x16xf32>, tensor<16xf32>
  // CHECK: %[[R:.*]] = graph.relu %[[HB]] {graph.op_id = 5 : i64}
  %r = graph.relu %hb : tensor<4x16xf32>
  // CHECK: %[[L:.*]] = graph.matmul %[[R]], %[[W1:.*]] transpose_rhs {graph.op_id = 6 : i64}
  %l = graph.matmul %r, %w1 transpose_rhs : tensor<4x16xf32>, tensor<3x16xf32> -> tensor<4x3xf32>
  // CHECK: %[[LOSS:.*]] = graph.cross_entropy %[[L]], %arg1 {graph.op_id = 7 : i64}
  %loss = graph.cross_entropy %l, %labels : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  // The seed, then the loss's rule.
  // CHECK: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32> {graph.grad_of = 7 : i64}
  // CHECK: %[[DL:.*]] = graph.cross_entropy_grad %[[L]], %arg1, %[[ONE]] {graph.grad_of = 7 : i64}
  // dR = dL W1 and dW1 = dL^T R, as matmuls with transpose flags.
  // CHECK: %[[DR:.*]] = graph.matmul %[[DL]], %[[W1]] {graph.grad_of = 6 : i64}
  // CHECK: %[[DW1:.*]] = graph.matmul %[[DL]], %[[R]] transpose_lhs {graph.grad_of = 6 : i64}
  // CHECK: %[[DHB:.*]] = graph.relu_grad %[[R]], %[[DR]] {graph.grad_of = 5 : i64}
  // The bias gradient sums the broadcast batch dimension away.
  // CHECK: %[[DB0:.*]] = graph.reduce_sum %[[DHB]] axes = [0] {graph.grad_of = 4 : i64}
  // No gradient for the input x is built: only dW0.
  // CHECK: %[[DW0:.*]] = graph.matmul %[[DHB]], %arg0 transpose_lhs {graph.grad_of = 3 : i64}
  // CHECK-NOT: graph.matmul
  // CHECK: return %[[LOSS]], %[[DW0]], %[[DB0]], %[[DW1]]
  return %loss : tensor<f32>
}

// -----

// A value used twice gets the sum of both contributions.
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.output = "loss"}) {
  %w = graph.param "w" trainable : tensor<4xf32>
  %y = graph.mul %w, %w : tensor<4xf32>, tensor<4xf32>
  %loss = graph.mse_loss %y, %x : tensor<4xf32>, tensor<4xf32> -> tensor<f32>
  // CHECK: %[[A:.*]] = graph.mul %[[DY:.*]], %[[W:.*]] {graph.grad_of = 1 : i64}
  // CHECK: %[[B:.*]] = graph.mul %[[DY]], %[[W]] {graph.grad_of = 1 : i64}
  // CHECK: %[[SUM:.*]] = graph.add %[[A]], %[[B]] {graph.grad_of = 0 : i64}
  // CHECK: return %{{.*}}, %[[SUM]]
  return %loss : tensor<f32>
}

// -----

// A projection split into three side-by-side slices (q, k, v): the slices'
// gradients, zero-pads into the projection's shape, add up to their
// concatenation, in column order whatever order they arrive in. Slices that
// leave a gap stay a sum of pads (next case).
// CHECK-LABEL: func.func @main
// CHECK: %[[DH:.*]] = graph.concat %{{.*}}, %{{.*}}, %{{.*}} axis = 1 {graph.grad_of = 1 : i64} : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x12xf32>
// CHECK-NOT: graph.pad
// CHECK: graph.matmul %[[DH]], %arg0 transpose_lhs
func.func @main(%x: tensor<4x8xf32> {graph.input = "x"}) -> (tensor<f32> {graph.output = "loss"}) {
  %w = graph.param "w" trainable : tensor<12x8xf32>
  %h = graph.matmul %x, %w transpose_rhs : tensor<4x8xf32>, tensor<12x8xf32> -> tensor<4x12xf32>
  %q = graph.slice %h offsets = [0, 0] sizes = [4, 4] : tensor<4x12xf32> -> tensor<4x4xf32>
  %k = graph.slice %h offsets = [0, 4] sizes = [4, 4] : tensor<4x12xf32> -> tensor<4x4xf32>
  %v = graph.slice %h offsets = [0, 8] sizes = [4, 4] : tensor<4x12xf32> -> tensor<4x4xf32>
  %a = graph.mul %q, %k : tensor<4x4xf32>, tensor<4x4xf32>
  %b = graph.mul %a, %v : tensor<4x4xf32>, tensor<4x4xf32>
  %loss = graph.reduce_sum %b axes = [0, 1] : tensor<4x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK: %[[P0:.*]] = graph.pad %{{.*}} low = [0, 6]
// CHECK: %[[P1:.*]] = graph.pad %{{.*}} low = [0, 0]
// CHECK: graph.add %[[P0]], %[[P1]]
// CHECK-NOT: graph.concat
func.func @main(%x: tensor<4x8xf32> {graph.input = "x"}) -> (tensor<f32> {graph.output = "loss"}) {
  %w = graph.param "w" trainable : tensor<12x8xf32>
  %h = graph.matmul %x, %w transpose_rhs : tensor<4x8xf32>, tensor<12x8xf32> -> tensor<4x12xf32>
  %q = graph.slice %h offsets = [0, 0] sizes = [4, 4] : tensor<4x12xf32> -> tensor<4x4xf32>
  %v = graph.slice %h offsets = [0, 6] sizes = [4, 4] : tensor<4x12xf32> -> tensor<4x4xf32>
  %a = graph.mul %q, %v : tensor<4x4xf32>, tensor<4x4xf32>
  %loss = graph.reduce_sum %a axes = [0, 1] : tensor<4x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

func.func @main(%x: tensor<4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.output = "loss"}) {
  %w = graph.param "w" trainable : tensor<4xf32>
  %y = graph.mul %w, %x : tensor<4xf32>, tensor<4xf32>
  // expected-error @+1 {{cannot differentiate through 'graph.reduce_max': it has no gradient rule}}
  %loss = graph.reduce_max %y axes = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// expected-error @+1 {{the loss does not depend on any trainable parameter}}
func.func @main(%x: tensor<4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.output = "loss"}) {
  %loss = graph.mse_loss %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// expected-error @+1 {{the model has no scalar floating-point output to differentiate; attach a loss with --loss}}
func.func @main(%x: tensor<4xf32> {graph.input = "x"}) -> (tensor<4xf32> {graph.output = "y"}) {
  %w = graph.param "w" trainable : tensor<4xf32>
  %y = graph.mul %w, %x : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}
