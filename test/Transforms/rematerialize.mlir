// RUN: pipecc-opt %s -split-input-file -pipecc-autodiff -pipecc-rematerialize | FileCheck %s
// RUN: pipecc-opt %s -split-input-file -pipecc-autodiff -pipecc-rematerialize="max-depth=0" | FileCheck %s --check-prefix=DEPTH0

// GELU from erf, as PyTorch exports it. Its backward reads h, a = h / c and
// p = 1 + erf(a). a is recomputed from h (kept anyway) before each backward
// read, the copies tagged with the reader's grad_of; p is kept, its erf
// being dearer to recompute than to read back.
// CHECK-LABEL: func.func @main
// CHECK: %[[C:.*]] = graph.constant dense<1.41421354> : tensor<f32> {graph.op_id = 1 : i64}
// CHECK: %[[H:.*]] = graph.matmul %arg0, %{{.*}} transpose_rhs {graph.op_id = 4 : i64}
// CHECK: %[[A:.*]] = graph.div %[[H]], %[[C]] {graph.op_id = 5 : i64}
// CHECK: %[[E:.*]] = graph.erf %[[A]] {graph.op_id = 6 : i64}
// CHECK: %[[P:.*]] = graph.add %[[E]], %{{.*}} {graph.op_id = 7 : i64}
// CHECK: graph.mul %{{.*}}, %[[P]] {graph.grad_of = 8 : i64}
// CHECK: %[[A1:.*]] = graph.div %[[H]], %[[C]] {graph.grad_of = 6 : i64}
// CHECK: %[[A2:.*]] = graph.div %[[H]], %[[C]] {graph.grad_of = 6 : i64}
// CHECK: graph.mul %[[A2]], %[[A1]] {graph.grad_of = 6 : i64}
// CHECK-NOT: %[[A]]
// CHECK: return
// DEPTH0-LABEL: func.func @main
// DEPTH0-NOT: graph.div {{.*}} {graph.grad_of = 6 : i64}
// DEPTH0: return
func.func @main(%x: tensor<4x8xf32> {graph.input = "x"}) -> (tensor<f32> {graph.output = "loss"}) {
  %w = graph.param "w" trainable : tensor<16x8xf32>
  %c = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %h = graph.matmul %x, %w transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %a = graph.div %h, %c : tensor<4x16xf32>, tensor<f32>
  %e = graph.erf %a : tensor<4x16xf32>
  %p = graph.add %e, %one : tensor<4x16xf32>, tensor<f32>
  %m = graph.mul %h, %p : tensor<4x16xf32>, tensor<4x16xf32>
  %y = graph.mul %m, %half : tensor<4x16xf32>, tensor<f32>
  %l = graph.reduce_sum %y axes = [0, 1] : tensor<4x16xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A value a backward matmul reads stays kept: recomputed, it would be
// stored again for the matmul. Here r = relu(hb) is the second matmul's
// input, read by its weight gradient, so nothing is recomputed.
// CHECK-LABEL: func.func @main
// CHECK: %[[R:.*]] = graph.relu %{{.*}} {graph.op_id = 4 : i64}
// CHECK-NOT: graph.relu {{.*}} {graph.grad_of
// CHECK: graph.matmul %{{.*}}, %[[R]] transpose_lhs {graph.grad_of = 5 : i64}
func.func @main(%x: tensor<4x8xf32> {graph.input = "x"}) -> (tensor<f32> {graph.output = "loss"}) {
  %w0 = graph.param "w0" trainable : tensor<16x8xf32>
  %w1 = graph.param "w1" trainable : tensor<3x16xf32>
  %h = graph.matmul %x, %w0 transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %hb = graph.neg %h : tensor<4x16xf32>
  %r = graph.relu %hb : tensor<4x16xf32>
  %o = graph.matmul %r, %w1 transpose_rhs : tensor<4x16xf32>, tensor<3x16xf32> -> tensor<4x3xf32>
  %l = graph.reduce_sum %o axes = [0, 1] : tensor<4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
