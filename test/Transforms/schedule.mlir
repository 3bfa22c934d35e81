// RUN: pipecc-opt %s -pipecc-schedule="schedule=gpipe microbatches=2 split-backward=false" | FileCheck %s --check-prefix=GPIPE
// RUN: pipecc-opt %s -pipecc-schedule="schedule=1f1b microbatches=3 split-backward=false" -pipecc-verify-pipeline -test-print-schedule -o /dev/null | FileCheck %s --check-prefix=ONEF
// RUN: pipecc-opt %s -pipecc-schedule="schedule=zb-h1 microbatches=2" -pipecc-verify-pipeline | FileCheck %s --check-prefix=ZB
// RUN: pipecc-opt %s -pipecc-schedule="schedule=1f1b microbatches=2 split-backward=true" -test-print-schedule -o /dev/null | FileCheck %s --check-prefix=SPLIT
// RUN: pipecc-opt %s -pipecc-schedule="schedule=1f1b microbatches=2" -test-print-schedule -o /dev/null | FileCheck %s --check-prefix=SPLIT
// RUN: pipecc-opt %s -pipecc-schedule="schedule=1f1b microbatches=2 split-backward=false" -test-print-schedule -o /dev/null | FileCheck %s --check-prefix=FUSED2
// RUN: pipecc-opt %s -pipecc-schedule="schedule=gpipe microbatches=2" -test-print-schedule -o /dev/null | FileCheck %s --check-prefix=GPIPE-AUTO

// Two stages as pipecc-split-stages leaves them (bodies elided): stage 0
// sends two tensors forward, stage 1 sends one gradient back. Stage costs
// F = 1, 2 s, B = W = 1 s; no device, so messages take no time.
module attributes {pipeline.partition = {stage_costs = [
    {forward_s = 1.0 : f64, backward_input_s = 1.0 : f64, backward_weight_s = 1.0 : f64},
    {forward_s = 2.0 : f64, backward_input_s = 1.0 : f64, backward_weight_s = 1.0 : f64}]}} {
  func.func private @stage0_forward(tensor<4x8xf32> {pipeline.tensor = "x"}) -> (tensor<4x16xf32> {pipeline.tensor = "h"}, tensor<4x16xi1> {pipeline.tensor = "mask"}) attributes {pipeline.kind = "forward", pipeline.recv = [], pipeline.send = ["h", "mask"], pipeline.stage = 0 : i64}
  func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.recv = ["dh"], pipeline.send = [], pipeline.stage = 0 : i64}
  func.func private @stage0_backward_weight(tensor<4x16xf32> {pipeline.tensor = "dh"}) attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4x16xi1> {pipeline.tensor = "mask"}, tensor<4x16xf32> {pipeline.tensor = "h"}) -> (tensor<f32> {pipeline.tensor = "loss"}) attributes {pipeline.kind = "forward", pipeline.recv = ["mask", "h"], pipeline.send = [], pipeline.stage = 1 : i64}
  func.func private @stage1_backward_input(tensor<4x16xi1> {pipeline.tensor = "mask"}) -> (tensor<4x16xf32> {pipeline.tensor = "dh"}) attributes {pipeline.kind = "backward_input", pipeline.recv = [], pipeline.send = ["dh"], pipeline.stage = 1 : i64}
  func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}
}

// GPipe with a fused backward (split-backward=false): every forward, then
// every fused backward. Each boundary message
// becomes one send/recv per tensor, in the sender's order.
// GPIPE-LABEL: pipeline.pipeline @train ranks = 2 chunks = 1 microbatches = 2 schedule = "gpipe" placement = [0, 1]
// GPIPE-SAME: bubble = 0.36363636363636{{[0-9]*}} : f64
// GPIPE-SAME: peak_live_microbatches = array<i64: 2, 2>
// GPIPE-SAME: predicted_step_s = 1.100000e+01 : f64
// GPIPE-SAME: rank_busy_s = array<f64: 6.000000e+00, 8.000000e+00>
// GPIPE-LABEL: pipeline.program rank 0 {
// GPIPE-NEXT:    pipeline.forward @stage0_forward stage 0 mb 0
// GPIPE-NEXT:    pipeline.send "h" to 1 mb 0 stages 0 -> 1 : tensor<4x16xf32>
// GPIPE-NEXT:    pipeline.send "mask" to 1 mb 0 stages 0 -> 1 : tensor<4x16xi1>
// GPIPE-NEXT:    pipeline.forward @stage0_forward stage 0 mb 1
// GPIPE-NEXT:    pipeline.send "h" to 1 mb 1 stages 0 -> 1 : tensor<4x16xf32>
// GPIPE-NEXT:    pipeline.send "mask" to 1 mb 1 stages 0 -> 1 : tensor<4x16xi1>
// GPIPE-NEXT:    pipeline.recv "dh" from 1 mb 0 stages 1 -> 0 : tensor<4x16xf32>
// GPIPE-NEXT:    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
// GPIPE-NEXT:    pipeline.recv "dh" from 1 mb 1 stages 1 -> 0 : tensor<4x16xf32>
// GPIPE-NEXT:    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 1
// GPIPE-NEXT:    pipeline.optimizer_step
// GPIPE-NEXT:  }
// GPIPE-LABEL: pipeline.program rank 1 {
// GPIPE-NEXT:    pipeline.recv "h" from 0 mb 0 stages 0 -> 1 : tensor<4x16xf32>
// GPIPE-NEXT:    pipeline.recv "mask" from 0 mb 0 stages 0 -> 1 : tensor<4x16xi1>
// GPIPE-NEXT:    pipeline.forward @stage1_forward stage 1 mb 0
// GPIPE-NEXT:    pipeline.recv "h" from 0 mb 1 stages 0 -> 1 : tensor<4x16xf32>
// GPIPE-NEXT:    pipeline.recv "mask" from 0 mb 1 stages 0 -> 1 : tensor<4x16xi1>
// GPIPE-NEXT:    pipeline.forward @stage1_forward stage 1 mb 1
// GPIPE-NEXT:    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
// GPIPE-NEXT:    pipeline.send "dh" to 0 mb 0 stages 1 -> 0 : tensor<4x16xf32>
// GPIPE-NEXT:    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 1
// GPIPE-NEXT:    pipeline.send "dh" to 0 mb 1 stages 1 -> 0 : tensor<4x16xf32>
// GPIPE-NEXT:    pipeline.optimizer_step
// GPIPE-NEXT:  }
// GPIPE-NOT: pipeline.backward_input

// 1F1B, fused: one warm-up forward on rank 0, then one forward one backward. The
// programs verify; the simulated step follows the stage costs (15 s).
// ONEF:      pipeline @train schedule '1f1b': 2 ranks, 1 chunks, 3 micro-batches, placement [0, 1]
// ONEF-NEXT: rank 0: F0 >1:h@0 >1:mask@0 F1 >1:h@1 >1:mask@1 <1:dh@0 BW0 F2 >1:h@2 >1:mask@2 <1:dh@1 BW1 <1:dh@2 BW2 OPT
// ONEF-NEXT: rank 1: <0:h@0 <0:mask@0 F0 <0:h@1 <0:mask@1 BW0 >0:dh@0 F1 BW1 <0:h@2 <0:mask@2 >0:dh@1 F2 BW2 >0:dh@2 OPT
// ONEF-NEXT: predicted step 15 s, bubble 0.3000
// The op alone, through toLibraryPrograms, simulates to the same step.
// ONEF-NEXT: simulated: step 15, bubble 0.3000

// ZB-H1 splits the backward by default; the last rank defers its W's.
// ZB-LABEL: pipeline.program rank 0 {
// ZB:         pipeline.recv "dh" from 1 mb 0 stages 1 -> 0 : tensor<4x16xf32>
// ZB-NEXT:    pipeline.backward_input @stage0_backward_input stage 0 mb 0
// ZB-NEXT:    pipeline.backward_weight @stage0_backward_weight stage 0 mb 0
// ZB-LABEL: pipeline.program rank 1 {
// ZB:         pipeline.backward_input @stage1_backward_input stage 1 mb 1
// ZB-NEXT:    pipeline.send "dh" to 0 mb 1 stages 1 -> 0 : tensor<4x16xf32>
// ZB-NEXT:    pipeline.backward_weight @stage1_backward_weight stage 1 mb 0
// ZB-NEXT:    pipeline.backward_weight @stage1_backward_weight stage 1 mb 1
// ZB-NEXT:    pipeline.optimizer_step
// ZB-NOT:   pipeline.backward @

// 1F1B with split-backward=true: W follows its B at once. `auto` (the
// default) takes the same split: the gradient dh leaves after B instead of
// after B and W, and the step is 10 s where the fused one takes 11.
// SPLIT:      rank 0: F0 >1:h@0 >1:mask@0 F1 >1:h@1 >1:mask@1 <1:dh@0 B0 W0 <1:dh@1 B1 W1 OPT
// SPLIT-NEXT: rank 1: <0:h@0 <0:mask@0 F0 <0:h@1 <0:mask@1 B0 >0:dh@0 W0 F1 B1 >0:dh@1 W1 OPT
// SPLIT-NEXT: predicted step 10 s, bubble 0.3000
// SPLIT-NEXT: simulated: step 10, bubble 0.3000

// FUSED2:      rank 0: F0 >1:h@0 >1:mask@0 F1 >1:h@1 >1:mask@1 <1:dh@0 BW0 <1:dh@1 BW1 OPT
// FUSED2-NEXT: rank 1: <0:h@0 <0:mask@0 F0 <0:h@1 <0:mask@1 BW0 >0:dh@0 F1 BW1 >0:dh@1 OPT
// FUSED2-NEXT: predicted step 11 s, bubble 0.3636

// GPipe under `auto` splits too, for the same reason.
// GPIPE-AUTO:      rank 0: F0 >1:h@0 >1:mask@0 F1 >1:h@1 >1:mask@1 <1:dh@0 B0 W0 <1:dh@1 B1 W1 OPT
// GPIPE-AUTO-NEXT: rank 1: <0:h@0 <0:mask@0 F0 <0:h@1 <0:mask@1 F1 B0 >0:dh@0 W0 B1 >0:dh@1 W1 OPT
// GPIPE-AUTO-NEXT: predicted step 10 s, bubble 0.3000
