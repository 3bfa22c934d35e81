// RUN: pipecc-opt %s | pipecc-opt | FileCheck %s
// RUN: pipecc-opt %s --mlir-print-op-generic | pipecc-opt | FileCheck %s

// CHECK-LABEL: pipeline.pipeline @mlp stages = 2 chunks = 1 microbatches = 2 schedule = "1f1b" {
pipeline.pipeline @mlp stages = 2 chunks = 1 microbatches = 2 schedule = "1f1b" {
  // CHECK: pipeline.program rank 0 {
  pipeline.program rank 0 {
    // CHECK-NEXT: pipeline.forward stage 0 chunk 0 mb 0
    pipeline.forward stage 0 chunk 0 mb 0
    // CHECK-NEXT: pipeline.send "act.0" to 1 mb 0 : tensor<8x256xf32>
    pipeline.send "act.0" to 1 mb 0 : tensor<8x256xf32>
    pipeline.forward stage 0 chunk 0 mb 1
    pipeline.send "act.0" to 1 mb 1 : tensor<8x256xf32>
    // CHECK: pipeline.recv "grad.0" from 1 mb 0 : tensor<8x256xf32>
    pipeline.recv "grad.0" from 1 mb 0 : tensor<8x256xf32>
    // CHECK-NEXT: pipeline.backward_input stage 0 chunk 0 mb 0
    pipeline.backward_input stage 0 chunk 0 mb 0
    // CHECK-NEXT: pipeline.backward_weight stage 0 chunk 0 mb 0
    pipeline.backward_weight stage 0 chunk 0 mb 0
    pipeline.recv "grad.0" from 1 mb 1 : tensor<8x256xf32>
    pipeline.backward stage 0 chunk 0 mb 1
    // CHECK: pipeline.all_reduce "grad.shared" over [0, 1] : tensor<10xf32>
    pipeline.all_reduce "grad.shared" over [0, 1] : tensor<10xf32>
    // CHECK-NEXT: pipeline.optimizer_step
    pipeline.optimizer_step
  }
  // CHECK: pipeline.program rank 1 {
  pipeline.program rank 1 {
    pipeline.recv "act.0" from 0 mb 0 : tensor<8x256xf32>
    pipeline.forward stage 1 chunk 0 mb 0
    // CHECK: pipeline.backward stage 1 chunk 0 mb 0
    pipeline.backward stage 1 chunk 0 mb 0
    pipeline.send "grad.0" to 0 mb 0 : tensor<8x256xf32>
    pipeline.recv "act.0" from 0 mb 1 : tensor<8x256xf32>
    pipeline.forward stage 1 chunk 0 mb 1
    pipeline.backward stage 1 chunk 0 mb 1
    pipeline.send "grad.0" to 0 mb 1 : tensor<8x256xf32>
    pipeline.all_reduce "grad.shared" over [0, 1] : tensor<10xf32>
    pipeline.optimizer_step
  }
}
