// RUN: pipecc-opt %s -split-input-file -pipecc-verify-pipeline -verify-diagnostics | FileCheck %s

// A correct 1F1B program with two tensors crossing the boundary passes and
// is left as it was.
// CHECK-LABEL: pipeline.pipeline @ok
// CHECK: pipeline.program rank 0
// CHECK-NEXT: pipeline.forward stage 0 chunk 0 mb 0
// CHECK-NEXT: pipeline.send "a" to 1 mb 0
pipeline.pipeline @ok stages = 2 chunks = 1 microbatches = 2 schedule = "1f1b" {
  pipeline.program rank 0 {
    pipeline.forward stage 0 chunk 0 mb 0
    pipeline.send "a" to 1 mb 0 : tensor<4x16xf32>
    pipeline.send "b" to 1 mb 0 : tensor<4xf32>
    pipeline.forward stage 0 chunk 0 mb 1
    pipeline.send "a" to 1 mb 1 : tensor<4x16xf32>
    pipeline.send "b" to 1 mb 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 : tensor<4x16xf32>
    pipeline.backward stage 0 chunk 0 mb 0
    pipeline.recv "g" from 1 mb 1 : tensor<4x16xf32>
    pipeline.backward stage 0 chunk 0 mb 1
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    pipeline.recv "a" from 0 mb 0 : tensor<4x16xf32>
    pipeline.recv "b" from 0 mb 0 : tensor<4xf32>
    pipeline.forward stage 1 chunk 0 mb 0
    pipeline.recv "a" from 0 mb 1 : tensor<4x16xf32>
    pipeline.recv "b" from 0 mb 1 : tensor<4xf32>
    pipeline.backward stage 1 chunk 0 mb 0
    pipeline.send "g" to 0 mb 0 : tensor<4x16xf32>
    pipeline.forward stage 1 chunk 0 mb 1
    pipeline.backward stage 1 chunk 0 mb 1
    pipeline.send "g" to 0 mb 1 : tensor<4x16xf32>
    pipeline.optimizer_step
  }
}

// -----

// Split backward, with an all-reduce over both ranks.
// CHECK-LABEL: pipeline.pipeline @split
pipeline.pipeline @split stages = 2 chunks = 1 microbatches = 1 schedule = "zb-h1" {
  pipeline.program rank 0 {
    pipeline.forward stage 0 chunk 0 mb 0
    pipeline.send "act.q0" to 1 mb 0 : tensor<4x16xf32>
    pipeline.recv "grad.q0" from 1 mb 0 : tensor<4x16xf32>
    pipeline.backward_input stage 0 chunk 0 mb 0
    pipeline.backward_weight stage 0 chunk 0 mb 0
    pipeline.all_reduce "tied" over [0, 1] : tensor<8xf32>
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    pipeline.recv "act.q0" from 0 mb 0 : tensor<4x16xf32>
    pipeline.forward stage 1 chunk 0 mb 0
    pipeline.backward_input stage 1 chunk 0 mb 0
    pipeline.send "grad.q0" to 0 mb 0 : tensor<4x16xf32>
    pipeline.backward_weight stage 1 chunk 0 mb 0
    pipeline.all_reduce "tied" over [0, 1] : tensor<8xf32>
    pipeline.optimizer_step
  }
}

// -----

// Rank 0 waits for the gradient before sending the activation that rank 1
// needs to produce it.
pipeline.pipeline @deadlock stages = 2 chunks = 1 microbatches = 1 schedule = "1f1b" {
  pipeline.program rank 0 {
    pipeline.forward stage 0 chunk 0 mb 0
    // expected-error @+1 {{deadlock: rank 0 waits at 'pipeline.recv "grad.q0" from 1 mb 0' while rank 1 waits at 'pipeline.recv "act.q0" from 0 mb 0'}}
    pipeline.recv "grad.q0" from 1 mb 0 : tensor<4x16xf32>
    pipeline.send "act.q0" to 1 mb 0 : tensor<4x16xf32>
    pipeline.backward stage 0 chunk 0 mb 0
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    // expected-note @+1 {{rank 1 waits here}}
    pipeline.recv "act.q0" from 0 mb 0 : tensor<4x16xf32>
    pipeline.forward stage 1 chunk 0 mb 0
    pipeline.backward stage 1 chunk 0 mb 0
    pipeline.send "grad.q0" to 0 mb 0 : tensor<4x16xf32>
    pipeline.optimizer_step
  }
}

// -----

// Both ranks send first: with blocking sends, neither reaches its receive.
pipeline.pipeline @send_send stages = 2 chunks = 1 microbatches = 2 schedule = "1f1b" {
  pipeline.program rank 0 {
    pipeline.forward stage 0 chunk 0 mb 0
    pipeline.send "a" to 1 mb 0 : tensor<4xf32>
    pipeline.forward stage 0 chunk 0 mb 1
    // expected-error @+1 {{deadlock: rank 0 waits at 'pipeline.send "a" to 1 mb 1' while rank 1 waits at 'pipeline.send "g" to 0 mb 0'}}
    pipeline.send "a" to 1 mb 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 : tensor<4xf32>
    pipeline.backward stage 0 chunk 0 mb 0
    pipeline.recv "g" from 1 mb 1 : tensor<4xf32>
    pipeline.backward stage 0 chunk 0 mb 1
  }
  pipeline.program rank 1 {
    pipeline.recv "a" from 0 mb 0 : tensor<4xf32>
    pipeline.forward stage 1 chunk 0 mb 0
    pipeline.backward stage 1 chunk 0 mb 0
    // expected-note @+1 {{rank 1 waits here}}
    pipeline.send "g" to 0 mb 0 : tensor<4xf32>
    pipeline.recv "a" from 0 mb 1 : tensor<4xf32>
    pipeline.forward stage 1 chunk 0 mb 1
    pipeline.backward stage 1 chunk 0 mb 1
    pipeline.send "g" to 0 mb 1 : tensor<4xf32>
  }
}

// -----

pipeline.pipeline @unmatched_send stages = 2 chunks = 1 microbatches = 1 schedule = "gpipe" {
  pipeline.program rank 0 {
    pipeline.forward stage 0 chunk 0 mb 0
    pipeline.send "a" to 1 mb 0 : tensor<4xf32>
    // expected-error @+1 {{unmatched send: rank 0 sends 'b' mb 0 to rank 1, but rank 1 never receives it from rank 0}}
    pipeline.send "b" to 1 mb 0 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 : tensor<4xf32>
    pipeline.backward stage 0 chunk 0 mb 0
  }
  pipeline.program rank 1 {
    pipeline.recv "a" from 0 mb 0 : tensor<4xf32>
    pipeline.forward stage 1 chunk 0 mb 0
    pipeline.backward stage 1 chunk 0 mb 0
    pipeline.send "g" to 0 mb 0 : tensor<4xf32>
  }
}

// -----

pipeline.pipeline @unmatched_recv stages = 2 chunks = 1 microbatches = 2 schedule = "gpipe" {
  pipeline.program rank 0 {
    pipeline.forward stage 0 chunk 0 mb 0
    pipeline.send "a" to 1 mb 0 : tensor<4xf32>
    pipeline.forward stage 0 chunk 0 mb 1
    pipeline.send "a" to 1 mb 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 : tensor<4xf32>
    pipeline.backward stage 0 chunk 0 mb 0
    // expected-error @+1 {{unmatched receive: rank 0 receives 'g' mb 1 from rank 1, but rank 1 never sends it to rank 0}}
    pipeline.recv "g" from 1 mb 1 : tensor<4xf32>
    pipeline.backward stage 0 chunk 0 mb 1
  }
  pipeline.program rank 1 {
    pipeline.recv "a" from 0 mb 0 : tensor<4xf32>
    pipeline.forward stage 1 chunk 0 mb 0
    pipeline.recv "a" from 0 mb 1 : tensor<4xf32>
    pipeline.forward stage 1 chunk 0 mb 1
    pipeline.backward stage 1 chunk 0 mb 0
    pipeline.send "g" to 0 mb 0 : tensor<4xf32>
    pipeline.backward stage 1 chunk 0 mb 1
  }
}

// -----

pipeline.pipeline @out_of_order stages = 2 chunks = 1 microbatches = 2 schedule = "gpipe" {
  pipeline.program rank 0 {
    pipeline.forward stage 0 chunk 0 mb 0
    // expected-note @+1 {{rank 0 sends 'a' here}}
    pipeline.send "a" to 1 mb 0 : tensor<4xf32>
    pipeline.forward stage 0 chunk 0 mb 1
    pipeline.send "a" to 1 mb 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 : tensor<4xf32>
    pipeline.backward stage 0 chunk 0 mb 0
    pipeline.recv "g" from 1 mb 1 : tensor<4xf32>
    pipeline.backward stage 0 chunk 0 mb 1
  }
  pipeline.program rank 1 {
    // expected-error @+1 {{out-of-order messages: rank 1 receives 'a' mb 1 from rank 0 where rank 0 sends 'a' mb 0; messages between two ranks match in order}}
    pipeline.recv "a" from 0 mb 1 : tensor<4xf32>
    pipeline.recv "a" from 0 mb 0 : tensor<4xf32>
    pipeline.forward stage 1 chunk 0 mb 0
    pipeline.forward stage 1 chunk 0 mb 1
    pipeline.backward stage 1 chunk 0 mb 0
    pipeline.send "g" to 0 mb 0 : tensor<4xf32>
    pipeline.backward stage 1 chunk 0 mb 1
    pipeline.send "g" to 0 mb 1 : tensor<4xf32>
  }
}

// -----

pipeline.pipeline @type_mismatch stages = 2 chunks = 1 microbatches = 1 schedule = "gpipe" {
  pipeline.program rank 0 {
    pipeline.forward stage 0 chunk 0 mb 0
    // expected-note @+1 {{sent here}}
    pipeline.send "a" to 1 mb 0 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 : tensor<4xf32>
    pipeline.backward stage 0 chunk 0 mb 0
  }
  pipeline.program rank 1 {
    // expected-error @+1 {{rank 1 receives 'a' mb 0 as 'tensor<8xf32>' but rank 0 sends it as 'tensor<4xf32>'}}
    pipeline.recv "a" from 0 mb 0 : tensor<8xf32>
    pipeline.forward stage 1 chunk 0 mb 0
    pipeline.backward stage 1 chunk 0 mb 0
    pipeline.send "g" to 0 mb 0 : tensor<4xf32>
  }
}

// -----

pipeline.pipeline @missing_forward stages = 2 chunks = 1 microbatches = 2 schedule = "gpipe" {
  pipeline.program rank 0 {
    pipeline.forward stage 0 chunk 0 mb 0
    pipeline.send "a" to 1 mb 0 : tensor<4xf32>
    pipeline.forward stage 0 chunk 0 mb 1
    pipeline.send "a" to 1 mb 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 : tensor<4xf32>
    pipeline.backward stage 0 chunk 0 mb 0
    pipeline.recv "g" from 1 mb 1 : tensor<4xf32>
    pipeline.backward stage 0 chunk 0 mb 1
  }
  // expected-error @+1 {{rank 1 never runs the forward of stage 1 chunk 0 mb 1}}
  pipeline.program rank 1 {
    pipeline.recv "a" from 0 mb 0 : tensor<4xf32>
    pipeline.forward stage 1 chunk 0 mb 0
    pipeline.recv "a" from 0 mb 1 : tensor<4xf32>
    pipeline.backward stage 1 chunk 0 mb 0
    pipeline.send "g" to 0 mb 0 : tensor<4xf32>
    pipeline.backward stage 1 chunk 0 mb 1
    pipeline.send "g" to 0 mb 1 : tensor<4xf32>
  }
}

// -----

pipeline.pipeline @repeated_forward stages = 1 chunks = 1 microbatches = 1 schedule = "gpipe" {
  pipeline.program rank 0 {
    // expected-note @+1 {{first run here}}
    pipeline.forward stage 0 chunk 0 mb 0
    // expected-error @+1 {{rank 0 repeats 'pipeline.forward stage 0 chunk 0 mb 0'}}
    pipeline.forward stage 0 chunk 0 mb 0
    pipeline.backward stage 0 chunk 0 mb 0
  }
}

// -----

pipeline.pipeline @backward_first stages = 1 chunks = 1 microbatches = 1 schedule = "gpipe" {
  pipeline.program rank 0 {
    // expected-error @+1 {{rank 0 runs 'pipeline.backward_input stage 0 chunk 0 mb 0' before its forward}}
    pipeline.backward_input stage 0 chunk 0 mb 0
    // expected-note @+1 {{which only runs here}}
    pipeline.forward stage 0 chunk 0 mb 0
    pipeline.backward_weight stage 0 chunk 0 mb 0
  }
}

// -----

pipeline.pipeline @no_weight_gradient stages = 1 chunks = 1 microbatches = 1 schedule = "zb-h1" {
  pipeline.program rank 0 {
    pipeline.forward stage 0 chunk 0 mb 0
    // expected-error @+1 {{rank 0 runs 'pipeline.backward_input stage 0 chunk 0 mb 0' but never its weight gradient (W)}}
    pipeline.backward_input stage 0 chunk 0 mb 0
  }
}

// -----

// Rank 1 receives only one of the two tensors of micro-batch 0 before its
// forward.
pipeline.pipeline @early_compute stages = 2 chunks = 1 microbatches = 1 schedule = "gpipe" {
  pipeline.program rank 0 {
    pipeline.forward stage 0 chunk 0 mb 0
    pipeline.send "a" to 1 mb 0 : tensor<4xf32>
    pipeline.send "b" to 1 mb 0 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 : tensor<4xf32>
    pipeline.backward stage 0 chunk 0 mb 0
  }
  pipeline.program rank 1 {
    pipeline.recv "a" from 0 mb 0 : tensor<4xf32>
    // expected-error @+1 {{rank 1 runs 'pipeline.forward stage 1 chunk 0 mb 0' before receiving 'b' mb 0 from rank 0}}
    pipeline.forward stage 1 chunk 0 mb 0
    // expected-note @+1 {{received only here}}
    pipeline.recv "b" from 0 mb 0 : tensor<4xf32>
    pipeline.backward stage 1 chunk 0 mb 0
    pipeline.send "g" to 0 mb 0 : tensor<4xf32>
  }
}

// -----

pipeline.pipeline @not_neighbours stages = 3 chunks = 1 microbatches = 1 schedule = "gpipe" {
  pipeline.program rank 0 {
    pipeline.forward stage 0 chunk 0 mb 0
    // expected-error @+1 {{messages rank 2 from rank 0; with one chunk per stage, ranks only exchange tensors with their neighbours}}
    pipeline.send "a" to 2 mb 0 : tensor<4xf32>
    pipeline.backward stage 0 chunk 0 mb 0
  }
  pipeline.program rank 1 {
  }
  pipeline.program rank 2 {
  }
}

// -----

// expected-error @+1 {{has 2 chunks per stage; only one chunk per stage can be checked}}
pipeline.pipeline @chunks stages = 1 chunks = 2 microbatches = 1 schedule = "interleaved-1f1b" {
  pipeline.program rank 0 {
  }
}
