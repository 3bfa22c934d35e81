// An MLP whose layers have very different widths (64, 4096, 64, 1024, 64,
// 16): equal op counts per stage put the two wide layers on one stage, while
// the dynamic programme balances predicted stage times.
// RUN: pipecc-opt %s -pipecc-autodiff -pipecc-partition="stages=3 strategy=dp" -test-partition-report -o /dev/null | FileCheck %s --check-prefix=DP
// RUN: pipecc-opt %s -pipecc-autodiff -pipecc-partition="stages=3 strategy=uniform" -test-partition-report -o /dev/null | FileCheck %s --check-prefix=UNIFORM
// RUN: pipecc-opt %s -pipecc-autodiff -pipecc-partition="stages=3 cut-after=wide1,narrow2" -test-partition-report -o /dev/null | FileCheck %s --check-prefix=MANUAL

// Stage 0 sends no gradient back, so its B is empty and all of its backward
// is W (what split-stages builds).
// The cost model prices both: DP's slowest stage is predicted at 2.96 ms
// against 4.74 ms for uniform, whose first stage holds both wide matmuls.
// DP: partition dp on host-cpu: 3 stages, bottleneck 2.963e-03 s
// DP-NEXT: cuts after: 'relu1' 'narrow2'
// DP-NEXT: stage 0: 'wide1' .. 'relu1' F 1.049e-03 B 0.000e+00 W 1.153e-03 comm 4.294e-04 total 2.631e-03 s
// DP-NEXT: stage 1: 'narrow2' .. 'narrow2' F 8.389e-04 B 8.389e-04 W 8.389e-04 comm 4.460e-04 total 2.963e-03 s
// DP-NEXT: stage 2: 'relu2' .. 'loss' F 4.832e-04 B 5.131e-04 W 4.227e-04 comm 1.655e-05 total 1.436e-03 s

// UNIFORM: partition uniform on host-cpu: 3 stages, bottleneck 4.743e-03 s
// UNIFORM-NEXT: cuts after: 'relu2' 'narrow4'
// UNIFORM-NEXT: stage 0: 'wide1' .. 'relu2' F 1.891e-03 {{.*}} total 4.743e-03 s
// UNIFORM-NEXT: stage 1: 'wide2' .. 'narrow4' {{.*}} total 1.422e-03 s
// UNIFORM-NEXT: stage 2: 'relu4' .. 'loss' {{.*}} total 3.802e-05 s

// MANUAL: partition manual on host-cpu: 3 stages
// MANUAL-NEXT: cuts after: 'wide1' 'narrow2'
// MANUAL-NEXT: stage 0: 'wide1' .. 'wide1'
// MANUAL-NEXT: stage 1: 'relu1' .. 'narrow2'

func.func @main(%x: tensor<64x64xf32> {graph.input = "x"}, %labels: tensor<64xi64> {graph.input = "labels"}) -> (tensor<f32> {graph.output = "loss"}) {
  %w1 = graph.param "w1" trainable : tensor<4096x64xf32>
  %w2 = graph.param "w2" trainable : tensor<64x4096xf32>
  %w3 = graph.param "w3" trainable : tensor<1024x64xf32>
  %w4 = graph.param "w4" trainable : tensor<64x1024xf32>
  %w5 = graph.param "w5" trainable : tensor<16x64xf32>
  %h1 = graph.matmul %x, %w1 transpose_rhs : tensor<64x64xf32>, tensor<4096x64xf32> -> tensor<64x4096xf32> loc("wide1")
  %r1 = graph.relu %h1 : tensor<64x4096xf32> loc("relu1")
  %h2 = graph.matmul %r1, %w2 transpose_rhs : tensor<64x4096xf32>, tensor<64x4096xf32> -> tensor<64x64xf32> loc("narrow2")
  %r2 = graph.relu %h2 : tensor<64x64xf32> loc("relu2")
  %h3 = graph.matmul %r2, %w3 transpose_rhs : tensor<64x64xf32>, tensor<1024x64xf32> -> tensor<64x1024xf32> loc("wide2")
  %r3 = graph.relu %h3 : tensor<64x1024xf32> loc("relu3")
  %h4 = graph.matmul %r3, %w4 transpose_rhs : tensor<64x1024xf32>, tensor<64x1024xf32> -> tensor<64x64xf32> loc("narrow4")
  %r4 = graph.relu %h4 : tensor<64x64xf32> loc("relu4")
  %h5 = graph.matmul %r4, %w5 transpose_rhs : tensor<64x64xf32>, tensor<16x64xf32> -> tensor<64x16xf32> loc("head")
  %loss = graph.cross_entropy %h5, %labels : tensor<64x16xf32>, tensor<64xi64> -> tensor<f32> loc("loss")
  return %loss : tensor<f32>
}
