// RUN: pipecc-opt %s --pipecc-lower-graph-to-linalg | FileCheck %s

// Broadcasting reads the smaller operand through its map; nothing is
// materialised.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL0:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[ROW0:.*]] = affine_map<(d0, d1) -> (0, d1)>

// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4x3xf32>, tensor<3xf32>) outs(%[[E]] : tensor<4x3xf32>)
// CHECK: arith.addf
func.func @add(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = graph.add %a, %b : tensor<4x3xf32>, tensor<3xf32>
  return %0 : tensor<4x3xf32>
}

// Both operands stretch a size-1 dimension.
// CHECK-LABEL: func.func @div
// CHECK: linalg.generic {indexing_maps = [#[[COL0]], #[[ROW0]], #[[ID]]]
// CHECK: arith.divf
func.func @div(%a: tensor<4x1xf32>, %b: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %0 = graph.div %a, %b : tensor<4x1xf32>, tensor<1x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @sub_mul
// CHECK: arith.subf
// CHECK: arith.mulf
func.func @sub_mul(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = graph.sub %a, %b : tensor<4x3xf32>, tensor<4x3xf32>
  %1 = graph.mul %0, %b : tensor<4x3xf32>, tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}

// relu keeps NaN (unordered compare).
// CHECK-LABEL: func.func @unary
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[POS:.*]] = arith.cmpf ugt, %[[X]], %[[ZERO]] : f32
// CHECK: arith.select %[[POS]], %[[X]], %[[ZERO]] : f32
// CHECK: math.tanh
// CHECK: math.exp
// CHECK: math.log
// CHECK: arith.negf
func.func @unary(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = graph.relu %x : tensor<4xf32>
  %1 = graph.tanh %x : tensor<4xf32>
  %2 = graph.exp %x : tensor<4xf32>
  %3 = graph.log %x : tensor<4xf32>
  %4 = graph.neg %x : tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @relu_grad
// CHECK: ^bb0(%[[X:.*]]: f32, %[[DY:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[X]], %[[ZERO:.*]] : f32
// CHECK: arith.select %[[POS]], %[[DY]], %[[ZERO]] : f32
func.func @relu_grad(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.relu_grad %x, %dy : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @broadcast
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<2xf32>) outs(%{{.*}} : tensor<3x2xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK-NOT: graph.
func.func @broadcast(%x: tensor<2xf32>) -> tensor<3x2xf32> {
  %1 = graph.broadcast %x : tensor<2xf32> -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// A broadcast of a constant folds (the graph dialect's constant evaluator
// is its fold hook, which the conversion applies too).
// CHECK-LABEL: func.func @constant_broadcast
// CHECK: %[[C:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [1.000000e+00, 2.000000e+00], [1.000000e+00, 2.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[C]]
func.func @constant_broadcast() -> tensor<3x2xf32> {
  %0 = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = graph.broadcast %0 : tensor<2xf32> -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}
