// The B and W functions of a stage for a matmul chain: stage 1 holds two
// matmuls; its B computes the gradient sent back to stage 0 (through both
// matmuls' input gradients), its W only the weight gradients, reusing the
// gradient B computed for the second matmul's input.
// RUN: pipecc-opt %s -pipecc-autodiff -pipecc-partition="stages=2 cut-after=mm0" -pipecc-split-stages | FileCheck %s

func.func @main(%x: tensor<4x8xf32> {graph.input = "x"}, %t: tensor<4x2xf32> {graph.input = "t"}) -> (tensor<f32> {graph.output = "loss"}) {
  %w0 = graph.param "w0" trainable : tensor<8x8xf32>
  %w1 = graph.param "w1" trainable : tensor<8x8xf32>
  %w2 = graph.param "w2" trainable : tensor<8x2xf32>
  %a0 = graph.matmul %x, %w0 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("mm0")
  %a1 = graph.matmul %a0, %w1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("mm1")
  %a2 = graph.matmul %a1, %w2 : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32> loc("mm2")
  %loss = graph.mse_loss %a2, %t : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<f32> loc("loss")
  return %loss : tensor<f32>
}

// Stage 0's forward sends the activation stage 1 reads.
// CHECK-LABEL: func.func @stage0_forward
// CHECK-SAME: -> (tensor<4x8xf32> {pipeline.tensor = "[[ACT:a[0-9]+]]"})
// CHECK-SAME: pipeline.send = ["[[ACT]]"]

// Stage 0 has no input gradient to compute: its B is empty; it receives the
// gradient of its output and W uses it.
// CHECK-LABEL: func.func @stage0_backward_input()
// CHECK-SAME: pipeline.recv = ["[[DACT:g[0-9]+]]"]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @stage0_backward_weight
// CHECK-SAME: %{{.*}}: tensor<4x8xf32> {pipeline.tensor = "[[DACT]]"}
// CHECK-SAME: -> (tensor<8x8xf32> {pipeline.param_grad = ["w0"]
// CHECK: graph.matmul {{.*}} transpose_lhs
// CHECK-NOT: graph.matmul
// CHECK: return

// Stage 1 receives the activation and keeps what its backward needs.
// CHECK-LABEL: func.func @stage1_forward
// CHECK-SAME: {pipeline.tensor = "[[ACT]]"}
// CHECK-SAME: pipeline.recv = ["[[ACT]]"]

// B: the loss gradient, then dA1 = dA2 w2^T and dA0 = dA1 w1^T, sent back.
// It also returns dA2 and dA1, which W needs.
// CHECK-LABEL: func.func @stage1_backward_input
// CHECK-SAME: -> (tensor<4x2xf32> {pipeline.tensor = "[[DA2:g[0-9]+]]"}, tensor<4x8xf32> {pipeline.tensor = "[[DA1:g[0-9]+]]"}, tensor<4x8xf32> {pipeline.tensor = "[[DACT]]"})
// CHECK-SAME: pipeline.send = ["[[DACT]]"]
// CHECK: %[[DA1V:.*]] = graph.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<4x2xf32>, tensor<8x2xf32> -> tensor<4x8xf32>
// CHECK: graph.matmul %[[DA1V]], %{{.*}} transpose_rhs : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK-NOT: graph.matmul
// CHECK: return

// W: only the weight gradients dW1 = A0^T dA1 and dW2 = A1^T dA2.
// CHECK-LABEL: func.func @stage1_backward_weight
// CHECK-SAME: {pipeline.tensor = "[[DA2]]"}
// CHECK-SAME: {pipeline.tensor = "[[DA1]]"}
// CHECK-SAME: pipeline.param_grad = ["w2"]
// CHECK-SAME: pipeline.param_grad = ["w1"]
// CHECK-COUNT-2: graph.matmul {{.*}} transpose_lhs
// CHECK-NOT: graph.matmul
// CHECK: return
