// RUN: pipecc-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{needs at least one stage, got 0}}
pipeline.pipeline @p stages = 0 chunks = 1 microbatches = 1 schedule = "gpipe" {
}

// -----

// expected-error @+1 {{needs at least one micro-batch, got 0}}
pipeline.pipeline @p stages = 1 chunks = 1 microbatches = 0 schedule = "gpipe" {
  pipeline.program rank 0 {
  }
}

// -----

// expected-error @+1 {{has no program for rank 1 of 2}}
pipeline.pipeline @p stages = 2 chunks = 1 microbatches = 1 schedule = "gpipe" {
  pipeline.program rank 0 {
  }
}

// -----

pipeline.pipeline @p stages = 2 chunks = 1 microbatches = 1 schedule = "gpipe" {
  // expected-note @+1 {{first program of that rank}}
  pipeline.program rank 0 {
  }
  // expected-error @+1 {{repeats rank 0}}
  pipeline.program rank 0 {
  }
}

// -----

pipeline.pipeline @p stages = 2 chunks = 1 microbatches = 1 schedule = "gpipe" {
  pipeline.program rank 0 {
  }
  // expected-error @+1 {{rank 2 is out of range [0, 2)}}
  pipeline.program rank 2 {
  }
}

// -----

pipeline.pipeline @p stages = 2 chunks = 1 microbatches = 2 schedule = "gpipe" {
  pipeline.program rank 0 {
    // expected-error @+1 {{runs stage 1 but rank 0 holds stage 0}}
    pipeline.forward stage 1 chunk 0 mb 0
  }
  pipeline.program rank 1 {
  }
}

// -----

pipeline.pipeline @p stages = 2 chunks = 1 microbatches = 2 schedule = "gpipe" {
  pipeline.program rank 0 {
    // expected-error @+1 {{micro-batch 2 is out of range [0, 2)}}
    pipeline.backward_input stage 0 chunk 0 mb 2
  }
  pipeline.program rank 1 {
  }
}

// -----

pipeline.pipeline @p stages = 2 chunks = 2 microbatches = 2 schedule = "interleaved-1f1b" {
  pipeline.program rank 0 {
    // expected-error @+1 {{chunk 2 is out of range [0, 2)}}
    pipeline.backward_weight stage 0 chunk 2 mb 0
  }
  pipeline.program rank 1 {
  }
}

// -----

pipeline.pipeline @p stages = 2 chunks = 1 microbatches = 1 schedule = "gpipe" {
  pipeline.program rank 0 {
    // expected-error @+1 {{names its own rank 0 as peer; a rank cannot message itself}}
    pipeline.send "act.0" to 0 mb 0 : tensor<4xf32>
  }
  pipeline.program rank 1 {
  }
}

// -----

pipeline.pipeline @p stages = 2 chunks = 1 microbatches = 1 schedule = "gpipe" {
  pipeline.program rank 0 {
  }
  pipeline.program rank 1 {
    // expected-error @+1 {{peer rank 5 is out of range [0, 2)}}
    pipeline.recv "act.0" from 5 mb 0 : tensor<4xf32>
  }
}

// -----

pipeline.pipeline @p stages = 2 chunks = 1 microbatches = 1 schedule = "gpipe" {
  pipeline.program rank 0 {
    // expected-error @+1 {{'type' failed to satisfy constraint: type attribute of statically shaped tensor}}
    pipeline.send "act.0" to 1 mb 0 : tensor<?xf32>
  }
  pipeline.program rank 1 {
  }
}

// -----

pipeline.pipeline @p stages = 3 chunks = 1 microbatches = 1 schedule = "gpipe" {
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
pipeline.pipeline @p stages = 2 chunks = 1 microbatches = 2 schedule = "zb-h1" {
  pipeline.program rank 0 {
    pipeline.backward_weight stage 0 chunk 0 mb 0
    // expected-error @+1 {{comes before 'pipeline.backward_weight' of micro-batch 1; it must follow the rank's last weight gradient}}
    pipeline.all_reduce "grad.w" over [0, 1] : tensor<4xf32>
    pipeline.backward_weight stage 0 chunk 0 mb 1
  }
  pipeline.program rank 1 {
  }
}

// -----

pipeline.pipeline @p stages = 2 chunks = 1 microbatches = 1 schedule = "gpipe" {
  pipeline.program rank 0 {
    // expected-error @+1 {{repeats rank 0 in its group}}
    pipeline.all_reduce "grad.w" over [0, 0] : tensor<4xf32>
  }
  pipeline.program rank 1 {
  }
}

// -----

// expected-error @+1 {{'pipeline.forward' op expects parent op 'pipeline.program'}}
pipeline.forward stage 0 chunk 0 mb 0

// -----

pipeline.pipeline @p stages = 1 chunks = 1 microbatches = 1 schedule = "gpipe" {
  // expected-error @+1 {{is not allowed directly in a pipeline; only 'pipeline.program' is}}
  "graph.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
}
