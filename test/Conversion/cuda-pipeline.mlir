// The CUDA stage lowering (pipecc-lower-to-cuda): the kernels it makes, the
// cuBLASLt calls, the host functions' ABI, and the sm_90 code in the fatbin.
// Needs ptxas (gpu-module-to-binary) and cuobjdump, no GPU.
// REQUIRES: cuda-toolkit
// RUN: pipecc-opt %s --pipecc-lower-to-cuda -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: grep -c "^ *gpu.binary @" %t.mlir | grep -x 1
// RUN: pipecc-opt %s --pipecc-lower-to-cuda -mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GPU
// RUN: %python %S/Inputs/extract_gpu_binary.py %t.mlir pipecc_kernels %t.fatbin
// RUN: %cuobjdump --list-elf %t.fatbin | FileCheck %s --check-prefix=ELF
// RUN: pipecc-opt %s --pipecc-lower-to-cuda="format=isa" | FileCheck %s --check-prefix=PTX

// An elementwise chain (bias add, tanh, relu) is one kernel: one thread per
// element of the collapsed 33x40 space, 6 blocks of 256, the tail guarded.
// GPU-LABEL: func.func @chain(
// GPU: gpu.launch_func @chain_kernel::@chain_kernel
// GPU-NOT: gpu.launch_func
// GPU: return
// GPU-LABEL: gpu.module @chain_kernel
// GPU: gpu.func @chain_kernel(
// GPU-SAME: kernel
// GPU: gpu.block_id x
// GPU: gpu.thread_id x
// GPU: arith.cmpi ult
// GPU: scf.if
// GPU: arith.addf
// GPU-NEXT: math.tanh
// GPU-NEXT: arith.cmpf ugt
// GPU-NEXT: arith.select
// GPU-NEXT: memref.store
// GPU: gpu.return
// GPU-NOT: gpu.func
// GPU: func.func @linear(

// Stage functions take bare device pointers: inputs, then outputs.
// CHECK-LABEL: llvm.func @chain(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr) {
// CHECK-DAG: %[[BLOCKS:.*]] = llvm.mlir.constant(6 : index) : i64
// CHECK-DAG: %[[THREADS:.*]] = llvm.mlir.constant(256 : index) : i64
// CHECK: gpu.launch_func @pipecc_kernels::@chain_kernel blocks in (%[[BLOCKS]], %{{.*}}, %{{.*}}) threads in (%[[THREADS]], %{{.*}}, %{{.*}}) : i64 args({{.*}}%arg0 : !llvm.ptr, %arg1 : !llvm.ptr, %arg2 : !llvm.ptr
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.return
// All kernels are in one module, compiled for sm_90 with libdevice linked.
// CHECK: gpu.binary @pipecc_kernels [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80", link = ["/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"]>, "
func.func @chain(%x: tensor<33x40xf32>, %b: tensor<40xf32>) -> tensor<33x40xf32> {
  %0 = graph.add %x, %b : tensor<33x40xf32>, tensor<40xf32>
  %1 = graph.tanh %0 : tensor<33x40xf32>
  %2 = graph.relu %1 : tensor<33x40xf32>
  return %2 : tensor<33x40xf32>
}

// A linear layer is one cuBLASLt call: x * w^T (trans_b = 1), beta = 0,
// f32 (dtype 0), the bias add and ReLU as its epilogue (BIAS | RELU = 3),
// written straight into the output; no kernel.
// CHECK-LABEL: llvm.func @linear(
// CHECK-NOT: gpu.launch_func
// CHECK-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-DAG: %[[I0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG: %[[I1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-DAG: %[[RELU_BIAS:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-DAG: %[[K:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK-DAG: %[[M:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK-DAG: %[[N:.*]] = llvm.mlir.constant(32 : i64) : i64
// CHECK-DAG: %[[C:.*]] = llvm.ptrtoint %arg3
// CHECK-DAG: %[[BIAS:.*]] = llvm.ptrtoint %arg2
// CHECK-DAG: %[[CP:.*]] = llvm.inttoptr %[[C]]
// CHECK-DAG: %[[BIASP:.*]] = llvm.inttoptr %[[BIAS]]
// CHECK: llvm.call @pipecc_rt_cuda_gemm(%[[I0]], %[[I1]], %[[M]], %[[N]], %[[K]], %[[ONE]], %{{.*}}, %[[K]], %{{.*}}, %[[K]], %[[ZERO]], %[[CP]], %[[N]], %[[I0]], %[[I0]], %[[BIASP]], %[[RELU_BIAS]])
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.return
func.func @linear(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %0 = graph.matmul %x, %w transpose_rhs : tensor<8x16xf32>, tensor<32x16xf32> -> tensor<8x32xf32>
  %1 = graph.add %0, %b : tensor<8x32xf32>, tensor<32xf32>
  %2 = graph.relu %1 : tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}

// bf16 batched matmul: A and B in bf16 (dtype 5), accumulated by cuBLASLt
// into an f32 C (dtype 0) that a kernel then rounds to bf16 once; no
// epilogue.
// CHECK-LABEL: llvm.func @batched(
// CHECK-DAG: %[[BF16:.*]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-DAG: %[[F32:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.call @pipecc_rt_cuda_gemm_batched({{.*}}, %[[BF16]], %[[F32]], %[[NULL]], %[[F32]]) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64, i32, i32, !llvm.ptr, i32) -> ()
func.func @batched(%x: tensor<2x4x8xbf16>, %w: tensor<2x8x3xbf16>) -> tensor<2x4x3xbf16> {
  %0 = graph.matmul %x, %w : tensor<2x4x8xbf16>, tensor<2x8x3xbf16> -> tensor<2x4x3xbf16>
  return %0 : tensor<2x4x3xbf16>
}

// Softmax: one thread per row (6 threads), whose three passes over the row
// run in order inside it.
// CHECK-LABEL: llvm.func @softmax(
// CHECK-DAG: %[[ROWS:.*]] = llvm.mlir.constant(6 : index) : i64
// CHECK: gpu.launch_func @pipecc_kernels::@softmax_kernel blocks in ({{.*}}) threads in (%[[ROWS]], {{.*}})
// GPU-LABEL: gpu.func @softmax_kernel(
// GPU: %[[ROW:.*]] = arith.addi
// GPU: %[[MAX:.*]] = scf.for {{.*}} -> (f32) {
// GPU: memref.load %{{.*}}[%[[ROW]], %{{.*}}] : memref<6x10xf32>
// GPU: arith.maximumf
// GPU: %[[SUM:.*]] = scf.for {{.*}} -> (f32) {
// GPU: arith.subf %{{.*}}, %[[MAX]]
// GPU: math.exp
// GPU: scf.for
// GPU: arith.divf %{{.*}}, %[[SUM]]
// GPU: memref.store %{{.*}}[%[[ROW]], %{{.*}}] : memref<6x10xf32>
// GPU: gpu.return
func.func @softmax(%x: tensor<6x10xf32>) -> tensor<6x10xf32> {
  %0 = graph.softmax %x axis = 1 : tensor<6x10xf32>
  return %0 : tensor<6x10xf32>
}

// A sum over axis 0 (300 rows: 5 chunks of 64): the zero fill, then one
// thread per chunk and column summing its rows into partial sums (the
// reduction moved inside: not a host loop of 300 launches), then one
// thread per column adding the 5 partial sums.
// CHECK-LABEL: llvm.func @column_sum(
// CHECK: gpu.launch_func @pipecc_kernels::@column_sum_kernel blocks
// CHECK: pipecc_rt_cuda_workspace_alloc
// CHECK: gpu.launch_func @pipecc_kernels::@column_sum_kernel_0
// CHECK: gpu.launch_func @pipecc_kernels::@column_sum_kernel_1
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.return
// GPU-LABEL: gpu.func @column_sum_kernel(
// GPU-LABEL: gpu.func @column_sum_kernel(
// GPU: scf.for
// GPU: memref.load %{{.*}} : memref<300x5xf32>
// GPU: arith.addf
// GPU-LABEL: gpu.func @column_sum_kernel(
// GPU: scf.for
// GPU: memref.load %{{.*}} : memref<5x5xf32>
// GPU: arith.addf
func.func @column_sum(%x: tensor<300x5xf32>) -> tensor<5xf32> {
  %0 = graph.reduce_sum %x axes = [0] : tensor<300x5xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// Cross-entropy's loss over the rows: one thread per row computes its
// term, then a kernel of one thread adds the 4 terms in order.
// CHECK-LABEL: llvm.func @loss(
// CHECK-DAG: %[[ONE_I:.*]] = llvm.mlir.constant(1 : index) : i64
// CHECK-DAG: %[[FOUR:.*]] = llvm.mlir.constant(4 : index) : i64
// CHECK: gpu.launch_func @pipecc_kernels::@loss_kernel blocks in (%[[ONE_I]], %[[ONE_I]], %[[ONE_I]]) threads in (%[[FOUR]], %[[ONE_I]], %[[ONE_I]])
// CHECK: gpu.launch_func @pipecc_kernels::@loss_kernel_{{[0-9]+}} blocks in (%[[ONE_I]], %[[ONE_I]], %[[ONE_I]]) threads in (%[[ONE_I]], %[[ONE_I]], %[[ONE_I]])
func.func @loss(%x: tensor<4x3xf32>, %l: tensor<4xi64>) -> tensor<f32> {
  %0 = graph.cross_entropy %x, %l : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// A spatial cross-entropy (2-D labels): the row loop is nested in the
// loop over positions, which carries the sums and stays one thread's
// (splitting the inner loop would hand its kernel's result to a host loop).
// CHECK-LABEL: llvm.func @loss_spatial(
// CHECK: gpu.launch_func @pipecc_kernels::@loss_spatial_kernel{{(_[0-9]+)?}} blocks in (%[[ONE_S:.*]], %[[ONE_S]], %[[ONE_S]]) threads in (%[[ONE_S]], %[[ONE_S]], %[[ONE_S]])
// CHECK: llvm.return
func.func @loss_spatial(%x: tensor<2x3x2xf32>, %l: tensor<2x2xi64>) -> tensor<f32> {
  %0 = graph.cross_entropy %x, %l {ignore_index = -1 : i64} : tensor<2x3x2xf32>, tensor<2x2xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// bf16 kernels compute each op in f32 (libdevice has no bf16 math) and
// round its result to bf16.
// (PTX checks at the end.)
func.func @bf16_tanh(%x: tensor<8x16xbf16>) -> tensor<8x16xbf16> {
  %0 = graph.tanh %x : tensor<8x16xbf16>
  return %0 : tensor<8x16xbf16>
}

// The cuBLASLt entry points, declared with C's types.
// CHECK-DAG: llvm.func @pipecc_rt_cuda_gemm(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64, i32, i32, !llvm.ptr, i32)
// CHECK-DAG: llvm.func @pipecc_rt_cuda_gemm_batched(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64, i32, i32, !llvm.ptr, i32)

// The fatbin holds an sm_90 cubin.
// ELF: ELF file 1: {{.*}}.sm_90.cubin

// One PTX module for sm_90 with every kernel; tanh comes from libdevice
// (linked, so no external call).
// PTX: gpu.binary @pipecc_kernels
// PTX-SAME: .target sm_90
// PTX-SAME: .entry chain_kernel
// PTX-SAME: .entry softmax_kernel
// PTX-SAME: .entry column_sum_kernel
// PTX-SAME: .entry column_sum_kernel_0
// PTX-SAME: .entry column_sum_kernel_1
// PTX-SAME: .entry loss_kernel
// PTX-SAME: .entry loss_kernel_{{[0-9]+}}
// bf16_tanh (above):
// PTX-SAME: .entry bf16_tanh_kernel
// PTX-SAME: ld.global.b16
// PTX-SAME: cvt.f32.bf16
// PTX-SAME: cvt.rn.bf16.f32
// PTX-SAME: st.global.b16
// PTX-NOT: .extern .func __nv_
// PTX-NOT: gpu.binary
