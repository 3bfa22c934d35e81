// RUN: pipecc-opt %s -pipecc-schedule="schedule=1f1b microbatches=2" -pipecc-verify-pipeline | FileCheck %s

// Stage 0 has no parameters, so no gradient crosses back: the boundary's
// gradient message disappears and the programs still verify.
func.func private @stage0_forward(tensor<4xf32> {pipeline.tensor = "x"}) -> (tensor<4xf32> {pipeline.tensor = "a"}) attributes {pipeline.kind = "forward", pipeline.recv = [], pipeline.send = ["a"], pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.recv = [], pipeline.send = [], pipeline.stage = 0 : i64}
func.func private @stage1_forward(tensor<4xf32> {pipeline.tensor = "a"}) -> (tensor<f32> {pipeline.tensor = "loss"}) attributes {pipeline.kind = "forward", pipeline.recv = ["a"], pipeline.send = [], pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.recv = [], pipeline.send = [], pipeline.stage = 1 : i64}

// No stage has a W, so `split-backward=auto` (the default) keeps each
// backward one action.
// CHECK-LABEL: pipeline.program rank 0 {
// CHECK-NOT:   pipeline.recv
// CHECK:       pipeline.backward @stage0_backward_input stage 0 mb 0
// CHECK-NOT:   pipeline.recv
// CHECK:       pipeline.optimizer_step
// CHECK-LABEL: pipeline.program rank 1 {
// CHECK-NOT:   pipeline.send
// CHECK:       pipeline.backward @stage1_backward_input stage 1 mb 0
// CHECK-NOT:   pipeline.send
// CHECK:       pipeline.optimizer_step
// CHECK-NOT:   pipeline.backward_input
