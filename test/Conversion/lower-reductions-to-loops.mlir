// RUN: pipecc-opt %s --pass-pipeline='builtin.module(func.func(pipecc-lower-reductions-to-loops))' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A row sum and a row sum of squares (two outputs): each output is loaded
// once before the reduction loop, carried through it and stored once.
// CHECK-LABEL: func.func @row_sums
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-DAG: %[[S0:.*]] = memref.load %arg1[%[[I]]]
// CHECK-DAG: %[[Q0:.*]] = memref.load %arg2[%[[I]]]
// CHECK: %[[R:.*]]:2 = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[S:.*]] = %[[S0]], %[[Q:.*]] = %[[Q0]]) -> (f32, f32)
// CHECK: %[[X:.*]] = memref.load %arg0[%[[I]], %[[K]]]
// CHECK: %[[SUM:.*]] = arith.addf %[[S]], %[[X]]
// CHECK: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK: %[[SQSUM:.*]] = arith.addf %[[Q]], %[[SQ]]
// CHECK: scf.yield %[[SUM]], %[[SQSUM]]
// CHECK: memref.store %[[R]]#0, %arg1[%[[I]]]
// CHECK: memref.store %[[R]]#1, %arg2[%[[I]]]
func.func @row_sums(%x: memref<4x8xf32>, %sum: memref<4xf32>,
                    %sq: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%sum, %sq : memref<4xf32>, memref<4xf32>) {
  ^bb0(%in: f32, %s: f32, %q: f32):
    %0 = arith.addf %s, %in : f32
    %1 = arith.mulf %in, %in : f32
    %2 = arith.addf %q, %1 : f32
    linalg.yield %0, %2 : f32, f32
  }
  return
}

// Inputs read through a permutation, a broadcast and linalg.index.
// CHECK-LABEL: func.func @transposed
// CHECK: scf.for %[[I:.*]] =
// CHECK: scf.for %[[K:.*]] = {{.*}} iter_args
// CHECK-DAG: memref.load %arg0[%[[K]], %[[I]]]
// CHECK-DAG: memref.load %arg1[%[[K]]]
// CHECK: arith.index_cast %[[K]]
func.func @transposed(%x: memref<8x4xf32>, %w: memref<8xf32>,
                      %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [#tr, #col, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : memref<8x4xf32>, memref<8xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %v: f32, %o: f32):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    %0 = arith.mulf %in, %v : f32
    %1 = arith.mulf %0, %kf : f32
    %2 = arith.addf %o, %1 : f32
    linalg.yield %2 : f32
  }
  return
}

// Left to linalg-to-loops: a column sum (reduction before a parallel
// loop), an output that is also an input, and tensors.
// CHECK-LABEL: func.func @kept
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.generic
func.func @kept(%x: memref<4x8xf32>, %col: memref<8xf32>, %row: memref<4xf32>,
                %t: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  linalg.generic {indexing_maps = [#id, #col],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%col : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = arith.addf %o, %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %row : memref<4x8xf32>, memref<4xf32>)
      outs(%row : memref<4xf32>) {
  ^bb0(%in: f32, %r: f32, %o: f32):
    %p = arith.mulf %in, %r : f32
    %0 = arith.addf %o, %p : f32
    linalg.yield %0 : f32
  }
  %r = linalg.generic {indexing_maps = [#id, #row],
                       iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = arith.addf %o, %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
