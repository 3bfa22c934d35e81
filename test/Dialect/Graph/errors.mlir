// RUN: pipecc-opt %s -split-input-file -verify-diagnostics

func.func @broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{shapes do not broadcast: 'tensor<2x3xf32>' and 'tensor<4xf32>'}}
  %0 = graph.add %a, %b : tensor<2x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @element_types_differ(%a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error @+1 {{operand element types differ}}
  %0 = graph.mul %a, %b : tensor<2xf32>, tensor<2xf16>
  return
}

// -----

func.func @dynamic_shape(%a: tensor<?x3xf32>) {
  // expected-error @+1 {{must be statically shaped tensor}}
  %0 = graph.relu %a : tensor<?x3xf32>
  return
}

// -----

func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{contracting dimensions differ: 3 (lhs) and 4 (rhs)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{operands must have rank 2 or more}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %a, %b : tensor<3xf32>, tensor<3x5xf32> -> tensor<5xf32>
  return
}

// -----

func.func @matmul_wrong_result(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x5xf32>' are incompatible with return type(s) of operation 'tensor<2x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %a, %b : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @reduce_axis_range(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.reduce_sum %a axes = [2] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @reduce_axis_repeated(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axis 1 is repeated}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.reduce_mean %a axes = [1, 1] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot reshape 'tensor<2x3xf32>' (6 elements) to 'tensor<7xf32>' (7 elements)}}
  %0 = graph.reshape %a : tensor<2x3xf32> -> tensor<7xf32>
  return
}

// -----

func.func @transpose_perm(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{permutation has 3 entries for a tensor of rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.transpose %a perm = [0, 1, 2] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.softmax %a axis = 2 : tensor<2x3xf32>
  return
}

// -----

func.func @cross_entropy_labels(%logits: tensor<4x10xf32>, %labels: tensor<5xi64>) {
  // expected-error @+2 {{labels of type 'tensor<5xi64>' do not match logits of type 'tensor<4x10xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.cross_entropy %logits, %labels : tensor<4x10xf32>, tensor<5xi64> -> tensor<f32>
  return
}

// -----

func.func @mse_types(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error @+2 {{prediction of type 'tensor<4xf32>' and target of type 'tensor<5xf32>' differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.mse_loss %a, %b : tensor<4xf32>, tensor<5xf32> -> tensor<f32>
  return
}

// -----

func.func @param_init_type() {
  // expected-error @+1 {{initial value of type 'tensor<3xf32>' does not match the parameter's type 'tensor<4xf32>'}}
  %0 = "graph.param"() {param_name = "w", init = dense<1.0> : tensor<3xf32>} : () -> tensor<4xf32>
  return
}

// -----

func.func @param_trainable_int() {
  // expected-error @+1 {{trainable parameter 'steps' must have a floating-point type}}
  %0 = graph.param "steps" trainable : tensor<1xi64>
  return
}

// -----

func.func @param_empty_name() {
  // expected-error @+1 {{needs a non-empty parameter name}}
  %0 = graph.param "" : tensor<1xf32>
  return
}
