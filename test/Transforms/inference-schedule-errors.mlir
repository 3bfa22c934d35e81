// RUN: pipecc-opt %s -split-input-file -verify-diagnostics -pipecc-schedule-inference

// Only stage 0's forward function runs in an inference pipeline.
// expected-error @+1 {{an inference pipeline runs stage 0's forward function only, found @stage0_backward_input}}
func.func @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64} {
  return
}

// -----

// expected-error @+1 {{no forward function to schedule; run pipecc-split-stages{inference} first}}
module {
}
