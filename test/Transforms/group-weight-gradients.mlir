// RUN: pipecc-opt %s -pipecc-group-weight-gradients="size=2" -split-input-file -verify-diagnostics | FileCheck %s

// Runs of two W on micro-batches 2k, 2k + 1 become one call of the grouped
// copy; W1 W2 and W3 W4 (adjacent, but starting at an odd micro-batch), W0
// (no neighbour) and W6 (no partner) stay. The copy takes the parameter once, the 2-row activation (32
// bytes: not a multiple of 64) once per micro-batch, and the 8-row one
// (128 bytes) as one block of both micro-batches' copies; the product over
// the block needs no concatenation, the other one does.
// CHECK-LABEL: func.func @stage0_backward_weight_x2(
// CHECK-SAME: %arg0: tensor<4x4xf32> {pipeline.param = "w"
// CHECK-SAME: %arg1: tensor<2x4xf32> {pipeline.tensor = "g"}
// CHECK-SAME: %arg2: tensor<2x4xf32> {pipeline.microbatch_offset = 1 : i64, pipeline.tensor = "g"}
// CHECK-SAME: %arg3: tensor<2x4xf32> {pipeline.tensor = "e"}
// CHECK-SAME: %arg4: tensor<2x4xf32> {pipeline.microbatch_offset = 1 : i64, pipeline.tensor = "e"}
// CHECK-SAME: %arg5: tensor<16x4xf32> {pipeline.microbatch_group = 2 : i64, pipeline.tensor = "h"}
// CHECK-SAME: %arg6: tensor<16x4xf32> {pipeline.microbatch_group = 2 : i64, pipeline.tensor = "d"}
// CHECK-SAME: pipeline.microbatches_per_call = 2
// CHECK: %[[G:.*]] = graph.concat %arg1, %arg2 axis = 0 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>
// CHECK: %[[E:.*]] = graph.concat %arg3, %arg4 axis = 0 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>
// CHECK: graph.matmul %[[G]], %[[E]] transpose_lhs : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK: graph.matmul %arg6, %arg5 transpose_lhs : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<4x4xf32>
// CHECK: pipeline.program rank 0 {
// CHECK-NEXT: pipeline.backward_weight @stage0_backward_weight stage 0 mb 1
// CHECK-NEXT: pipeline.backward_weight @stage0_backward_weight stage 0 mb 2
// CHECK-NEXT: pipeline.backward_weight @stage0_backward_weight stage 0 mb 0
// CHECK-NEXT: pipeline.backward_weight @stage0_backward_weight stage 0 mb 3
// CHECK-NEXT: pipeline.backward_weight @stage0_backward_weight_x2 stage 0 mb 4 count 2
// CHECK-NEXT: pipeline.backward_weight @stage0_backward_weight stage 0 mb 6
// CHECK-NEXT: pipeline.optimizer_step
func.func @stage0_backward_weight(%w: tensor<4x4xf32> {pipeline.param = "w", pipeline.tensor = "w"}, %g: tensor<2x4xf32> {pipeline.tensor = "g"}, %e: tensor<2x4xf32> {pipeline.tensor = "e"}, %h: tensor<8x4xf32> {pipeline.tensor = "h"}, %d: tensor<8x4xf32> {pipeline.tensor = "d"}) -> (tensor<4x4xf32> {pipeline.param_grad = ["w"], pipeline.tensor = "gw"}, tensor<4x4xf32> {pipeline.param_grad = ["v"], pipeline.tensor = "gv"}) attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64} {
  %0 = graph.matmul %g, %e transpose_lhs : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>
  %1 = graph.matmul %d, %h transpose_lhs : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}
pipeline.pipeline @train ranks = 1 chunks = 1 microbatches = 7 schedule = "zb-h1" placement = [0] {
  pipeline.program rank 0 {
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 1
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 2
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 0
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 3
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 4
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 5
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 6
    pipeline.optimizer_step
  }
}

// -----

// expected-error @+1 {{cannot group the weight gradients of @stage0_backward_weight: result 0 is not a parameter gradient, so the micro-batches' values cannot be summed}}
func.func @stage0_backward_weight(%g: tensor<2x4xf32> {pipeline.tensor = "g"}) -> (tensor<2x4xf32> {pipeline.tensor = "y"}) attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64} {
  return %g : tensor<2x4xf32>
}
pipeline.pipeline @train ranks = 1 chunks = 1 microbatches = 2 schedule = "zb-h1" placement = [0] {
  pipeline.program rank 0 {
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 0
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 1
    pipeline.optimizer_step
  }
}
