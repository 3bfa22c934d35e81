// Shapes and attributes of the transformer ops are checked where they are
// built.
// RUN: pipecc-opt %s -split-input-file -verify-diagnostics

func.func @slice_outside(%x: tensor<2x6xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{box [4, 8) of dimension 1 is outside its size 6}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.slice %x offsets = [0, 4] sizes = [2, 4] : tensor<2x6xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @slice_rank(%x: tensor<2x6xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{expected one offset and size per dimension of a rank-2 tensor, got 1 offsets and 1 sizes}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.slice %x offsets = [0] sizes = [2] : tensor<2x6xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @pad_outside(%x: tensor<2x4xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{box [3, 7) of dimension 1 is outside its size 6}}
  %y = graph.pad %x low = [0, 3] : tensor<2x4xf32> -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

func.func @where_condition(%c: tensor<3xi1>, %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %z = graph.constant dense<0.0> : tensor<f32>
  // expected-error @+1 {{condition 'tensor<3xi1>' does not broadcast with 'tensor<2x4xf32>'}}
  %y = graph.where %c, %z, %x : tensor<3xi1>, tensor<f32>, tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @gather_axis(%t: tensor<10x6xf32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.gather %t, %i axis = 2 : tensor<10x6xf32>, tensor<3xi64> -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @gather_grad_shape(%i: tensor<3xi64>, %g: tensor<4x6xf32>) -> tensor<10x6xf32> {
  // expected-error @+1 {{result_grad 'tensor<4x6xf32>' is not the gather of 'tensor<10x6xf32>' by 'tensor<3xi64>'}}
  %y = graph.gather_grad %i, %g axis = 0 : tensor<3xi64>, tensor<4x6xf32> -> tensor<10x6xf32>
  return %y : tensor<10x6xf32>
}
