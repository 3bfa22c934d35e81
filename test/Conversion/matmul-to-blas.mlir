// RUN: pipecc-opt %s --pipecc-matmul-to-blas -split-input-file | FileCheck %s

// A zero fill right before the matmul becomes beta = 0.
// CHECK-LABEL: func.func @fill_then_matmul
// CHECK-SAME: (%[[A:.*]]: memref<2x3xf32>, %[[B:.*]]: memref<3x4xf32>, %[[C:.*]]: memref<2x4xf32>)
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[APTR:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK-DAG: %[[BPTR:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK-DAG: %[[CPTR:.*]] = memref.extract_aligned_pointer_as_index %[[C]]
// CHECK: %[[TA:.*]] = arith.constant 0 : i32
// CHECK: %[[TB:.*]] = arith.constant 0 : i32
// CHECK: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: call @pipecc_rt_sgemm(%[[TA]], %[[TB]], %{{.*}}, %{{.*}}, %{{.*}}, %[[ALPHA]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BETA]], %{{.*}}, %{{.*}}) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()
// CHECK-NOT: linalg.matmul
// CHECK: func.func private @pipecc_rt_sgemm(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
func.func @fill_then_matmul(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %c: memref<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x4xf32>)
  linalg.matmul ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) outs(%c : memref<2x4xf32>)
  return
}

// -----

// Without the fill the matmul accumulates: beta = 1. The pointer of a
// strided view is its base plus offset * 4 bytes; lda is its row stride.
// CHECK-LABEL: func.func @accumulate_strided
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[BYTES:.*]] = arith.muli %[[OFF]], %c4
// CHECK: arith.addi %[[PTR]], %[[BYTES]]
// CHECK: %[[TA:.*]] = arith.constant 1 : i32
// CHECK: %[[TB:.*]] = arith.constant 0 : i32
// CHECK: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @pipecc_rt_sgemm(%[[TA]], %[[TB]], {{.*}}, %[[BETA]], {{.*}})
func.func @accumulate_strided(%a: memref<3x2xf32, strided<[8, 1], offset: 5>>, %b: memref<3x4xf32>, %c: memref<2x4xf32>) {
  linalg.matmul_transpose_a ins(%a, %b : memref<3x2xf32, strided<[8, 1], offset: 5>>, memref<3x4xf32>) outs(%c : memref<2x4xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @batched
// CHECK: %[[TB:.*]] = arith.constant 1 : i32
// CHECK: call @pipecc_rt_sgemm_batched(%{{.*}}, %[[TB]], {{.*}}) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
// CHECK-DAG: func.func private @pipecc_rt_sgemm(
// CHECK-DAG: func.func private @pipecc_rt_sgemm_batched(
func.func @batched(%a: memref<5x2x3xf32>, %b: memref<5x4x3xf32>, %c: memref<5x2x4xf32>) {
  linalg.batch_matmul_transpose_b ins(%a, %b : memref<5x2x3xf32>, memref<5x4x3xf32>) outs(%c : memref<5x2x4xf32>)
  return
}

// -----

// Left to the loop lowering: f64, and a non-unit innermost stride.
// CHECK-LABEL: func.func @not_blas
// CHECK: linalg.matmul ins(%arg0, %arg1 : memref<2x3xf64>
// CHECK: linalg.matmul ins(%arg3, %arg4 : memref<2x3xf32, strided<[1, 2]>>
// CHECK-NOT: call
func.func @not_blas(%a: memref<2x3xf64>, %b: memref<3x4xf64>, %c: memref<2x4xf64>,
                    %d: memref<2x3xf32, strided<[1, 2]>>, %e: memref<3x4xf32>, %f: memref<2x4xf32>) {
  linalg.matmul ins(%a, %b : memref<2x3xf64>, memref<3x4xf64>) outs(%c : memref<2x4xf64>)
  linalg.matmul ins(%d, %e : memref<2x3xf32, strided<[1, 2]>>, memref<3x4xf32>) outs(%f : memref<2x4xf32>)
  return
}
