// RUN: pipecc-opt %s -split-input-file -pipecc-verify-pipeline -verify-diagnostics | FileCheck %s

// The verifier runs the scheduling library on the programs; the actions
// the library blames carry its message (error) and notes. Stage functions
// are declarations: the verifier needs their roles, not their bodies.

// A correct 1F1B program with two tensors crossing the boundary passes and
// is left as it was.
// CHECK-LABEL: pipeline.pipeline @ok
// CHECK: pipeline.program rank 0
// CHECK-NEXT: pipeline.forward @stage0_forward stage 0 mb 0
// CHECK-NEXT: pipeline.send "a" to 1 mb 0 stages 0 -> 1
func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}
pipeline.pipeline @ok ranks = 2 chunks = 1 microbatches = 2 schedule = "1f1b" placement = [0, 1] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    pipeline.send "a" to 1 mb 0 stages 0 -> 1 : tensor<4x16xf32>
    pipeline.send "b" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage0_forward stage 0 mb 1
    pipeline.send "a" to 1 mb 1 stages 0 -> 1 : tensor<4x16xf32>
    pipeline.send "b" to 1 mb 1 stages 0 -> 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 stages 1 -> 0 : tensor<4x16xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
    pipeline.recv "g" from 1 mb 1 stages 1 -> 0 : tensor<4x16xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 1
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    pipeline.recv "a" from 0 mb 0 stages 0 -> 1 : tensor<4x16xf32>
    pipeline.recv "b" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage1_forward stage 1 mb 0
    pipeline.recv "a" from 0 mb 1 stages 0 -> 1 : tensor<4x16xf32>
    pipeline.recv "b" from 0 mb 1 stages 0 -> 1 : tensor<4xf32>
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
    pipeline.send "g" to 0 mb 0 stages 1 -> 0 : tensor<4x16xf32>
    pipeline.forward @stage1_forward stage 1 mb 1
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 1
    pipeline.send "g" to 0 mb 1 stages 1 -> 0 : tensor<4x16xf32>
    pipeline.optimizer_step
  }
}

// -----

// Split backward, with an all-reduce over both ranks.
// CHECK-LABEL: pipeline.pipeline @split
func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}
pipeline.pipeline @split ranks = 2 chunks = 1 microbatches = 1 schedule = "zb-h1" placement = [0, 1] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    pipeline.send "a" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward_input @stage0_backward_input stage 0 mb 0
    pipeline.backward_weight @stage0_backward_weight stage 0 mb 0
    pipeline.all_reduce "tied" over [0, 1] : tensor<8xf32>
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    pipeline.recv "a" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage1_forward stage 1 mb 0
    pipeline.backward_input @stage1_backward_input stage 1 mb 0
    pipeline.send "g" to 0 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward_weight @stage1_backward_weight stage 1 mb 0
    pipeline.all_reduce "tied" over [0, 1] : tensor<8xf32>
    pipeline.optimizer_step
  }
}

// -----

// A V (the stage table says so): rank 0 holds virtual stages 0 and 3,
// rank 1 stages 1 and 2, whose hand-off at the turn is no message.
// CHECK-LABEL: pipeline.pipeline @v
module attributes {pipeline.partition = {chunks = 2 : i64, placement = "v"}} {
  func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
  func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
  func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
  func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
  func.func private @stage2_forward() attributes {pipeline.kind = "forward", pipeline.stage = 2 : i64}
  func.func private @stage2_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 2 : i64}
  func.func private @stage3_forward() attributes {pipeline.kind = "forward", pipeline.stage = 3 : i64}
  func.func private @stage3_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 3 : i64}
  pipeline.pipeline @v ranks = 2 chunks = 2 microbatches = 1 schedule = "gpipe" placement = [0, 1, 1, 0] {
    pipeline.program rank 0 {
      pipeline.forward @stage0_forward stage 0 mb 0
      pipeline.send "x" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
      pipeline.recv "y" from 1 mb 0 stages 2 -> 3 : tensor<4xf32>
      pipeline.forward @stage3_forward stage 3 mb 0
      pipeline.backward @stage3_backward_input stage 3 mb 0
      pipeline.send "dy" to 1 mb 0 stages 3 -> 2 : tensor<4xf32>
      pipeline.recv "dx" from 1 mb 0 stages 1 -> 0 : tensor<4xf32>
      pipeline.backward @stage0_backward_input stage 0 mb 0
      pipeline.optimizer_step
    }
    pipeline.program rank 1 {
      pipeline.recv "x" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
      pipeline.forward @stage1_forward stage 1 mb 0
      pipeline.forward @stage2_forward stage 2 mb 0
      pipeline.send "y" to 0 mb 0 stages 2 -> 3 : tensor<4xf32>
      pipeline.recv "dy" from 0 mb 0 stages 3 -> 2 : tensor<4xf32>
      pipeline.backward @stage2_backward_input stage 2 mb 0
      pipeline.backward @stage1_backward_input stage 1 mb 0
      pipeline.send "dx" to 0 mb 0 stages 1 -> 0 : tensor<4xf32>
      pipeline.optimizer_step
    }
  }
}

// -----

// The op's placement must be the stage table's (here linear: no
// partition says otherwise).
func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
func.func private @stage2_forward() attributes {pipeline.kind = "forward", pipeline.stage = 2 : i64}
func.func private @stage2_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 2 : i64}
func.func private @stage3_forward() attributes {pipeline.kind = "forward", pipeline.stage = 3 : i64}
func.func private @stage3_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 3 : i64}
// expected-error @+1 {{places its virtual stages on ranks [0, 1, 1, 0] but the stage table places them on [0, 1, 2, 3]}}
pipeline.pipeline @v_linear_table ranks = 2 chunks = 2 microbatches = 1 schedule = "gpipe" placement = [0, 1, 1, 0] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    pipeline.send "x" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.recv "y" from 1 mb 0 stages 2 -> 3 : tensor<4xf32>
    pipeline.forward @stage3_forward stage 3 mb 0
    pipeline.backward @stage3_backward_input stage 3 mb 0
    pipeline.send "dy" to 1 mb 0 stages 3 -> 2 : tensor<4xf32>
    pipeline.recv "dx" from 1 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage0_backward_input stage 0 mb 0
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    pipeline.recv "x" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage1_forward stage 1 mb 0
    pipeline.forward @stage2_forward stage 2 mb 0
    pipeline.send "y" to 0 mb 0 stages 2 -> 3 : tensor<4xf32>
    pipeline.recv "dy" from 0 mb 0 stages 3 -> 2 : tensor<4xf32>
    pipeline.backward @stage2_backward_input stage 2 mb 0
    pipeline.backward @stage1_backward_input stage 1 mb 0
    pipeline.send "dx" to 0 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.optimizer_step
  }
}

// -----

// On one rank, the turn of the V still orders stage 1 before stage 2.
module attributes {pipeline.partition = {chunks = 2 : i64, placement = "v"}} {
  func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
  func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
  func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
  func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
  func.func private @stage2_forward() attributes {pipeline.kind = "forward", pipeline.stage = 2 : i64}
  func.func private @stage2_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 2 : i64}
  func.func private @stage3_forward() attributes {pipeline.kind = "forward", pipeline.stage = 3 : i64}
  func.func private @stage3_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 3 : i64}
  // expected-error @+1 {{schedule 'gpipe' cannot run: ranks wait on each other in a cycle: rank 1 is blocked at position 0 on F(s1 c1 m0), which needs F(s1 c0 m0) at position 1 on the same rank}}
  pipeline.pipeline @v_turn ranks = 2 chunks = 2 microbatches = 1 schedule = "gpipe" placement = [0, 1, 1, 0] {
    pipeline.program rank 0 {
      pipeline.forward @stage0_forward stage 0 mb 0
      pipeline.send "x" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
      pipeline.recv "y" from 1 mb 0 stages 2 -> 3 : tensor<4xf32>
      pipeline.forward @stage3_forward stage 3 mb 0
      pipeline.backward @stage3_backward_input stage 3 mb 0
      pipeline.send "dy" to 1 mb 0 stages 3 -> 2 : tensor<4xf32>
      pipeline.recv "dx" from 1 mb 0 stages 1 -> 0 : tensor<4xf32>
      pipeline.backward @stage0_backward_input stage 0 mb 0
      pipeline.optimizer_step
    }
    pipeline.program rank 1 {
      pipeline.recv "x" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
      pipeline.forward @stage2_forward stage 2 mb 0
      pipeline.forward @stage1_forward stage 1 mb 0
      pipeline.send "y" to 0 mb 0 stages 2 -> 3 : tensor<4xf32>
      pipeline.recv "dy" from 0 mb 0 stages 3 -> 2 : tensor<4xf32>
      pipeline.backward @stage2_backward_input stage 2 mb 0
      pipeline.backward @stage1_backward_input stage 1 mb 0
      pipeline.send "dx" to 0 mb 0 stages 1 -> 0 : tensor<4xf32>
      pipeline.optimizer_step
    }
  }
}

// -----

// Rank 0 waits for the gradient before sending the activation that rank 1
// needs to produce it: the deadlock lands on both waiting ops.
func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}
pipeline.pipeline @deadlock ranks = 2 chunks = 1 microbatches = 1 schedule = "1f1b" placement = [0, 1] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    // expected-error @+1 {{deadlock: rank 0 is blocked at action 1 (recv grad.q0 m0 from rank 1) while rank 1 is at action 0 (recv act.q0 m0 from rank 0); rank 1 is blocked at action 0 (recv act.q0 m0 from rank 0) while rank 0 is at action 1 (recv grad.q0 m0 from rank 1) at 'pipeline.recv "g" from 1 mb 0 stages 1 -> 0'}}
    pipeline.recv "g" from 1 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.send "a" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    // expected-note @+1 {{waits for 'act.q0' m0 from rank 0, but rank 0 is at action 1 (recv grad.q0 m0 from rank 1): 'pipeline.recv "a" from 0 mb 0 stages 0 -> 1'}}
    pipeline.recv "a" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage1_forward stage 1 mb 0
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
    pipeline.send "g" to 0 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.optimizer_step
  }
}

// -----

// Both ranks send first: with blocking sends, neither reaches its receive.
func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}
pipeline.pipeline @send_send ranks = 2 chunks = 1 microbatches = 2 schedule = "1f1b" placement = [0, 1] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    pipeline.send "a" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage0_forward stage 0 mb 1
    // expected-error @+1 {{deadlock: rank 0 is blocked at action 3}}
    pipeline.send "a" to 1 mb 1 stages 0 -> 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
    pipeline.recv "g" from 1 mb 1 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 1
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    pipeline.recv "a" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage1_forward stage 1 mb 0
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
    // expected-note @+1 {{waits for rank 0 to receive 'grad.q0' m0}}
    pipeline.send "g" to 0 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.recv "a" from 0 mb 1 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage1_forward stage 1 mb 1
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 1
    pipeline.send "g" to 0 mb 1 stages 1 -> 0 : tensor<4xf32>
    pipeline.optimizer_step
  }
}

// -----

func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}
pipeline.pipeline @unmatched_send ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    // expected-error @+1 {{rank 0 sends 'act.q0' m0 to rank 1 (action 1) but rank 1 has no matching receive from rank 0 at 'pipeline.send "a" to 1 mb 0 stages 0 -> 1'}}
    pipeline.send "a" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    pipeline.forward @stage1_forward stage 1 mb 0
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
    pipeline.send "g" to 0 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.optimizer_step
  }
}

// -----

func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}
pipeline.pipeline @out_of_order ranks = 2 chunks = 1 microbatches = 2 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    // expected-error @+1 {{messages from rank 0 to rank 1 are received out of order}}
    pipeline.send "a" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage0_forward stage 0 mb 1
    pipeline.send "a" to 1 mb 1 stages 0 -> 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
    pipeline.recv "g" from 1 mb 1 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 1
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    // expected-note @+1 {{received as message 0 from rank 0, which sends 'act.q0' m0 there}}
    pipeline.recv "a" from 0 mb 1 stages 0 -> 1 : tensor<4xf32>
    pipeline.recv "a" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage1_forward stage 1 mb 0
    pipeline.forward @stage1_forward stage 1 mb 1
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
    pipeline.send "g" to 0 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 1
    pipeline.send "g" to 0 mb 1 stages 1 -> 0 : tensor<4xf32>
    pipeline.optimizer_step
  }
}

// -----

// The library sees the bytes of a message; the IR also checks its type.
func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}
pipeline.pipeline @type_mismatch ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    // expected-note @+1 {{sent here}}
    pipeline.send "a" to 1 mb 0 stages 0 -> 1 : tensor<4xi32>
    pipeline.recv "g" from 1 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    // expected-error @+1 {{rank 1 receives 'a' mb 0 as 'tensor<4xf32>' but rank 0 sends it as 'tensor<4xi32>'}}
    pipeline.recv "a" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage1_forward stage 1 mb 0
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
    pipeline.send "g" to 0 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.optimizer_step
  }
}

// -----

// The tensors inside one message pair up by name.
func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}
pipeline.pipeline @tensor_names ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    // expected-note @+1 {{rank 0 sends 'pipeline.send "a" to 1 mb 0 stages 0 -> 1'}}
    pipeline.send "a" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.send "b" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    // expected-error @+1 {{rank 1 receives 'pipeline.recv "b" from 0 mb 0 stages 0 -> 1' where rank 0 sends another tensor; the tensors of a message pair up in order}}
    pipeline.recv "b" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.recv "a" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage1_forward stage 1 mb 0
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
    pipeline.send "g" to 0 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.optimizer_step
  }
}

// -----

func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}
// expected-error @+1 {{fails the schedule check:}}
pipeline.pipeline @missing_forward ranks = 2 chunks = 1 microbatches = 2 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    pipeline.send "a" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage0_forward stage 0 mb 1
    pipeline.send "a" to 1 mb 1 stages 0 -> 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
    pipeline.recv "g" from 1 mb 1 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 1
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    pipeline.recv "a" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.recv "a" from 0 mb 1 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage1_forward stage 1 mb 0
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
    pipeline.send "g" to 0 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 1
    pipeline.send "g" to 0 mb 1 stages 1 -> 0 : tensor<4xf32>
    pipeline.optimizer_step
  }
}

// -----

func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
// expected-error @+1 {{fails the schedule check:}}
pipeline.pipeline @repeated_forward ranks = 1 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    pipeline.forward @stage0_forward stage 0 mb 0
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
    pipeline.optimizer_step
  }
}

// -----

func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
// expected-error @+1 {{fails the schedule check:}}
pipeline.pipeline @no_weight_gradient ranks = 1 chunks = 1 microbatches = 1 schedule = "zb-h1" placement = [0] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    pipeline.backward_input @stage0_backward_input stage 0 mb 0
    pipeline.optimizer_step
  }
}

// -----

// Rank 1 receives only one of the two tensors of micro-batch 0 before its
// forward: the message is split in two.
func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}
pipeline.pipeline @early_compute ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    pipeline.send "a" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.send "b" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    pipeline.recv "a" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage1_forward stage 1 mb 0
    // expected-error @+1 {{rank 1 receives 'act.q0' m0 from rank 0 (action 2) but rank 0 never sends it to rank 1}}
    pipeline.recv "b" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
    pipeline.send "g" to 0 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.optimizer_step
  }
}

// -----

// Ranks that share all-reduces take them in one order (the library does
// not synchronise them).
func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 0 : i64}
func.func private @stage0_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 0 : i64}
func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.stage = 1 : i64}
func.func private @stage1_backward_weight() attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64}
pipeline.pipeline @all_reduce_order ranks = 2 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0, 1] {
  pipeline.program rank 0 {
    pipeline.forward @stage0_forward stage 0 mb 0
    pipeline.send "a" to 1 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.recv "g" from 1 mb 0 stages 1 -> 0 : tensor<4xf32>
    pipeline.backward @stage0_backward_input, @stage0_backward_weight stage 0 mb 0
    // expected-error @+1 {{deadlock: rank 0 waits at 'pipeline.all_reduce "u" over [0, 1]' but rank 1 reaches another all-reduce there}}
    pipeline.all_reduce "u" over [0, 1] : tensor<8xf32>
    pipeline.all_reduce "v" over [0, 1] : tensor<8xf32>
    pipeline.optimizer_step
  }
  pipeline.program rank 1 {
    pipeline.recv "a" from 0 mb 0 stages 0 -> 1 : tensor<4xf32>
    pipeline.forward @stage1_forward stage 1 mb 0
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
    pipeline.send "g" to 0 mb 0 stages 1 -> 0 : tensor<4xf32>
    // expected-note @+1 {{rank 1 waits here}}
    pipeline.all_reduce "v" over [0, 1] : tensor<8xf32>
    pipeline.all_reduce "u" over [0, 1] : tensor<8xf32>
    pipeline.optimizer_step
  }
}
