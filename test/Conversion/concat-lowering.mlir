// RUN: pipecc-opt %s --pipecc-lower-to-llvm | FileCheck %s

// graph.concat writes each input into its slice of one buffer: the exp
// writes its slice in place, the argument is copied by a loop (linalg.copy:
// the pipeline's bufferization copy function), and no strided copy becomes
// a call of the runner-utils' memrefCopy, which rank executables do not
// link. shape-run.mlir checks the values.
// CHECK-LABEL: llvm.func @concat
// CHECK-NOT: memrefCopy
// CHECK: llvm.return
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %e = graph.exp %a : tensor<2x3xf32>
  %y = graph.concat %e, %b axis = 1 : tensor<2x3xf32>, tensor<2x5xf32> -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
