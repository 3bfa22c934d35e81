// RUN: pipecc-opt %s --pipecc-lower-graph-to-linalg -split-input-file -verify-diagnostics

// Every graph op without a lowering is named, not only the first.
func.func @params() -> tensor<4xf32> {
  // expected-error @+1 {{no lowering to linalg for 'graph.param'}}
  %0 = graph.param "w" trainable : tensor<4xf32>
  // expected-error @+1 {{no lowering to linalg for 'graph.param'}}
  %1 = graph.param "b" : tensor<4xf32>
  %2 = graph.add %0, %1 : tensor<4xf32>, tensor<4xf32>
  return %2 : tensor<4xf32>
}
