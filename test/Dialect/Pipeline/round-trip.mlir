// RUN: pipecc-opt %s | pipecc-opt | FileCheck %s
// RUN: pipecc-opt %s --mlir-print-op-generic | pipecc-opt | FileCheck %s

func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}

// CHECK-LABEL: pipeline.pipeline @mlp ranks = 2 chunks = 1 microbatches = 2 schedule = "1f1b" placement = [0, 1] attributes {bubble = 2.500000e-01 : f64, peak_live_microbatches = array<i64: 2, 1>, predicted_step_s = 8.000000e+00 : f64, rank_busy_s = array<f64: 6.000000e+00, 6.000000e+00>} {
pipeline.pipeline @mlp ranks = 2 chunks = 1 microbatches = 2 schedule = "1f1b" placement = [0, 1] attributes {bubble = 0.25 : f64, peak_live_microbatches = array<i64: 2, 1>, predicted_step_s = 8.0 : f64, rank_busy_s = array<f64: 6.0, 6.0>} {
  // CHECK: pipeline.program rank 0 {
  pipeline.program rank 0 {
    // CHECK-NEXT: pipeline.forward @stage0_forward stage 0 mb 0
    pipeline.forward @stage0_forward stage 0 mb 0
    // CHECK-NEXT: pipeline.send "act.0" to 1 mb 0 stages 0 -> 1 : tensor<8x256xf32>
    pipeline.send "act.0" to 1 mb 0 stages 0 -> 1 : tensor<8x256xf32>
    pipeline.forward @stage0_forward stage 0 mb 1
    pipeline.send "act.0" to 1 mb 1 stages 0 -> 1 : tensor<8x256xf32>
    // CHECK: pipeline.recv "grad.0" from 1 mb 0 stages 1 -> 0 : tensor<8x256xf32>
    pipeline.recv "grad.0" from 1 mb 0 stages 1 -> 0 : tensor<8x256xf32>
    // CHECK-NEXT: pipeline.backward_input @stage0_backward_input stage 0 mb 0
    pipeline.backward_input @stage0_backward_input stage 0 mb 0
    // CHECK-NEXT: pipeline.backward_weight @stage0_backward_weight stage 0 mb 0
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 0
    pipeline.recv "grad.0" from 1 mb 1 stages 1 -> 0 : tensor<8x256xf32>
    // CHECK: pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 1
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 1
    // CHECK: pipeline.all_reduce "grad.shared" over [0, 1] : tensor<10xf32>
    pipeline.all_reduce "grad.shared" over [0, 1] : tensor<10xf32>
    // CHECK-NEXT: pipeline.optimizer_step
    pipeline.optimizer_step
  }
  // CHECK: pipeline.program rank 1 {
  pipeline.program rank 1 {
    pipeline.recv "act.0" from 0 mb 0 stages 0 -> 1 : tensor<8x256xf32>
    pipeline.forward @stage1_forward stage 1 mb 0
    // A stage without a W function: the fused backward names B only.
    // CHECK: pipeline.backward @stage1_backward_input stage 1 mb 0
    pipeline.backward @stage1_backward_input stage 1 mb 0
    pipeline.send "grad.0" to 0 mb 0 stages 1 -> 0 : tensor<8x256xf32>
    pipeline.recv "act.0" from 0 mb 1 stages 0 -> 1 : tensor<8x256xf32>
    pipeline.forward @stage1_forward stage 1 mb 1
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 1
    pipeline.send "grad.0" to 0 mb 1 stages 1 -> 0 : tensor<8x256xf32>
    pipeline.all_reduce "grad.shared" over [0, 1] : tensor<10xf32>
    pipeline.optimizer_step
  }
}

// The W of micro-batches 0 and 1 in one call of a grouped function; the
// count prints only when it is not 1.
func.func private @stage0_backward_weight_x2() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64, pipeline.microbatches_per_call = 2 : i64}
// CHECK-LABEL: pipeline.pipeline @grouped
pipeline.pipeline @grouped ranks = 1 chunks = 1 microbatches = 2 schedule = "zb-h1" placement = [0] {
  pipeline.program rank 0 {
    // CHECK: pipeline.backward_weight @stage0_backward_weight_x2 stage 0 mb 0 count 2
    pipeline.backward_weight @stage0_backward_weight_x2 stage 0 mb 0 count 2
    // CHECK-NEXT: pipeline.backward_weight @stage0_backward_weight stage 0 mb 1{{$}}
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 1 count 1
  }
}

// A V placement: rank 0 holds virtual stages 0 and 3, rank 1 stages 1 and
// 2, whose hand-off is no message.
// CHECK-LABEL: pipeline.pipeline @v ranks = 2 chunks = 2 microbatches = 1 schedule = "zb-v" placement = [0, 1, 1, 0] {
pipeline.pipeline @v ranks = 2 chunks = 2 microbatches = 1 schedule = "zb-v" placement = [0, 1, 1, 0] {
  pipeline.program rank 0 {
    // CHECK: pipeline.send "x" to 1 mb 0 stages 0 -> 1
    pipeline.send "x" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    // CHECK: pipeline.recv "y" from 1 mb 0 stages 2 -> 3
    pipeline.recv "y" from 1 mb 0 stages 2 -> 3 : tensor<4xf32>
  }
  pipeline.program rank 1 {
    pipeline.recv "x" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.send "y" to 0 mb 0 stages 2 -> 3 : tensor<4xf32>
  }
}
