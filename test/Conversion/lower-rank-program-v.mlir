// Rank 0 of a V (placement [0, 1, 1, 0]) holds the first and the last
// virtual stage: the host program calls each compute's own function by
// symbol, loads the data input x before stage 0's forward and the labels
// before the functions of stage 3 that read them, and the tied weight w
// (stages 0 and 3, both on this rank) has one parameter buffer and one
// gradient accumulator that both W functions add into themselves; the
// runtime checks it once, after the last of them.
// RUN: pipecc-opt %s --pipecc-record-stage-abi --pipecc-lower-to-llvm --pipecc-lower-rank-program | FileCheck %s

// Buffers in order of first use, over the functions in module order: x (0),
// w (1) and its gradient (2), a0 (3), ..., labels (6).
// CHECK-LABEL: llvm.func @pipecc_step(%arg0: !llvm.ptr)
// Both receives (a2, then g1) are posted at the start of the step (without
// a memory plan each micro-batch has its own copy), each waited for right
// before the compute reading it; the sends right after their producers,
// waited for at the end.
// CHECK: %[[A2:.*]] = llvm.call @pipecc_rt_irecv(
// CHECK: %[[G1:.*]] = llvm.call @pipecc_rt_irecv(
// CHECK: llvm.call @pipecc_rt_trace_begin(
// CHECK: %[[X:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: llvm.call @pipecc_rt_load_microbatch(%arg0, %[[X]],
// CHECK-NOT: llvm.call @pipecc_rt_check_class_ids
// CHECK: llvm.call @stage0_forward(
// CHECK: %[[A0:.*]] = llvm.call @pipecc_rt_isend(
// CHECK-NEXT: llvm.call @pipecc_rt_wait(%arg0, %[[A2]])
// CHECK: %[[LABELS:.*]] = llvm.mlir.constant(6 : i64) : i64
// CHECK: llvm.call @pipecc_rt_load_microbatch(%arg0, %[[LABELS]],
// CHECK: llvm.call @pipecc_rt_check_class_ids(
// CHECK: llvm.call @stage3_forward(
// CHECK: llvm.call @pipecc_rt_report_loss_at(
// CHECK: llvm.call @pipecc_rt_load_microbatch(%arg0, %{{.*}},
// CHECK: llvm.call @stage3_backward_input(
// CHECK: llvm.call @stage3_backward_weight(
// CHECK-NOT: llvm.call @pipecc_rt_accumulate_gradient
// CHECK-NOT: llvm.call @pipecc_rt_check_gradient
// CHECK: %[[G3:.*]] = llvm.call @pipecc_rt_isend(
// CHECK-NEXT: llvm.call @pipecc_rt_wait(%arg0, %[[G1]])
// CHECK: llvm.call @stage0_backward_weight(
// CHECK-NOT: llvm.call @pipecc_rt_accumulate_gradient
// CHECK: %[[GRAD:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: llvm.call @pipecc_rt_check_gradient(%arg0, %[[GRAD]])
// CHECK-NOT: llvm.call @pipecc_rt_allreduce
// CHECK: llvm.call @pipecc_rt_wait(%arg0, %[[A0]])
// CHECK-NEXT: llvm.call @pipecc_rt_wait(%arg0, %[[G3]])
// CHECK-NEXT: llvm.return

module attributes {pipeline.rank = 0 : i64, pipeline.parameters = [{name = "w", stages = array<i64: 0, 3>, trainable = true, type = tensor<4x4xf32>}]} {
  func.func @stage0_forward(%x: tensor<4x4xf32> {pipeline.input = "x", pipeline.tensor = "x"}, %w: tensor<4x4xf32> {pipeline.param = "w", pipeline.tensor = "w"}) -> (tensor<4x4xf32> {pipeline.tensor = "a0"}) attributes {pipeline.kind = "forward", pipeline.recv = [], pipeline.send = ["a0"], pipeline.stage = 0 : i64} {
    %0 = graph.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
  func.func @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.recv = ["g1"], pipeline.send = [], pipeline.stage = 0 : i64} {
    return
  }
  func.func @stage0_backward_weight(%x: tensor<4x4xf32> {pipeline.input = "x", pipeline.tensor = "x"}, %g: tensor<4x4xf32> {pipeline.tensor = "g1"}) -> (tensor<4x4xf32> {pipeline.param_grad = ["w"], pipeline.tensor = "dw0"}) attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64} {
    %0 = graph.matmul %x, %g transpose_lhs : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
  func.func @stage3_forward(%a: tensor<4x4xf32> {pipeline.tensor = "a2"}, %labels: tensor<4xi64> {pipeline.input = "labels", pipeline.tensor = "labels"}, %w: tensor<4x4xf32> {pipeline.param = "w", pipeline.tensor = "w"}) -> (tensor<4x4xf32> {pipeline.tensor = "logits"}, tensor<f32> {pipeline.loss, pipeline.tensor = "loss"}) attributes {pipeline.kind = "forward", pipeline.recv = ["a2"], pipeline.send = [], pipeline.stage = 3 : i64} {
    %0 = graph.matmul %a, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %1 = graph.cross_entropy %0, %labels : tensor<4x4xf32>, tensor<4xi64> -> tensor<f32>
    return %0, %1 : tensor<4x4xf32>, tensor<f32>
  }
  func.func @stage3_backward_input(%logits: tensor<4x4xf32> {pipeline.tensor = "logits"}, %labels: tensor<4xi64> {pipeline.input = "labels", pipeline.tensor = "labels"}, %w: tensor<4x4xf32> {pipeline.param = "w", pipeline.tensor = "w"}) -> (tensor<4x4xf32> {pipeline.tensor = "g3"}, tensor<4x4xf32> {pipeline.tensor = "dl"}) attributes {pipeline.kind = "backward_input", pipeline.recv = [], pipeline.send = ["g3"], pipeline.stage = 3 : i64} {
    %0 = graph.constant dense<1.000000e+00> : tensor<f32>
    %1 = graph.cross_entropy_grad %logits, %labels, %0 : tensor<4x4xf32>, tensor<4xi64>, tensor<f32>
    %2 = graph.matmul %1, %w transpose_rhs : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    return %2, %1 : tensor<4x4xf32>, tensor<4x4xf32>
  }
  func.func @stage3_backward_weight(%a: tensor<4x4xf32> {pipeline.tensor = "a2"}, %dl: tensor<4x4xf32> {pipeline.tensor = "dl"}) -> (tensor<4x4xf32> {pipeline.param_grad = ["w"], pipeline.tensor = "dw3"}) attributes {pipeline.kind = "backward_weight", pipeline.stage = 3 : i64} {
    %0 = graph.matmul %a, %dl transpose_lhs : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
  // As the lower phase leaves it: rank 1's computes dropped.
  pipeline.pipeline @train ranks = 2 chunks = 2 microbatches = 1 schedule = "gpipe" placement = [0, 1, 1, 0] {
    pipeline.program rank 0 {
      pipeline.forward @stage0_forward stage 0 mb 0
      pipeline.send "a0" to 1 mb 0 stages 0 -> 1 : tensor<4x4xf32>
      pipeline.recv "a2" from 1 mb 0 stages 2 -> 3 : tensor<4x4xf32>
      pipeline.forward @stage3_forward stage 3 mb 0
      pipeline.backward @stage3_backward_input, @stage3_backward_weight stage 3 mb 0
      pipeline.send "g3" to 1 mb 0 stages 3 -> 2 : tensor<4x4xf32>
      pipeline.recv "g1" from 1 mb 0 stages 1 -> 0 : tensor<4x4xf32>
      pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
      pipeline.optimizer_step
    }
    pipeline.program rank 1 {
      pipeline.recv "a0" from 0 mb 0 stages 0 -> 1 : tensor<4x4xf32>
      pipeline.send "a2" to 0 mb 0 stages 2 -> 3 : tensor<4x4xf32>
      pipeline.recv "g3" from 0 mb 0 stages 3 -> 2 : tensor<4x4xf32>
      pipeline.send "g1" to 0 mb 0 stages 1 -> 0 : tensor<4x4xf32>
      pipeline.optimizer_step
    }
  }
}
