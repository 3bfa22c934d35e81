// Four virtual stages on two ranks as the partition cuts them for the V
// placement (rank 0 holds virtual stages 0 and 3, rank 1 stages 1 and 2;
// bodies elided). Costs as in schedule-interleaved.mlir; "wte" is tied
// between virtual stages 0 and 3, both on rank 0.
// RUN: pipecc-opt %s -pipecc-schedule="schedule=gpipe microbatches=2 split-backward=false" -pipecc-verify-pipeline | FileCheck %s
// RUN: pipecc-opt %s -pipecc-schedule="schedule=gpipe microbatches=2 split-backward=false" -pipecc-verify-pipeline -test-print-schedule -o /dev/null | FileCheck %s --check-prefix=PRINT
// RUN: not pipecc-opt %s -pipecc-schedule="schedule=interleaved-1f1b microbatches=2" 2>&1 | FileCheck %s --check-prefix=INTERLEAVED

// GPipe orders any placement. Rank 1's hand-off from virtual stage 1 to 2
// at the turn of the V is no message: its two forwards follow each other.
// Rank 0 holds both ends of the tied parameter: one accumulator, no
// all-reduce.
// CHECK-LABEL: pipeline.pipeline @train ranks = 2 chunks = 2 microbatches = 2 schedule = "gpipe" placement = [0, 1, 1, 0]
// CHECK-NOT:  pipeline.all_reduce
// CHECK-LABEL: pipeline.program rank 0 {
// CHECK-NEXT: pipeline.forward @stage0_forward stage 0 mb 0
// CHECK-NEXT: pipeline.send "a0" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
// CHECK-NEXT: pipeline.recv "a2" from 1 mb 0 stages 2 -> 3 : tensor<4xf32>
// CHECK-NEXT: pipeline.forward @stage3_forward stage 3 mb 0
// CHECK-LABEL: pipeline.program rank 1 {
// CHECK-NEXT: pipeline.recv "a0" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
// CHECK-NEXT: pipeline.forward @stage1_forward stage 1 mb 0
// CHECK-NEXT: pipeline.forward @stage2_forward stage 2 mb 0
// CHECK-NEXT: pipeline.send "a2" to 0 mb 0 stages 2 -> 3 : tensor<4xf32>
// CHECK-NOT:  pipeline.send "a1"
// CHECK-NOT:  pipeline.all_reduce

// PRINT:      pipeline @train schedule 'gpipe': 2 ranks, 2 chunks, 2 micro-batches, placement [0, 1, 1, 0]
// PRINT-NEXT: rank 0: F0 >1:a0@0 <1:a2@0 F0.1 F1 >1:a0@1 <1:a2@1 F1.1 BW0.1 >1:g3@0 <1:g1@0 BW0 BW1.1 >1:g3@1 <1:g1@1 BW1 OPT
// PRINT-NEXT: rank 1: <0:a0@0 F0 F0.1 >0:a2@0 <0:a0@1 F1 F1.1 >0:a2@1 <0:g3@0 BW0.1 BW0 >0:g1@0 <0:g3@1 BW1.1 BW1 >0:g1@1 OPT
// PRINT-NEXT: predicted step 27 s, bubble 0.5000
// PRINT-NEXT: simulated: step 27, bubble 0.5000

// Interleaved 1F1B cannot order a V; the generator says why.
// INTERLEAVED: error: cannot schedule 4 virtual stages on 2 ranks (v placement) on 2 micro-batches with 'interleaved-1f1b': interleaved-1f1b needs the interleaved placement of the virtual stages

module attributes {pipeline.partition = {chunks = 2 : i64, placement = "v", stage_costs = [{forward_s = 1.0 : f64, backward_input_s = 1.0 : f64, backward_weight_s = 1.0 : f64}, {forward_s = 2.0 : f64, backward_input_s = 1.0 : f64, backward_weight_s = 0.5 : f64}, {forward_s = 1.0 : f64, backward_input_s = 2.0 : f64, backward_weight_s = 1.0 : f64}, {forward_s = 1.0 : f64, backward_input_s = 1.0 : f64, backward_weight_s = 1.0 : f64}]}, pipeline.parameters = [{name = "wte", stages = array<i64: 0, 3>, trainable = true, type = tensor<4xf32>}]} {
  func.func private @stage0_forward() -> (tensor<4xf32> {pipeline.tensor = "a0"}) attributes {pipeline.kind = "forward", pipeline.recv = [], pipeline.send = ["a0"], pipeline.stage = 0 : i64}
  func.func private @stage0_backward_input(tensor<4xf32> {pipeline.tensor = "g1"}) -> () attributes {pipeline.kind = "backward_input", pipeline.recv = ["g1"], pipeline.send = [], pipeline.stage = 0 : i64}
  func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4xf32> {pipeline.tensor = "a0"}) -> (tensor<4xf32> {pipeline.tensor = "a1"}) attributes {pipeline.kind = "forward", pipeline.recv = ["a0"], pipeline.send = ["a1"], pipeline.stage = 1 : i64}
  func.func private @stage1_backward_input(tensor<4xf32> {pipeline.tensor = "g2"}) -> (tensor<4xf32> {pipeline.tensor = "g1"}) attributes {pipeline.kind = "backward_input", pipeline.recv = ["g2"], pipeline.send = ["g1"], pipeline.stage = 1 : i64}
  func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}
  func.func private @stage2_forward(tensor<4xf32> {pipeline.tensor = "a1"}) -> (tensor<4xf32> {pipeline.tensor = "a2"}) attributes {pipeline.kind = "forward", pipeline.recv = ["a1"], pipeline.send = ["a2"], pipeline.stage = 2 : i64}
  func.func private @stage2_backward_input(tensor<4xf32> {pipeline.tensor = "g3"}) -> (tensor<4xf32> {pipeline.tensor = "g2"}) attributes {pipeline.kind = "backward_input", pipeline.recv = ["g3"], pipeline.send = ["g2"], pipeline.stage = 2 : i64}
  func.func private @stage2_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 2 : i64}
  func.func private @stage3_forward(tensor<4xf32> {pipeline.tensor = "a2"}) -> (tensor<f32> {pipeline.loss, pipeline.tensor = "loss"}) attributes {pipeline.kind = "forward", pipeline.recv = ["a2"], pipeline.send = [], pipeline.stage = 3 : i64}
  func.func private @stage3_backward_input() -> (tensor<4xf32> {pipeline.tensor = "g3"}) attributes {pipeline.kind = "backward_input", pipeline.recv = [], pipeline.send = ["g3"], pipeline.stage = 3 : i64}
  func.func private @stage3_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 3 : i64}
}
