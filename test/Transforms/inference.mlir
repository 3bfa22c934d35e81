// An inference compile's partition, outlining and schedule: every op on
// stage 0, one forward function returning the graph outputs in order (one
// value returned twice gets two results; an input returned as it is stays
// an argument), frozen parameters, one program running the forward once.
// RUN: pipecc-opt %s -pipecc-place-inference -pipecc-split-stages=inference=true -pipecc-schedule-inference | FileCheck %s

func.func @main(%x: tensor<4x8xf32> {graph.input = "x"}) -> (tensor<4x2xf32> {graph.output = "y"}, tensor<4x2xf32> {graph.output = "y again"}, tensor<4x8xf32> {graph.output = "x copy"}) {
  %w = graph.param "w" trainable : tensor<8x2xf32>
  %y = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32> loc("mm")
  return %y, %y, %x : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x8xf32>
}

// CHECK: module attributes {pipeline.inputs = [{name = "x", {{.*}}}], pipeline.parameters = [{name = "w", stages = array<i64: 0>, trainable = false, type = tensor<8x2xf32>}],
// CHECK-SAME: pipeline.stage_table = #pipeline.stage_table<ranks = 1, chunks = 1, placement = "linear", device = "", stages = [#pipeline.virtual_stage<index = 0, rank = 0, chunk = 0, forward = @stage0_forward, cost = <forward = 1.000000e+00 : f64
// CHECK-LABEL: func.func @stage0_forward
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32> {pipeline.input = "x", pipeline.tensor = "x"}
// CHECK-SAME: %[[W:.*]]: tensor<8x2xf32> {pipeline.param = "w", pipeline.tensor = "w"}
// CHECK-SAME: -> (tensor<4x2xf32> {pipeline.output = "y", pipeline.tensor = "y"}, tensor<4x2xf32> {pipeline.output = "y again", pipeline.tensor = "y again"}, tensor<4x8xf32> {pipeline.output = "x copy", pipeline.tensor = "x copy"})
// CHECK-SAME: pipeline.kind = "forward"
// CHECK: %[[Y:.*]] = graph.matmul %[[X]], %[[W]]
// CHECK: return %[[Y]], %[[Y]], %[[X]]
// CHECK-NOT: func.func @stage0_backward
// CHECK: pipeline.pipeline @infer ranks = 1 chunks = 1 microbatches = 1 schedule = "inference" placement = [0]
// CHECK-NEXT: pipeline.program rank 0 {
// CHECK-NEXT: pipeline.forward @stage0_forward stage 0 mb 0
// CHECK-NEXT: }
// CHECK-NOT: pipeline.optimizer_step
