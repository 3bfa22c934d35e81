// RUN: pipecc-opt %s --pipecc-split-empty-tensors | FileCheck %s

// Two ops writing into one CSE'd tensor.empty get one each, so that one-shot
// bufferization does not check every write against every other use.
// CHECK-LABEL: func.func @shared(
// CHECK-COUNT-2: tensor.empty() : tensor<4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[FIRST:[0-9]+]] : tensor<4xf32>)
// CHECK-NOT: outs(%[[FIRST]] :
// CHECK: return
func.func @shared(%x: f32, %y: f32) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.fill ins(%x : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.fill ins(%y : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
