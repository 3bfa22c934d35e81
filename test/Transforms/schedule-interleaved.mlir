// Four virtual stages on two ranks (chunks = 2) as the partition cuts them
// for the interleaved placement (virtual stage q on rank q % 2; bodies
// elided). Stage costs F = 1, 2, 1, 1 s; B = 1, 1, 2, 1 s; W = 1, 0.5, 1,
// 1 s; no device, so messages take no time. Parameter "wte" is tied
// between virtual stages 0 and 3.
// RUN: pipecc-opt %s -pipecc-schedule="schedule=interleaved-1f1b microbatches=2 split-backward=false" -pipecc-verify-pipeline | FileCheck %s
// RUN: pipecc-opt %s -pipecc-schedule="schedule=interleaved-1f1b microbatches=2 split-backward=false" -pipecc-verify-pipeline -test-print-schedule -o /dev/null | FileCheck %s --check-prefix=PRINT
// RUN: not pipecc-opt %s -pipecc-schedule="schedule=1f1b microbatches=2" 2>&1 | FileCheck %s --check-prefix=ONEF
// RUN: not pipecc-opt %s -pipecc-schedule="schedule=gpipe microbatches=2 chunks=1" 2>&1 | FileCheck %s --check-prefix=CHUNKS

// Every hand-off crosses ranks; messages name the virtual stages they
// join, computes call their stage's functions, and the tied parameter's
// gradient is summed over the two ranks holding stages 0 and 3.
// CHECK-LABEL: pipeline.pipeline @train ranks = 2 chunks = 2 microbatches = 2 schedule = "interleaved-1f1b" placement = [0, 1, 0, 1]
// CHECK-SAME: peak_live_microbatches = array<i64: 2, 2, 2, 2>
// CHECK-LABEL: pipeline.program rank 0 {
// CHECK-NEXT: pipeline.forward @stage0_forward stage 0 mb 0
// CHECK-NEXT: pipeline.send "a0" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
// CHECK:      pipeline.recv "a1" from 1 mb 0 stages 1 -> 2 : tensor<4xf32>
// CHECK:      pipeline.forward @stage2_forward stage 2 mb 0
// CHECK:      pipeline.backward @stage2_backward_input, @stage2_backward_weight stage 2 mb 0
// CHECK:      pipeline.all_reduce "grad.wte" over [0, 1] : tensor<4xf32>
// CHECK-NEXT: pipeline.optimizer_step
// CHECK-LABEL: pipeline.program rank 1 {
// CHECK:      pipeline.forward @stage3_forward stage 3 mb 0
// CHECK:      pipeline.all_reduce "grad.wte" over [0, 1] : tensor<4xf32>

// The op alone (toLibraryPrograms + the library's simulator) reproduces
// the schedule pass's prediction.
// PRINT:      pipeline @train schedule 'interleaved-1f1b': 2 ranks, 2 chunks, 2 micro-batches, placement [0, 1, 0, 1]
// PRINT-NEXT: rank 0: F0 >1:a0@0 F1 >1:a0@1 <1:a1@0 F0.1 >1:a2@0 <1:a1@1 F1.1 >1:a2@1 <1:g3@0 BW0.1 >1:g2@0 <1:g3@1 BW1.1 >1:g2@1 <1:g1@0 BW0 <1:g1@1 BW1 AR:grad.wte OPT
// PRINT-NEXT: rank 1: <0:a0@0 F0 <0:a0@1 >0:a1@0 F1 <0:a2@0 >0:a1@1 F0.1 <0:a2@1 F1.1 BW0.1 >0:g3@0 BW1.1 <0:g2@0 >0:g3@1 BW0 <0:g2@1 >0:g1@0 BW1 >0:g1@1 AR:grad.wte OPT
// PRINT-NEXT: predicted step 19 s, bubble 0.2895
// PRINT-NEXT: simulated: step 19, bubble 0.2895

// 1F1B needs one chunk per rank, and says so up front.
// ONEF: error: cannot schedule 2 chunks per rank with '1f1b': 1f1b needs one chunk per rank, got 2; use interleaved-1f1b or zb-v
// CHUNKS: error: --chunks 1 does not match the partition, which cut 2 virtual stages per rank

module attributes {pipeline.partition = {chunks = 2 : i64, placement = "interleaved", stage_costs = [{forward_s = 1.0 : f64, backward_input_s = 1.0 : f64, backward_weight_s = 1.0 : f64}, {forward_s = 2.0 : f64, backward_input_s = 1.0 : f64, backward_weight_s = 0.5 : f64}, {forward_s = 1.0 : f64, backward_input_s = 2.0 : f64, backward_weight_s = 1.0 : f64}, {forward_s = 1.0 : f64, backward_input_s = 1.0 : f64, backward_weight_s = 1.0 : f64}]}, pipeline.parameters = [{name = "wte", stages = array<i64: 0, 3>, trainable = true, type = tensor<4xf32>}]} {
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
