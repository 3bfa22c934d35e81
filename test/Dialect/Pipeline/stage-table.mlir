// The typed stage contract: it round-trips, and the dialect rejects a broken
// one (wrong count, a stage off its placement, a missing function, a
// negative cost) with a verifier error.
// RUN: pipecc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: pipeline.stage_table = #pipeline.stage_table<ranks = 2, chunks = 2, placement = "v", device = "host-cpu", stages = [#pipeline.virtual_stage<index = 0, rank = 0, chunk = 0, forward = @f, backward_input = @b, backward_weight = @w, cost = <forward = 1.000000e+00 : f64
// CHECK-SAME: #pipeline.virtual_stage<index = 3, rank = 0, chunk = 1, forward = @f
module attributes {pipeline.stage_table = #pipeline.stage_table<ranks = 2, chunks = 2, placement = "v", device = "host-cpu", stages = [
  #pipeline.virtual_stage<index = 0, rank = 0, chunk = 0, forward = @f, backward_input = @b, backward_weight = @w, cost = <forward = 1.0, backward_input = 1.0, backward_weight = 0.5, activation_bytes = 4, stash_bytes = 0, parameter_bytes = 8, boundary_bytes = 4>>,
  #pipeline.virtual_stage<index = 1, rank = 1, chunk = 0, forward = @f, cost = <forward = 1.0, backward_input = 1.0, backward_weight = 0.5, activation_bytes = 4, stash_bytes = 0, parameter_bytes = 8, boundary_bytes = 4>>,
  #pipeline.virtual_stage<index = 2, rank = 1, chunk = 1, forward = @f, cost = <forward = 1.0, backward_input = 1.0, backward_weight = 0.5, activation_bytes = 4, stash_bytes = 0, parameter_bytes = 8, boundary_bytes = 4>>,
  #pipeline.virtual_stage<index = 3, rank = 0, chunk = 1, forward = @f, cost = <forward = 1.0, backward_input = 1.0, backward_weight = 0.5, activation_bytes = 4, stash_bytes = 0, parameter_bytes = 8, boundary_bytes = 4>>]>} {
  func.func @f() { return }
  func.func @b() { return }
  func.func @w() { return }
}

// -----

// expected-error @+1 {{stage table lists 1 virtual stages, expected ranks * chunks = 2}}
module attributes {pipeline.stage_table = #pipeline.stage_table<ranks = 2, chunks = 1, placement = "linear", device = "", stages = [
  #pipeline.virtual_stage<index = 0, rank = 0, chunk = 0, forward = @f, cost = <forward = 1.0, backward_input = 1.0, backward_weight = 1.0, activation_bytes = 0, stash_bytes = 0, parameter_bytes = 0, boundary_bytes = 0>>]>} {
  func.func @f() { return }
}

// -----

// expected-error @+1 {{virtual stage 2 is on rank 1 chunk 1, but the interleaved placement puts it on rank 0 chunk 1}}
module attributes {pipeline.stage_table = #pipeline.stage_table<ranks = 2, chunks = 2, placement = "interleaved", device = "", stages = [
  #pipeline.virtual_stage<index = 0, rank = 0, chunk = 0, forward = @f, cost = <forward = 1.0, backward_input = 1.0, backward_weight = 1.0, activation_bytes = 0, stash_bytes = 0, parameter_bytes = 0, boundary_bytes = 0>>,
  #pipeline.virtual_stage<index = 1, rank = 1, chunk = 0, forward = @f, cost = <forward = 1.0, backward_input = 1.0, backward_weight = 1.0, activation_bytes = 0, stash_bytes = 0, parameter_bytes = 0, boundary_bytes = 0>>,
  #pipeline.virtual_stage<index = 2, rank = 1, chunk = 1, forward = @f, cost = <forward = 1.0, backward_input = 1.0, backward_weight = 1.0, activation_bytes = 0, stash_bytes = 0, parameter_bytes = 0, boundary_bytes = 0>>,
  #pipeline.virtual_stage<index = 3, rank = 0, chunk = 1, forward = @f, cost = <forward = 1.0, backward_input = 1.0, backward_weight = 1.0, activation_bytes = 0, stash_bytes = 0, parameter_bytes = 0, boundary_bytes = 0>>]>} {
  func.func @f() { return }
}

// -----

// expected-error @+1 {{pipeline.stage_table: virtual stage 0 names @missing, which is not a function of the module}}
module attributes {pipeline.stage_table = #pipeline.stage_table<ranks = 1, chunks = 1, placement = "linear", device = "", stages = [
  #pipeline.virtual_stage<index = 0, rank = 0, chunk = 0, forward = @missing, cost = <forward = 1.0, backward_input = 1.0, backward_weight = 1.0, activation_bytes = 0, stash_bytes = 0, parameter_bytes = 0, boundary_bytes = 0>>]>} {
}

// -----

// expected-error @+4 {{stage cost backward_weight must be finite and non-negative seconds, got -1}}
// expected-error @+3 {{failed to parse Pipeline_VirtualStageAttr parameter 'cost'}}
// expected-error @+2 {{failed to parse Pipeline_StageTableAttr parameter 'stages'}}
module attributes {pipeline.stage_table = #pipeline.stage_table<ranks = 1, chunks = 1, placement = "linear", device = "", stages = [
  #pipeline.virtual_stage<index = 0, rank = 0, chunk = 0, forward = @f, cost = <forward = 1.0, backward_input = 1.0, backward_weight = -1.0, activation_bytes = 0, stash_bytes = 0, parameter_bytes = 0, boundary_bytes = 0>>]>} {
  func.func @f() { return }
}
