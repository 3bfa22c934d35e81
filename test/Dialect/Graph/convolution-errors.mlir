// Windows, channels and gradient types of the convolution and pooling ops
// are checked where the ops are built.
// RUN: pipecc-opt %s -split-input-file -verify-diagnostics

func.func @conv_groups(%x: tensor<1x4x6x6xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+2 {{group 3 does not divide the 4 input and 3 output channels}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 3 : tensor<1x4x6x6xf32>, tensor<3x2x3x3xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x4x6x6xf32>, %w: tensor<2x3x3x3xf32>) {
  // expected-error @+2 {{weight 'tensor<2x3x3x3xf32>' has 3 channels per group, but the input has 4 channels in 1 groups}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1 : tensor<1x4x6x6xf32>, tensor<2x3x3x3xf32> -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @conv_attribute_sizes(%x: tensor<1x4x6x6xf32>, %w: tensor<2x4x3x3xf32>) {
  // expected-error @+2 {{expected 2 kernel sizes, strides and dilations and 4 pads for 2 spatial dimensions, got 2, 1, 2 and 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv %x, %w strides = [1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1 : tensor<1x4x6x6xf32>, tensor<2x4x3x3xf32> -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @conv_stride_zero(%x: tensor<1x4x6x6xf32>, %w: tensor<2x4x3x3xf32>) {
  // expected-error @+2 {{kernel size, stride and dilation must be positive, got 3, 0 and 1 in spatial dimension 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv %x, %w strides = [1, 0] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1 : tensor<1x4x6x6xf32>, tensor<2x4x3x3xf32> -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @conv_input_grad_type(%dy: tensor<1x2x4x4xf32>, %w: tensor<2x4x3x3xf32>) {
  // expected-error @+1 {{result_grad 'tensor<1x2x4x4xf32>' is not the type 'tensor<1x2x5x5xf32>' of the convolution of 'tensor<1x4x7x7xf32>' by 'tensor<2x4x3x3xf32>'}}
  %dx = graph.conv_input_grad %dy, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1 : tensor<1x2x4x4xf32>, tensor<2x4x3x3xf32> -> tensor<1x4x7x7xf32>
  return
}

// -----

func.func @pool_window(%x: tensor<1x4x6x6xf32>) {
  // expected-error @+2 {{window of extent 7 does not fit spatial dimension 0 of size 6 padded by 0 and 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.max_pool %x kernel = [7, 1] strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] : tensor<1x4x6x6xf32> -> tensor<1x4x0x6xf32>
  return
}

// -----

func.func @pool_pads(%x: tensor<1x4x6x6xf32>) {
  // expected-error @+2 {{pads must not be negative, got 0 and -1 in spatial dimension 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.avg_pool %x kernel = [2, 2] strides = [1, 1] pads = [0, 0, 0, -1] dilations = [1, 1] : tensor<1x4x6x6xf32> -> tensor<1x4x5x4xf32>
  return
}

// -----

func.func @pool_grad_type(%dy: tensor<1x4x3x3xf32>) {
  // expected-error @+1 {{result_grad 'tensor<1x4x3x3xf32>' is not the type 'tensor<1x4x4x4xf32>' of the pooling of 'tensor<1x4x8x8xf32>'}}
  %dx = graph.avg_pool_grad %dy kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] : tensor<1x4x3x3xf32> -> tensor<1x4x8x8xf32>
  return
}
