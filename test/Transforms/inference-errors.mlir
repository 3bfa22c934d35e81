// RUN: pipecc-opt %s -split-input-file -verify-diagnostics -pipecc-place-inference

// A differentiated @main is not an inference model.
// expected-error @+1 {{@main is differentiated (result 1 is a gradient); an inference compile skips autodiff}}
func.func @main(%x: tensor<4xf32> {graph.input = "x"}) -> (tensor<4xf32> {graph.output = "y"}, tensor<4xf32> {graph.grad = "w"}) {
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
