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

// A fill that CSE merged for several users (the zero init of two matmuls)
// becomes one fill per user, right before it and into its own empty: no
// fill-then-copy after bufferization, and pipecc-matmul-to-blas folds each
// into beta = 0.
// CHECK-LABEL: func.func @shared_fill(
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<2x2xf32>)
// CHECK: linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%[[F1]] : tensor<2x2xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<2x2xf32>)
// CHECK: linalg.matmul ins(%arg1, %arg0 : {{.*}}) outs(%[[F2]] : tensor<2x2xf32>)
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @shared_fill(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %x = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = linalg.matmul ins(%b, %a : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %x, %y : tensor<2x2xf32>, tensor<2x2xf32>
}
