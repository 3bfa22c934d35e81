// How bf16 lowers on the CPU: a bf16 graph.matmul is a linalg.matmul with
// bf16 inputs and an f32 output, rounded once; pipecc-matmul-to-blas
// extends its bf16 operands to f32 copies for sgemm.
// RUN: pipecc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(pipecc-lower-graph-to-linalg))' | FileCheck %s --check-prefix=LINALG
// RUN: pipecc-opt %s --split-input-file --pipecc-matmul-to-blas | FileCheck %s --check-prefix=BLAS

// LINALG-LABEL: func.func @matmul
// LINALG: %[[ACC:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x2xbf16>) outs(%{{.*}} : tensor<4x2xf32>)
// LINALG: linalg.generic {{.*}} ins(%[[ACC]] : tensor<4x2xf32>) outs(%{{.*}} : tensor<4x2xbf16>)
// LINALG: arith.truncf %{{.*}} : f32 to bf16
func.func @matmul(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>) -> tensor<4x2xbf16> {
  %0 = graph.matmul %a, %b : tensor<4x8xbf16>, tensor<8x2xbf16> -> tensor<4x2xbf16>
  return %0 : tensor<4x2xbf16>
}

// -----

// BLAS-LABEL: func.func @mixed_matmul
// BLAS: %[[WA:.*]] = memref.alloc() : memref<4x8xf32>
// BLAS: linalg.generic {{.*}} ins(%{{.*}} : memref<4x8xbf16>) outs(%[[WA]] : memref<4x8xf32>)
// BLAS: arith.extf %{{.*}} : bf16 to f32
// BLAS: %[[WB:.*]] = memref.alloc() : memref<8x2xf32>
// BLAS: call @pipecc_rt_sgemm(
// BLAS-DAG: memref.dealloc %[[WA]] :
// BLAS-DAG: memref.dealloc %[[WB]] :
// BLAS-NOT: linalg.matmul
func.func @mixed_matmul(%a: memref<4x8xbf16>, %b: memref<8x2xbf16>, %c: memref<4x2xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x2xbf16>) outs(%c : memref<4x2xf32>)
  return
}
