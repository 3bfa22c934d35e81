// RUN: pipecc-opt %s --pipecc-lower-to-llvm --mlir-print-ir-after=pipecc-matmul-to-blas -o /dev/null 2>&1 | FileCheck %s

// Attention's forward and backward as the GPT case differentiates it, on
// memrefs right after pipecc-matmul-to-blas: every 4-D matmul (with and
// without transposed operands) is one strided-batched sgemm call, none is
// left as a linalg loop nest; the softmax is one loop nest over the rows
// (max, stored exps and their sum, division) with no linalg op and no
// allocation inside; a broadcast batch operand is materialised once, then
// BLAS.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: linalg.batch_matmul
// CHECK: call @pipecc_rt_sgemm_batched(
// CHECK: scf.for
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.
// CHECK: scf.for {{.*}} -> (f32)
// CHECK: arith.maximumf
// CHECK: scf.for {{.*}} -> (f32)
// CHECK: math.exp
// CHECK: memref.store
// CHECK: scf.for
// CHECK: arith.divf
// CHECK: memref.store
// CHECK-NOT: linalg.batch_matmul
// CHECK-COUNT-4: call @pipecc_rt_sgemm_batched(
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
func.func @attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>,
                     %dy: tensor<2x4x8x16xf32>, %w: tensor<4x16x16xf32>)
    -> (tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  %s = graph.matmul %q, %k transpose_rhs : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %p = graph.softmax %s axis = 3 : tensor<2x4x8x8xf32>
  %y = graph.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %dp = graph.matmul %dy, %v transpose_rhs : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %dv = graph.matmul %p, %dy transpose_lhs : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %dq = graph.matmul %dp, %k : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %b = graph.matmul %q, %w : tensor<2x4x8x16xf32>, tensor<4x16x16xf32> -> tensor<2x4x8x16xf32>
  return %y, %dp, %dv, %dq, %b : tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}

// The embedding gradient is a scatter-add: one loop nest over the
// gradient's [8, 16, 64] elements reading the token id and adding into the
// selected table row; nothing iterates over the 1000-row table.
// CHECK-LABEL: func.func @embedding_grad
// CHECK: linalg.fill
// CHECK: scf.for {{.*}} to %c8
// CHECK: scf.for {{.*}} to %c16
// CHECK: scf.for {{.*}} to %c64
// CHECK: memref.load %arg0
// CHECK: memref.load %arg1
// CHECK: memref.load
// CHECK: arith.addf
// CHECK: memref.store
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @embedding_grad(%ids: tensor<8x16xi64>, %dy: tensor<8x16x64xf32>) -> tensor<1000x64xf32> {
  %0 = graph.gather_grad %ids, %dy axis = 0 : tensor<8x16xi64>, tensor<8x16x64xf32> -> tensor<1000x64xf32>
  return %0 : tensor<1000x64xf32>
}
