// RUN: pipecc-opt %s -split-input-file -verify-diagnostics

func.func @axis(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'graph.layer_norm' op axis 2 is out of range for rank 2}}
  %y = graph.layer_norm %x axis = 2 epsilon = 1.0e-05 : tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

func.func @scale_shape(%x: tensor<2x6xf32>, %g: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'graph.rms_norm' op scale 'tensor<2x6xf32>' is not of the row type 'tensor<6xf32>'}}
  %y = graph.rms_norm %x scale %g : tensor<2x6xf32> axis = 1 epsilon = 1.0e-05 : tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

func.func @epsilon(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'graph.layer_norm' op epsilon -1.000000e+00 is not a finite non-negative number}}
  %y = graph.layer_norm %x axis = 1 epsilon = -1.0 : tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

func.func @bias_type(%x: tensor<2x6xf32>, %dy: tensor<2x6xf32>, %g: tensor<5xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'graph.layer_norm_grad' op scale 'tensor<5xf32>' is not of the row type 'tensor<6xf32>'}}
  %y = graph.layer_norm_grad %x, %dy scale %g : tensor<5xf32> axis = 1 epsilon = 1.0e-05 : tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

func.func @reduction(%x: tensor<4x3xf32>, %l: tensor<4xi64>) -> tensor<f32> {
  // expected-error @+1 {{'graph.nll_loss' op reduction 'avg' is not one of mean, sum, none}}
  %y = graph.nll_loss %x, %l reduction = "avg" : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @labels(%x: tensor<4x3xf32>, %l: tensor<3xi64>) -> tensor<f32> {
  // expected-error @+2 {{labels of type 'tensor<3xi64>' do not match input of type 'tensor<4x3xf32>': expected the input's shape without dimension 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.nll_loss %x, %l reduction = "mean" : tensor<4x3xf32>, tensor<3xi64> -> tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @grad_type(%l: tensor<4xi64>, %d: tensor<f32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.nll_loss_grad' op loss_grad 'tensor<f32>' is not of the loss's type 'tensor<4xf32>'}}
  %y = graph.nll_loss_grad %l, %d reduction = "none" : tensor<4xi64>, tensor<f32> -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

func.func @log_softmax_axis(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.log_softmax' op axis 2 is out of range for rank 2}}
  %y = graph.log_softmax %x axis = 2 : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

func.func @gather_nd_tuple(%x: tensor<4x5xf32>, %i: tensor<3x3xi64>) -> tensor<3xf32> {
  // expected-error @+2 {{index tuples of 3 entries do not fit data of rank 2 with 0 batch dimensions}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.gather_nd %x, %i batch_dims = 0 : tensor<4x5xf32>, tensor<3x3xi64> -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @gather_nd_batch(%x: tensor<4x5xf32>, %i: tensor<3x1xi64>) -> tensor<3xf32> {
  // expected-error @+2 {{batch dimension 0 of data (4) and indices (3) differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.gather_nd %x, %i batch_dims = 1 : tensor<4x5xf32>, tensor<3x1xi64> -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @gather_nd_grad_shape(%i: tensor<3x2xi64>, %d: tensor<3x5xf32>) -> tensor<4x5x6xf32> {
  // expected-error @+1 {{'graph.gather_nd_grad' op result_grad 'tensor<3x5xf32>' is not the gather_nd of 'tensor<4x5x6xf32>' by 'tensor<3x2xi64>'}}
  %y = graph.gather_nd_grad %i, %d batch_dims = 0 : tensor<3x2xi64>, tensor<3x5xf32> -> tensor<4x5x6xf32>
  return %y : tensor<4x5x6xf32>
}
