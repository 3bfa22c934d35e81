// RUN: pipecc-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{needs at least one rank, got 0}}
pipeline.pipeline @p ranks = 0 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [] {
}

// -----

// expected-error @+1 {{needs at least one micro-batch, got 0}}
pipeline.pipeline @p ranks = 1 chunks = 1 microbatches = 0 schedule = "gpipe" placement = [0] {
  pipeline.program rank 0 {
  }
}

// -----

// expected-error @+1 {{places 3 virtual stages; 2 ranks x 2 chunks need 4}}
pipeline.pipeline @p ranks = 2 chunks = 2 microbatches = 1 schedule = "gpipe" placement = [0, 1, 0] {
}

// -----

// expected-error @+1 {{places virtual stage 1 on rank 2, out of range [0, 2)}}
pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 2] {
}

// -----

// Every rank holds exactly `chunks` virtual stages.
// expected-error @+1 {{places 3 virtual stages on rank 0; every rank holds exactly 2}}
pipeline.pipeline @p ranks = 2 chunks = 2 microbatches = 1 schedule = "interleaved-1f1b" placement = [0, 1, 0, 0] {
}

// -----

// expected-error @+1 {{lists 1 rank busy times for 2 ranks}}
pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1] attributes {rank_busy_s = array<f64: 1.0>} {
  pipeline.program rank 0 {
  }
  pipeline.program rank 1 {
  }
}

// -----

// expected-error @+1 {{has no program for rank 1 of 2}}
pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
  }
}

// -----

pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1] {
  // expected-note @+1 {{first program of that rank}}
  pipeline.program rank 0 {
  }
  // expected-error @+1 {{repeats rank 0}}
  pipeline.program rank 0 {
  }
}

// -----

pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
  }
  // expected-error @+1 {{rank 2 is out of range [0, 2)}}
  pipeline.program rank 2 {
  }
}

// -----

// A compute runs a virtual stage its rank holds.
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 2 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    // expected-error @+1 {{runs virtual stage 1 in the program of rank 0, but the placement puts it on rank 1}}
    pipeline.forward @stage1_forward stage 1 mb 0
  }
  pipeline.program rank 1 {
  }
}

// -----

// Interleaved: rank 1 holds virtual stages 1 and 3, not 2.
func.func private @stage2_forward() attributes {pipeline.kind = "forward", pipeline.stage = 2 : i64}
pipeline.pipeline @p ranks = 2 chunks = 2 microbatches = 2 schedule = "interleaved-1f1b" placement = [0, 1, 0, 1] {
  pipeline.program rank 0 {
  }
  pipeline.program rank 1 {
    // expected-error @+1 {{runs virtual stage 2 in the program of rank 1, but the placement puts it on rank 0}}
    pipeline.forward @stage2_forward stage 2 mb 0
  }
}

// -----

pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 2 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    // expected-error @+1 {{calls @stage0_forward, which is not a symbol of the module}}
    pipeline.forward @stage0_forward stage 0 mb 0
  }
  pipeline.program rank 1 {
  }
}

// -----

// expected-note @+1 {{function defined here}}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 2 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    // expected-error @+1 {{calls @stage0_backward_input for the forward of virtual stage 0, but it is the backward_input of virtual stage 0}}
    pipeline.forward @stage0_backward_input stage 0 mb 0
  }
  pipeline.program rank 1 {
  }
}

// -----

// expected-note @+1 {{function defined here}}
func.func private @stage2_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 2 : i64}
pipeline.pipeline @p ranks = 2 chunks = 2 microbatches = 2 schedule = "zb-v" placement = [0, 1, 1, 0] {
  pipeline.program rank 0 {
    // expected-error @+1 {{calls @stage2_backward_weight for the backward_weight of virtual stage 3, but it is the backward_weight of virtual stage 2}}
    pipeline.backward_weight @stage2_backward_weight stage 3 mb 0
  }
  pipeline.program rank 1 {
  }
}

// -----

func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 2 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    // expected-error @+1 {{micro-batch 2 is out of range [0, 2)}}
    pipeline.backward_input @stage0_backward_input stage 0 mb 2
  }
  pipeline.program rank 1 {
  }
}

// -----

pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 2 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    // expected-error @+1 {{virtual stage 2 is out of range [0, 2)}}
    pipeline.backward_weight @f stage 2 mb 0
  }
  pipeline.program rank 1 {
  }
}

// -----

pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    // expected-error @+1 {{names its own rank 0 as peer; a rank cannot message itself}}
    pipeline.send "act.0" to 0 mb 0 stages 0 -> 1 : tensor<4xf32>
  }
  pipeline.program rank 1 {
  }
}

// -----

pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
  }
  pipeline.program rank 1 {
    // expected-error @+1 {{peer rank 5 is out of range [0, 2)}}
    pipeline.recv "act.0" from 5 mb 0 stages 0 -> 1 : tensor<4xf32>
  }
}

// -----

// Messages join neighbouring virtual stages.
pipeline.pipeline @p ranks = 2 chunks = 2 microbatches = 1 schedule = "interleaved-1f1b" placement = [0, 1, 0, 1] {
  pipeline.program rank 0 {
    // expected-error @+1 {{carries a tensor from virtual stage 0 to 3; messages go between neighbouring virtual stages}}
    pipeline.send "act.0" to 1 mb 0 stages 0 -> 3 : tensor<4xf32>
  }
  pipeline.program rank 1 {
  }
}

// -----

// The V's turn (virtual stages 1 and 2 on rank 1) is no message, and a
// message's ranks are its virtual stages' ranks.
pipeline.pipeline @p ranks = 2 chunks = 2 microbatches = 1 schedule = "zb-v" placement = [0, 1, 1, 0] {
  pipeline.program rank 0 {
    // expected-error @+1 {{carries a tensor from virtual stage 1 (rank 1) to virtual stage 2 (rank 1) as a message from rank 0 to rank 1}}
    pipeline.send "act.1" to 1 mb 0 stages 1 -> 2 : tensor<4xf32>
  }
  pipeline.program rank 1 {
  }
}

// -----

pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    // expected-error @+1 {{'type' failed to satisfy constraint: type attribute of statically shaped tensor}}
    pipeline.send "act.0" to 1 mb 0 stages 0 -> 1 : tensor<?xf32>
  }
  pipeline.program rank 1 {
  }
}

// -----

pipeline.pipeline @p ranks = 3 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1, 2] {
  pipeline.program rank 0 {
    // expected-error @+1 {{group does not include the program's own rank 0}}
    pipeline.all_reduce "grad.w" over [1, 2] : tensor<4xf32>
  }
  pipeline.program rank 1 {
  }
  pipeline.program rank 2 {
  }
}

// -----

// A gradient is summed once it is complete: after the rank's last W.
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 2 schedule = "zb-h1" placement = [0, 1] {
  pipeline.program rank 0 {
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 0
    // expected-error @+1 {{comes before 'pipeline.backward_weight' of micro-batch 1; it must follow the rank's last weight gradient}}
    pipeline.all_reduce "grad.w" over [0, 1] : tensor<4xf32>
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 1
  }
  pipeline.program rank 1 {
  }
}

// -----

pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    // expected-error @+1 {{repeats rank 0 in its group}}
    pipeline.all_reduce "grad.w" over [0, 0] : tensor<4xf32>
  }
  pipeline.program rank 1 {
  }
}

// -----

// expected-error @+1 {{'pipeline.forward' op expects parent op 'pipeline.program'}}
pipeline.forward @f stage 0 mb 0

// -----

pipeline.pipeline @p ranks = 1 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0] {
  // expected-error @+1 {{is not allowed directly in a pipeline; only 'pipeline.program' is}}
  "graph.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
}

// -----

func.func private @stage0_backward_weight_x2() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64, pipeline.microbatches_per_call = 2 : i64}
pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 4 schedule = "zb-h1" placement = [0, 1] {
  pipeline.program rank 0 {
    // expected-error @+1 {{covers micro-batches 3 to 4, out of range [0, 4)}}
    pipeline.backward_weight @stage0_backward_weight_x2 stage 0 mb 3 count 2
  }
  pipeline.program rank 1 {
  }
}

// -----

// A negative count (the attribute's getter is unsigned) is out of range,
// not wrapped round to a range that fits.
func.func private @stage0_backward_weight_x2() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64, pipeline.microbatches_per_call = 2 : i64}
pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 4 schedule = "zb-h1" placement = [0, 1] {
  pipeline.program rank 0 {
    // expected-error @+1 {{covers micro-batches 3 to 1, out of range [0, 4)}}
    pipeline.backward_weight @stage0_backward_weight_x2 stage 0 mb 3 count -1
  }
  pipeline.program rank 1 {
  }
}

// -----

// expected-note @+1 {{function defined here}}
func.func private @stage0_backward_weight_x2() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64, pipeline.microbatches_per_call = 2 : i64}
pipeline.pipeline @p ranks = 2 chunks = 1 microbatches = 4 schedule = "zb-h1" placement = [0, 1] {
  pipeline.program rank 0 {
    // expected-error @+1 {{runs 1 micro-batches in one call of @stage0_backward_weight_x2, which takes 2}}
    pipeline.backward_weight @stage0_backward_weight_x2 stage 0 mb 0
  }
  pipeline.program rank 1 {
  }
}
