// The whole chain on a small MLP: autodiff, partition into 2 and 4 stages,
// split, schedule, verify. Tensor names come from split-stages; the checks
// capture them so that each send is seen to meet its receive.
// RUN: pipecc-opt %s -pipecc-autodiff -pipecc-partition="stages=2" -pipecc-split-stages -pipecc-schedule="schedule=gpipe microbatches=2 split-backward=false" -pipecc-verify-pipeline | FileCheck %s --check-prefix=GPIPE2
// RUN: pipecc-opt %s -pipecc-autodiff -pipecc-partition="stages=2" -pipecc-split-stages -pipecc-schedule="schedule=1f1b microbatches=4 split-backward=false" -pipecc-verify-pipeline | FileCheck %s --check-prefix=ONEF2
// RUN: pipecc-opt %s -pipecc-autodiff -pipecc-partition="stages=4" -pipecc-split-stages -pipecc-schedule="schedule=gpipe microbatches=4 split-backward=false" -pipecc-verify-pipeline -test-print-schedule -o /dev/null | FileCheck %s --check-prefix=GPIPE4
// RUN: pipecc-opt %s -pipecc-autodiff -pipecc-partition="stages=4" -pipecc-split-stages -pipecc-schedule="schedule=1f1b microbatches=4 split-backward=false" -pipecc-verify-pipeline -test-print-schedule -o /dev/null | FileCheck %s --check-prefix=ONEF4
// RUN: pipecc-opt %s -pipecc-autodiff -pipecc-partition="stages=1" -pipecc-split-stages -pipecc-schedule="schedule=1f1b microbatches=2" -pipecc-verify-pipeline -test-print-schedule -o /dev/null | FileCheck %s --check-prefix=ONE

func.func @main(%x: tensor<4x8xf32> {graph.input = "x"}, %labels: tensor<4xi64> {graph.input = "labels"}) -> (tensor<f32> {graph.output = "loss"}) {
  %w0 = graph.param "w0" trainable : tensor<16x8xf32>
  %b0 = graph.param "b0" trainable : tensor<16xf32>
  %w1 = graph.param "w1" trainable : tensor<3x16xf32>
  %h = graph.matmul %x, %w0 transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %hb = graph.add %h, %b0 : tensor<4x16xf32>, tensor<16xf32>
  %r = graph.relu %hb : tensor<4x16xf32>
  %l = graph.matmul %r, %w1 transpose_rhs : tensor<4x16xf32>, tensor<3x16xf32> -> tensor<4x3xf32>
  %loss = graph.cross_entropy %l, %labels : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  return %loss : tensor<f32>
}

// GPIPE2-LABEL: pipeline.pipeline @train ranks = 2 chunks = 1 microbatches = 2 schedule = "gpipe" placement = [0, 1]
// GPIPE2-SAME: predicted_step_s =
// GPIPE2-LABEL: pipeline.program rank 0 {
// GPIPE2-NEXT: pipeline.forward @stage0_forward stage 0 mb 0
// GPIPE2-NEXT: pipeline.send "[[ACT:[^"]+]]" to 1 mb 0 stages 0 -> 1 : [[ACT_TYPE:tensor<[^>]+>]]
// GPIPE2-NEXT: pipeline.forward @stage0_forward stage 0 mb 1
// GPIPE2-NEXT: pipeline.send "[[ACT]]" to 1 mb 1 stages 0 -> 1 : [[ACT_TYPE]]
// GPIPE2-NEXT: pipeline.recv "[[GRAD:[^"]+]]" from 1 mb 0 stages 1 -> 0 : [[GRAD_TYPE:tensor<[^>]+>]]
// GPIPE2-NEXT: pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
// GPIPE2-NEXT: pipeline.recv "[[GRAD]]" from 1 mb 1 stages 1 -> 0 : [[GRAD_TYPE]]
// GPIPE2-NEXT: pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 1
// GPIPE2-NEXT: pipeline.optimizer_step
// GPIPE2-LABEL: pipeline.program rank 1 {
// GPIPE2-NEXT: pipeline.recv "[[ACT]]" from 0 mb 0 stages 0 -> 1 : [[ACT_TYPE]]
// GPIPE2-NEXT: pipeline.forward @stage1_forward stage 1 mb 0
// GPIPE2-NEXT: pipeline.recv "[[ACT]]" from 0 mb 1 stages 0 -> 1 : [[ACT_TYPE]]
// GPIPE2-NEXT: pipeline.forward @stage1_forward stage 1 mb 1
// GPIPE2-NEXT: pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
// GPIPE2-NEXT: pipeline.send "[[GRAD]]" to 0 mb 0 stages 1 -> 0 : [[GRAD_TYPE]]
// GPIPE2-NEXT: pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 1
// GPIPE2-NEXT: pipeline.send "[[GRAD]]" to 0 mb 1 stages 1 -> 0 : [[GRAD_TYPE]]
// GPIPE2-NEXT: pipeline.optimizer_step

// 1F1B on two stages: rank 0 warms up with one extra forward, then
// alternates; rank 1 runs each backward right after its forward.
// ONEF2-LABEL: pipeline.program rank 0 {
// ONEF2-NEXT: pipeline.forward @stage0_forward stage 0 mb 0
// ONEF2-NEXT: pipeline.send "[[ACT:[^"]+]]" to 1 mb 0 stages 0 -> 1
// ONEF2-NEXT: pipeline.forward @stage0_forward stage 0 mb 1
// ONEF2-NEXT: pipeline.send "[[ACT]]" to 1 mb 1 stages 0 -> 1
// ONEF2-NEXT: pipeline.recv "[[GRAD:[^"]+]]" from 1 mb 0 stages 1 -> 0
// ONEF2-NEXT: pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
// ONEF2-NEXT: pipeline.forward @stage0_forward stage 0 mb 2
// ONEF2-LABEL: pipeline.program rank 1 {
// ONEF2-NEXT: pipeline.recv "[[ACT]]" from 0 mb 0 stages 0 -> 1
// ONEF2-NEXT: pipeline.forward @stage1_forward stage 1 mb 0
// ONEF2-NEXT: pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
// ONEF2-NOT:  pipeline.backward_input
// ONEF2:      pipeline.send "[[GRAD]]" to 0 mb 3 stages 1 -> 0
// ONEF2-NEXT: pipeline.optimizer_step

// Four stages: the middle ranks receive, compute and pass on. GPipe runs
// every forward before any backward on every rank.
// GPIPE4:      pipeline @train schedule 'gpipe': 4 ranks, 1 chunks, 4 micro-batches, placement [0, 1, 2, 3]
// GPIPE4-NEXT: rank 0: F0 >1:[[A0:[a-z0-9]+]]@0 F1 >1:[[A0]]@1 F2 >1:[[A0]]@2 F3 >1:[[A0]]@3 <1:[[G0:[a-z0-9]+]]@0 BW0 <1:[[G0]]@1 BW1 <1:[[G0]]@2 BW2 <1:[[G0]]@3 BW3 OPT
// GPIPE4-NEXT: rank 1: <0:[[A0]]@0 F0 >2:[[A1:[a-z0-9]+]]@0 <0:[[A0]]@1 F1 >2:[[A1]]@1 <0:[[A0]]@2 F2 >2:[[A1]]@2 <0:[[A0]]@3 F3 >2:[[A1]]@3 <2:[[G1:[a-z0-9]+]]@0 BW0 >0:[[G0]]@0 <2:[[G1]]@1 BW1 >0:[[G0]]@1 <2:[[G1]]@2 BW2 >0:[[G0]]@2 <2:[[G1]]@3 BW3 >0:[[G0]]@3 OPT
// GPIPE4-NEXT: rank 2: <1:[[A1]]@0 F0 >3:[[A2:[a-z0-9]+]]@0 <1:[[A1]]@1 F1 >3:[[A2]]@1 <1:[[A1]]@2 F2 >3:[[A2]]@2 <1:[[A1]]@3 F3 >3:[[A2]]@3 <3:[[G2:[a-z0-9]+]]@0 BW0 >1:[[G1]]@0 <3:[[G2]]@1 BW1 >1:[[G1]]@1 <3:[[G2]]@2 BW2 >1:[[G1]]@2 <3:[[G2]]@3 BW3 >1:[[G1]]@3 OPT
// GPIPE4-NEXT: rank 3: <2:[[A2]]@0 F0 <2:[[A2]]@1 F1 <2:[[A2]]@2 F2 <2:[[A2]]@3 F3 BW0 >2:[[G2]]@0 BW1 >2:[[G2]]@1 BW2 >2:[[G2]]@2 BW3 >2:[[G2]]@3 OPT
// GPIPE4-NEXT: predicted step {{.*}} s, bubble 0.{{[0-9]+}}

// 1F1B on four stages: rank r warms up with 3 - r forwards, so the last
// rank alternates from the start and rank 0 holds four micro-batches.
// ONEF4:      pipeline @train schedule '1f1b': 4 ranks, 1 chunks, 4 micro-batches, placement [0, 1, 2, 3]
// ONEF4-NEXT: rank 0: F0 {{.*}} F1 {{.*}} F2 {{.*}} F3 {{.*}} BW0 {{.*}} BW1 {{.*}} BW2 {{.*}} BW3 OPT
// ONEF4-NEXT: rank 1: {{.*}} F0 {{.*}} F1 {{.*}} F2 {{.*}} BW0 {{.*}} F3 {{.*}} BW1 {{.*}} BW2 {{.*}} BW3 {{.*}} OPT
// ONEF4-NEXT: rank 2: {{.*}} F0 {{.*}} F1 {{.*}} BW0 {{.*}} F2 {{.*}} BW1 {{.*}} F3 {{.*}} BW2 {{.*}} BW3 {{.*}} OPT
// ONEF4-NEXT: rank 3: {{.*}} F0 BW0 {{.*}} F1 BW1 {{.*}} F2 BW2 {{.*}} F3 BW3 {{.*}} OPT

// On one rank no gradient leaves, so `auto` (the default) keeps the
// backward fused: split, the step would be no shorter. (With two ranks or
// more the runs above ask for the fused form; test/Transforms/schedule.mlir
// shows `auto` splitting there.)
// ONE:      rank 0: F0 BW0 F1 BW1 OPT
