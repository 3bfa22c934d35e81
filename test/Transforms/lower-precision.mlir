// pipecc-lower-precision on hand-written stage functions: which values turn
// bf16, where graph.cast goes, and which signatures stay f32.
// RUN: pipecc-opt %s -pipecc-lower-precision | FileCheck %s
// RUN: pipecc-opt %s -pipecc-lower-precision=precision=fp32 | FileCheck %s --check-prefix=FP32
// RUN: not pipecc-opt %s -pipecc-lower-precision=precision=fp16 2>&1 | FileCheck %s --check-prefix=BAD

// FP32-NOT: bf16
// BAD: unknown precision 'fp16'; expected fp32 or bf16

// The parameter (master weight) and the data input stay f32 arguments and
// are rounded where used; the sent activation "a1" and the stashed "a0"
// become bf16 results; the matmul and the add run in bf16; softmax reads
// f32 and its result is rounded once for the next matmul.
// CHECK-LABEL: func.func @stage0_forward
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32> {pipeline.input = "x"
// CHECK-SAME: %[[W:.*]]: tensor<8x8xf32> {pipeline.param = "w"
// CHECK-SAME: -> (tensor<4x8xbf16> {pipeline.tensor = "a0"}, tensor<4x8xbf16> {pipeline.tensor = "a1"})
// CHECK-DAG: %[[WB:.*]] = graph.cast %[[W]] : tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK-DAG: %[[XB:.*]] = graph.cast %[[X]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK: %[[MM:.*]] = graph.matmul %[[XB]], %[[WB]] : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xbf16>
// CHECK: %[[MMF:.*]] = graph.cast %[[MM]] : tensor<4x8xbf16> -> tensor<4x8xf32>
// CHECK: %[[SM:.*]] = graph.softmax %[[MMF]] {{.*}}: tensor<4x8xf32>
// CHECK: %[[SMB:.*]] = graph.cast %[[SM]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK: %[[OUT:.*]] = graph.add %[[SMB]], %[[MM]] : tensor<4x8xbf16>, tensor<4x8xbf16>
// CHECK: return %[[MM]], %[[OUT]] : tensor<4x8xbf16>, tensor<4x8xbf16>
module attributes {pipeline.stage_table = #pipeline.stage_table<ranks = 3, chunks = 1, placement = "linear", device = "", stages = [
  #pipeline.virtual_stage<index = 0, rank = 0, chunk = 0, forward = @stage0_forward, backward_input = @stage0_backward_input, backward_weight = @stage0_backward_weight, cost = <forward = 1.0, backward_input = 1.0, backward_weight = 1.0, activation_bytes = 0, stash_bytes = 0, parameter_bytes = 0, boundary_bytes = 0>>,
  #pipeline.virtual_stage<index = 1, rank = 1, chunk = 0, forward = @stage1_forward, cost = <forward = 1.0, backward_input = 1.0, backward_weight = 1.0, activation_bytes = 0, stash_bytes = 0, parameter_bytes = 0, boundary_bytes = 0>>,
  #pipeline.virtual_stage<index = 2, rank = 2, chunk = 0, forward = @stage2_forward, cost = <forward = 1.0, backward_input = 1.0, backward_weight = 1.0, activation_bytes = 0, stash_bytes = 0, parameter_bytes = 0, boundary_bytes = 0>>]>} {
func.func @stage0_forward(%x: tensor<4x8xf32> {pipeline.input = "x", pipeline.tensor = "x"}, %w: tensor<8x8xf32> {pipeline.param = "w", pipeline.tensor = "w"}) -> (tensor<4x8xf32> {pipeline.tensor = "a0"}, tensor<4x8xf32> {pipeline.tensor = "a1"}) attributes {pipeline.kind = "forward", pipeline.recv = [], pipeline.send = ["a1"], pipeline.stage = 0 : i64} {
  %0 = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %1 = graph.softmax %0 axis = 1 : tensor<4x8xf32>
  %2 = graph.add %1, %0 : tensor<4x8xf32>, tensor<4x8xf32>
  return %0, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// The received activation is bf16; the loss and its scaling are scalars and
// stay f32; the loss result is f32.
// CHECK-LABEL: func.func @stage1_forward
// CHECK-SAME: %[[A:.*]]: tensor<4x8xbf16> {pipeline.tensor = "a1"}
// CHECK-SAME: -> (tensor<f32> {pipeline.loss, pipeline.tensor = "loss"})
// CHECK: %[[AF:.*]] = graph.cast %[[A]] : tensor<4x8xbf16> -> tensor<4x8xf32>
// CHECK: %[[L:.*]] = graph.mse_loss %[[AF]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<f32>
// CHECK: %[[S:.*]] = graph.mul %[[L]], %{{.*}} : tensor<f32>, tensor<f32>
// CHECK: return %[[S]] : tensor<f32>
func.func @stage1_forward(%a: tensor<4x8xf32> {pipeline.tensor = "a1"}, %t: tensor<4x8xf32> {pipeline.input = "t", pipeline.tensor = "t"}) -> (tensor<f32> {pipeline.loss, pipeline.tensor = "loss"}) attributes {pipeline.kind = "forward", pipeline.recv = ["a1"], pipeline.send = [], pipeline.stage = 1 : i64} {
  %l = graph.mse_loss %a, %t : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<f32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %s = graph.mul %l, %two : tensor<f32>, tensor<f32>
  return %s : tensor<f32>
}

// The stashed activation "a0" is read as bf16 (one type per tensor name);
// the weight gradient is a bf16 matmul whose result is extended into the f32
// gradient; the bias-style reduction accumulates in f32.
// CHECK-LABEL: func.func @stage0_backward_weight
// CHECK-SAME: %[[A0:.*]]: tensor<4x8xbf16> {pipeline.tensor = "a0"}
// CHECK-SAME: %[[G:.*]]: tensor<4x8xbf16> {pipeline.tensor = "g1"}
// CHECK-SAME: -> (tensor<8x8xf32> {pipeline.param_grad = ["w"]
// CHECK-SAME: tensor<8xf32> {pipeline.param_grad = ["b"]
// CHECK-DAG: %[[GF:.*]] = graph.cast %[[G]] : tensor<4x8xbf16> -> tensor<4x8xf32>
// CHECK-DAG: %[[DW:.*]] = graph.matmul %[[A0]], %[[G]] transpose_lhs : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<8x8xbf16>
// CHECK-DAG: %[[DWF:.*]] = graph.cast %[[DW]] : tensor<8x8xbf16> -> tensor<8x8xf32>
// CHECK-DAG: %[[DB:.*]] = graph.reduce_sum %[[GF]] axes = [0] : tensor<4x8xf32> -> tensor<8xf32>
// CHECK: return %[[DWF]], %[[DB]] : tensor<8x8xf32>, tensor<8xf32>
func.func @stage0_backward_weight(%a0: tensor<4x8xf32> {pipeline.tensor = "a0"}, %g: tensor<4x8xf32> {pipeline.tensor = "g1"}) -> (tensor<8x8xf32> {pipeline.param_grad = ["w"], pipeline.tensor = "g2"}, tensor<8xf32> {pipeline.param_grad = ["b"], pipeline.tensor = "g3"}) attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64} {
  %0 = graph.matmul %a0, %g transpose_lhs : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  %1 = graph.reduce_sum %g axes = [0] : tensor<4x8xf32> -> tensor<8xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8xf32>
}

// Functions that are not stage functions are left alone.
// CHECK-LABEL: func.func @helper
// CHECK-NOT: bf16
func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// A gather reads the f32 embedding table in place; the rows it reads are
// rounded once for their bf16 consumer.
// CHECK-LABEL: func.func @stage2_forward
// CHECK-SAME: %[[TABLE:.*]]: tensor<10x4xf32> {pipeline.param = "wte"
// CHECK: %[[ROWS:.*]] = graph.gather %[[TABLE]], %{{.*}} axis = 0 : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
// CHECK: %[[ROWSB:.*]] = graph.cast %[[ROWS]] : tensor<3x4xf32> -> tensor<3x4xbf16>
// CHECK: graph.relu %[[ROWSB]] : tensor<3x4xbf16>
func.func @stage2_forward(%table: tensor<10x4xf32> {pipeline.param = "wte", pipeline.tensor = "wte"}, %ids: tensor<3xi64> {pipeline.input = "ids", pipeline.tensor = "ids"}) -> (tensor<3x4xf32> {pipeline.tensor = "a9"}) attributes {pipeline.kind = "forward", pipeline.recv = [], pipeline.send = ["a9"], pipeline.stage = 2 : i64} {
  %0 = graph.gather %table, %ids axis = 0 : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  %1 = graph.relu %0 : tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}

// Stage 0's B, empty here: the table names it with its W.
func.func @stage0_backward_input() { return }
}
