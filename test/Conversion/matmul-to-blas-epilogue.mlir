// RUN: pipecc-opt %s --pipecc-matmul-to-blas -split-input-file | FileCheck %s

// A Linear: the product into a zero-filled temporary, then bias and ReLU
// into D. One pipecc_rt_sgemm_epilogue call writes D (flags: 1 = relu);
// the loop, the temporary and its fill are gone.
// CHECK-LABEL: func.func @bias_relu
// CHECK-SAME: (%[[A:.*]]: memref<4x3xf32>, %[[W:.*]]: memref<5x3xf32>, %[[BIAS:.*]]: memref<5xf32>, %[[D:.*]]: memref<4x5xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.
// CHECK-DAG: memref.extract_aligned_pointer_as_index %[[D]]
// CHECK-DAG: memref.extract_aligned_pointer_as_index %[[BIAS]]
// CHECK: call @pipecc_rt_sgemm_epilogue({{.*}}, %c1_i32_{{[0-9]+}}) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64, !llvm.ptr, i32) -> ()
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @bias_relu(%a: memref<4x3xf32>, %w: memref<5x3xf32>, %bias: memref<5xf32>, %d: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul_transpose_b ins(%a, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<4x5xf32>, memref<5xf32>) outs(%d : memref<4x5xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %s = arith.addf %x, %b : f32
    %p = arith.cmpf ugt, %s, %zero : f32
    %r = arith.select %p, %s, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<4x5xf32>
  return
}

// -----

// The GPT's 3-D activations: the temporary (a view of the stage workspace)
// is read through an expand_shape; the call writes D collapsed to the
// product's 2-D shape, without ReLU (flags 0).
// CHECK-LABEL: func.func @bias_3d
// CHECK: %[[D2:.*]] = memref.collapse_shape %arg3 {{.*}} : memref<2x4x5xf32> into memref<8x5xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[D2]]
// The flags are the last operand, a constant of their own after the
// transposition flags'.
// CHECK: call @pipecc_rt_sgemm_epilogue({{.*}}, %c0_i32_{{[0-9]+}}) :
// CHECK-NOT: linalg.generic
memref.global "private" @pipecc_stage_workspace : memref<4096xi8> = dense<0> {alignment = 64 : i64}
func.func @bias_3d(%a: memref<8x3xf32>, %w: memref<5x3xf32>, %bias: memref<5xf32>, %d: memref<2x4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %ws = memref.get_global @pipecc_stage_workspace : memref<4096xi8>
  %off = arith.constant 0 : index
  %c = memref.view %ws[%off][] : memref<4096xi8> to memref<8x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x5xf32>)
  linalg.matmul_transpose_b ins(%a, %w : memref<8x3xf32>, memref<5x3xf32>) outs(%c : memref<8x5xf32>)
  %c3 = memref.expand_shape %c [[0, 1], [2]] output_shape [2, 4, 5] : memref<8x5xf32> into memref<2x4x5xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (k)>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c3, %bias : memref<2x4x5xf32>, memref<5xf32>) outs(%d : memref<2x4x5xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %s = arith.addf %b, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// D shares workspace bytes with the product's A (the plan may give a
// buffer born after the product its input's bytes): the product must not
// write D while it reads A, so the loop stays.
// CHECK-LABEL: func.func @output_overlaps_input
// CHECK: call @pipecc_rt_sgemm(
// CHECK: linalg.generic
memref.global "private" @pipecc_stage_workspace : memref<4096xi8> = dense<0> {alignment = 64 : i64}
func.func @output_overlaps_input(%w: memref<5x3xf32>, %bias: memref<5xf32>) {
  %zero = arith.constant 0.0 : f32
  %ws = memref.get_global @pipecc_stage_workspace : memref<4096xi8>
  %o0 = arith.constant 0 : index
  %o1 = arith.constant 1024 : index
  %a = memref.view %ws[%o0][] : memref<4096xi8> to memref<8x3xf32>
  %c = memref.view %ws[%o1][] : memref<4096xi8> to memref<8x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x5xf32>)
  linalg.matmul_transpose_b ins(%a, %w : memref<8x3xf32>, memref<5x3xf32>) outs(%c : memref<8x5xf32>)
  %d = memref.view %ws[%o0][] : memref<4096xi8> to memref<8x5xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<8x5xf32>, memref<5xf32>) outs(%d : memref<8x5xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %s = arith.addf %x, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A product that accumulates (no zero fill: the old C counts) keeps its
// loop, and so does a loop that is not bias-then-ReLU.
// CHECK-LABEL: func.func @not_an_epilogue
// CHECK: call @pipecc_rt_sgemm(
// CHECK: linalg.generic
// CHECK: call @pipecc_rt_sgemm(
// CHECK: linalg.generic
// CHECK-NOT: pipecc_rt_sgemm_epilogue
func.func @not_an_epilogue(%a: memref<4x3xf32>, %w: memref<5x3xf32>, %bias: memref<5xf32>, %d: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.matmul_transpose_b ins(%a, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<4x5xf32>, memref<5xf32>) outs(%d : memref<4x5xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %s = arith.addf %x, %b : f32
    linalg.yield %s : f32
  }
  %c2 = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c2 : memref<4x5xf32>)
  linalg.matmul_transpose_b ins(%a, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c2 : memref<4x5xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c2, %bias : memref<4x5xf32>, memref<5xf32>) outs(%d : memref<4x5xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %s = arith.mulf %x, %b : f32
    linalg.yield %s : f32
  }
  return
}
