// RUN: pipecc-opt %s --pipecc-matmul-to-blas="device=%S/Inputs/gemm-paths-profile.json" -split-input-file | FileCheck %s
// RUN: pipecc-opt %s --pipecc-matmul-to-blas -split-input-file | FileCheck %s --check-prefix=RULE
// RUN: not pipecc-opt %s --pipecc-matmul-to-blas="device=%S/Inputs/missing.json" -split-input-file 2>&1 | FileCheck %s --check-prefix=MISSING

// The profile times the weight gradient (tn, beta 1) on both paths: the
// engine twice as fast at 1024 rows, slower below. Each product runs on
// its faster path (flags 8: PIPECC_RT_GEMM_ON_ENGINE, 4: _ON_BLAS), no
// bias; without a profile the runtime's rule decides (pipecc_rt_sgemm).
// CHECK-LABEL: func.func @weight_gradients
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[ENGINE:.*]] = arith.constant 8 : i32
// CHECK: call @pipecc_rt_sgemm_epilogue({{.*}}, %[[NULL]], %[[ENGINE]])
// CHECK: %[[NULL2:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[BLAS:.*]] = arith.constant 4 : i32
// CHECK: call @pipecc_rt_sgemm_epilogue({{.*}}, %[[NULL2]], %[[BLAS]])
// The products the profile did not time per path (nt) keep the rule.
// CHECK: call @pipecc_rt_sgemm(
// CHECK: func.func private @pipecc_rt_sgemm(
// CHECK: func.func private @pipecc_rt_sgemm_epilogue(
// RULE-LABEL: func.func @weight_gradients
// RULE-NOT: pipecc_rt_sgemm_epilogue
// RULE-COUNT-3: call @pipecc_rt_sgemm(
// MISSING: error: device profile '{{.*}}missing.json': cannot read
func.func @weight_gradients(%dy: memref<64x1024xf32>, %x: memref<64x256xf32>,
                            %dw: memref<1024x256xf32>, %dy2: memref<64x32xf32>,
                            %dw2: memref<32x256xf32>, %h: memref<32x256xf32>,
                            %out: memref<32x32xf32>) {
  linalg.matmul_transpose_a ins(%dy, %x : memref<64x1024xf32>, memref<64x256xf32>) outs(%dw : memref<1024x256xf32>)
  linalg.matmul_transpose_a ins(%dy2, %x : memref<64x32xf32>, memref<64x256xf32>) outs(%dw2 : memref<32x256xf32>)
  linalg.matmul_transpose_b ins(%h, %h : memref<32x256xf32>, memref<32x256xf32>) outs(%out : memref<32x32xf32>)
  return
}
