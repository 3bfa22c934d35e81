// RUN: pipecc-opt %s --pipecc-lower-to-llvm | FileCheck %s
// RUN: pipecc-opt %s --pipecc-lower-to-llvm | FileCheck %s --check-prefix=ONLY-LLVM
// RUN: pipecc-opt %s --pipecc-lower-to-llvm="bare-ptr-memref-call-conv=0" | FileCheck %s --check-prefix=DESC

// Every op of every family ends as an LLVM dialect op.
// ONLY-LLVM-NOT: {{^ *(%[^ ]+ = )?"?(graph|linalg|tensor|memref|bufferization|arith|math|scf|cf|affine|func|builtin)\.}}

// Bare pointers (the default): inputs, then one out-parameter per result.
// CHECK-LABEL: llvm.func @forward(
// CHECK-SAME: %arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr, %arg3: !llvm.ptr, %arg4: !llvm.ptr, %arg5: !llvm.ptr) {
// CHECK: llvm.call @pipecc_rt_sgemm(
// tanh, exp and softmax's exp are inline arithmetic, not libm calls.
// CHECK-NOT: llvm.call @tanhf(
// CHECK-NOT: llvm.call @expf(
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.call @pipecc_rt_sgemm_batched(
// CHECK-NOT: llvm.call @tanhf(
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.return
// CHECK-NOT: llvm.return %

// Descriptors: allocated ptr, aligned ptr, offset, sizes, strides.
// DESC-LABEL: llvm.func @loss(
// DESC-SAME: %arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64, %arg3: i64, %arg4: i64, %arg5: i64, %arg6: i64,
// DESC-SAME: %arg7: !llvm.ptr, %arg8: !llvm.ptr, %arg9: i64, %arg10: i64, %arg11: i64,
// DESC-SAME: %arg12: !llvm.ptr, %arg13: !llvm.ptr, %arg14: i64) {

// The runtime's kernels, with C's pointer arguments.
// CHECK-DAG: llvm.func @pipecc_rt_sgemm(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// CHECK-DAG: llvm.func @pipecc_rt_sgemm_batched(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64)

func.func @forward(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %v: tensor<2x16x3xf32>)
    -> (tensor<2x4x3xf32>, tensor<2x4x16xf32>) {
  %0 = graph.matmul %x, %w transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  %1 = graph.add %0, %b : tensor<2x4x16xf32>, tensor<16xf32>
  %2 = graph.tanh %1 : tensor<2x4x16xf32>
  %3 = graph.relu %2 : tensor<2x4x16xf32>
  %4 = graph.matmul %3, %v : tensor<2x4x16xf32>, tensor<2x16x3xf32> -> tensor<2x4x3xf32>
  %5 = graph.softmax %4 axis = 2 : tensor<2x4x3xf32>
  %6 = graph.reduce_mean %1 axes = [2] keep_dims : tensor<2x4x16xf32> -> tensor<2x4x1xf32>
  %7 = graph.sub %1, %6 : tensor<2x4x16xf32>, tensor<2x4x1xf32>
  %8 = graph.exp %7 : tensor<2x4x16xf32>
  %9 = graph.transpose %8 perm = [1, 0, 2] : tensor<2x4x16xf32> -> tensor<4x2x16xf32>
  %10 = graph.reshape %9 : tensor<4x2x16xf32> -> tensor<2x4x16xf32>
  return %5, %10 : tensor<2x4x3xf32>, tensor<2x4x16xf32>
}

func.func @loss(%logits: tensor<4x3xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
  %0 = graph.cross_entropy %logits, %labels {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

func.func @mse(%y: tensor<4x3xf32>, %t: tensor<4x3xf32>) -> tensor<f32> {
  %0 = graph.mse_loss %y, %t : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  %1 = graph.log %0 : tensor<f32>
  %2 = graph.neg %1 : tensor<f32>
  return %2 : tensor<f32>
}
