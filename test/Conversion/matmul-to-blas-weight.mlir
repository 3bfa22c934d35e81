// RUN: pipecc-opt %s --pipecc-matmul-to-blas -split-input-file | FileCheck %s

// A matmul whose B is a stage argument bound to a parameter calls
// pipecc_rt_sgemm_weight (the runtime keeps that B packed within a step);
// one whose B is an activation ("g" below) or a parameter read as A stays
// pipecc_rt_sgemm.
// CHECK-LABEL: func.func @stage0_forward
// CHECK: call @pipecc_rt_sgemm_weight(
// CHECK: call @pipecc_rt_sgemm_weight(
// CHECK: call @pipecc_rt_sgemm(
// CHECK: call @pipecc_rt_sgemm(
// CHECK-NOT: call @pipecc_rt_sgemm
// CHECK: return
// CHECK-DAG: func.func private @pipecc_rt_sgemm(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// CHECK-DAG: func.func private @pipecc_rt_sgemm_weight(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
func.func @stage0_forward(%x: memref<4x8xf32>, %w: memref<6x8xf32>, %v: memref<8x6xf32>, %g: memref<8x6xf32>, %y: memref<4x6xf32>) attributes {pipeline.stage_abi = {kind = "forward", args = [{pipeline.tensor = "x", type = tensor<4x8xf32>}, {pipeline.param = "w", pipeline.tensor = "w", type = tensor<6x8xf32>}, {pipeline.param = "v", pipeline.tensor = "v", type = tensor<8x6xf32>}, {pipeline.tensor = "g", type = tensor<8x6xf32>}], results = [{pipeline.tensor = "y", type = tensor<4x6xf32>}]}} {
  // x * w^T and x * v: B is a parameter (either reading).
  linalg.matmul_transpose_b ins(%x, %w : memref<4x8xf32>, memref<6x8xf32>) outs(%y : memref<4x6xf32>)
  linalg.matmul ins(%x, %v : memref<4x8xf32>, memref<8x6xf32>) outs(%y : memref<4x6xf32>)
  // x * g: B is an activation.
  linalg.matmul ins(%x, %g : memref<4x8xf32>, memref<8x6xf32>) outs(%y : memref<4x6xf32>)
  // The parameter as A.
  %t = memref.alloc() : memref<6x6xf32>
  linalg.matmul ins(%w, %g : memref<6x8xf32>, memref<8x6xf32>) outs(%t : memref<6x6xf32>)
  memref.dealloc %t : memref<6x6xf32>
  return
}

// -----

// Without the stage ABI (not a stage function) nothing is known to be a
// parameter.
// CHECK-LABEL: func.func @plain
// CHECK: call @pipecc_rt_sgemm(
// CHECK-NOT: pipecc_rt_sgemm_weight
func.func @plain(%x: memref<4x8xf32>, %w: memref<6x8xf32>, %y: memref<4x6xf32>) {
  linalg.matmul_transpose_b ins(%x, %w : memref<4x8xf32>, memref<6x8xf32>) outs(%y : memref<4x6xf32>)
  return
}
