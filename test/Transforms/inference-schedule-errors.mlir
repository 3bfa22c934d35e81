// RUN: pipecc-opt %s -split-input-file -verify-diagnostics -pipecc-schedule-inference

// Only forward functions run in an inference pipeline.
func.func @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64} {
  return
}
// expected-error @+1 {{an inference pipeline runs forward functions only, found @stage0_backward_input}}
func.func @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64} {
  return
}

// -----

// expected-error @+1 {{an inference pipeline runs one virtual stage, found 2}}
module {
  func.func @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64} {
    return
  }
  func.func @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64} {
    return
  }
}

// -----

// expected-error @+1 {{the module has no pipeline.stage_table; run pipecc-split-stages first}}
module {
}
