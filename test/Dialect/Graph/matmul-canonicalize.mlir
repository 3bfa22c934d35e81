// RUN: pipecc-opt %s --canonicalize | FileCheck %s

// A Linear on 3-D input as exported (Transpose(weight) -> MatMul): the
// transpose becomes the rhs flag and dies.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[W:.*]]: tensor<16x8xf32>)
// CHECK-NOT: graph.transpose
// CHECK: %[[Y:.*]] = graph.matmul %[[X]], %[[W]] transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
// CHECK: return %[[Y]]
func.func @linear(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>) -> tensor<2x4x16xf32> {
  %t = graph.transpose %w perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = graph.matmul %x, %t : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}

// A flag that is already set toggles off; a 4-D swap of the inner dims
// (attention's K^T) folds too.
// CHECK-LABEL: func.func @toggle
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x5x4xf32>, %[[B:.*]]: tensor<2x3x5x6xf32>)
// CHECK-NOT: graph.transpose
// CHECK: graph.matmul %[[A]], %[[B]] transpose_lhs : tensor<2x3x5x4xf32>, tensor<2x3x5x6xf32> -> tensor<2x3x4x6xf32>
func.func @toggle(%a: tensor<2x3x5x4xf32>, %b: tensor<2x3x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %bt = graph.transpose %b perm = [0, 1, 3, 2] : tensor<2x3x5x6xf32> -> tensor<2x3x6x5xf32>
  %y = graph.matmul %a, %bt transpose_lhs transpose_rhs : tensor<2x3x5x4xf32>, tensor<2x3x6x5xf32> -> tensor<2x3x4x6xf32>
  return %y : tensor<2x3x4x6xf32>
}

// A transpose that also moves batch dims (a head split) stays; one that
// has another use stays for that use.
// CHECK-LABEL: func.func @kept
// CHECK: %[[H:.*]] = graph.transpose %arg0 perm = [0, 2, 1, 3]
// CHECK: graph.matmul %[[H]], %arg1 :
// CHECK: %[[T:.*]] = graph.transpose %arg2 perm = [1, 0]
// CHECK: graph.matmul %arg3, %arg2 transpose_rhs
// CHECK: return {{.*}}, %[[T]]
func.func @kept(%x: tensor<2x5x3x4xf32>, %k: tensor<2x3x4x5xf32>, %w: tensor<6x4xf32>, %v: tensor<3x4xf32>)
    -> (tensor<2x3x5x5xf32>, tensor<3x6xf32>, tensor<4x6xf32>) {
  %h = graph.transpose %x perm = [0, 2, 1, 3] : tensor<2x5x3x4xf32> -> tensor<2x3x5x4xf32>
  %s = graph.matmul %h, %k : tensor<2x3x5x4xf32>, tensor<2x3x4x5xf32> -> tensor<2x3x5x5xf32>
  %t = graph.transpose %w perm = [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
  %y = graph.matmul %v, %t : tensor<3x4xf32>, tensor<4x6xf32> -> tensor<3x6xf32>
  return %s, %y, %t : tensor<2x3x5x5xf32>, tensor<3x6xf32>, tensor<4x6xf32>
}
