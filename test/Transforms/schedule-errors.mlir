// RUN: pipecc-opt %s -split-input-file -pipecc-schedule -verify-diagnostics

// The two sides of a boundary must agree on what crosses it.
module {
  // expected-error @+1 {{@stage0_forward sends [a, b] but @stage1_forward receives [a]}}
  func.func private @stage0_forward() -> (tensor<4xf32> {pipeline.tensor = "a"}, tensor<4xf32> {pipeline.tensor = "b"}) attributes {pipeline.kind = "forward", pipeline.recv = [], pipeline.send = ["a", "b"], pipeline.stage = 0 : i64}
  func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.recv = [], pipeline.send = [], pipeline.stage = 0 : i64}
  // expected-note @+1 {{the receiving forward function}}
  func.func private @stage1_forward(tensor<4xf32> {pipeline.tensor = "a"}) attributes {pipeline.kind = "forward", pipeline.recv = ["a"], pipeline.send = [], pipeline.stage = 1 : i64}
  func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.recv = [], pipeline.send = [], pipeline.stage = 1 : i64}
}

// -----

// expected-error @+1 {{stage 1 has no backward_input function}}
module {
  func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.recv = [], pipeline.send = [], pipeline.stage = 0 : i64}
  func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.recv = [], pipeline.send = [], pipeline.stage = 0 : i64}
  func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.recv = [], pipeline.send = [], pipeline.stage = 1 : i64}
}

// -----

module {
  // expected-error @+1 {{cannot find a statically shaped tensor named 'a' that @stage0_forward sends}}
  func.func private @stage0_forward() attributes {pipeline.kind = "forward", pipeline.recv = [], pipeline.send = ["a"], pipeline.stage = 0 : i64}
  func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.recv = [], pipeline.send = [], pipeline.stage = 0 : i64}
  func.func private @stage1_forward() attributes {pipeline.kind = "forward", pipeline.recv = ["a"], pipeline.send = [], pipeline.stage = 1 : i64}
  func.func private @stage1_backward_input() attributes {pipeline.kind = "backward_input", pipeline.recv = [], pipeline.send = [], pipeline.stage = 1 : i64}
}
