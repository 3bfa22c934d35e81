// The host ABI that MLIR 19's GPU lowering calls for kernel launches (from
// a fatbin, or PTX for the driver to compile) and for asynchronous
// allocation, copies, fills and waits: the signatures that
// runtime/include/pipecc/Runtime/CUDA/Mgpu.h declares and the CUDA runtime
// implements (lib/CUDA/Mgpu.cpp). An MLIR upgrade that changes one fails
// here instead of in a rank executable on a GPU.
// RUN: mlir-opt %s --split-input-file -finalize-memref-to-llvm \
// RUN:   -convert-func-to-llvm -gpu-to-llvm -reconcile-unrealized-casts \
// RUN: | mlir-translate --split-input-file --mlir-to-llvmir | FileCheck %s

// CHECK-DAG: declare ptr @mgpuModuleLoad(ptr, i64)
// CHECK-DAG: declare ptr @mgpuModuleGetFunction(ptr, ptr)
// CHECK-DAG: declare void @mgpuLaunchKernel(ptr, i64, i64, i64, i64, i64, i64, i32, ptr, ptr, ptr, i64)
// CHECK-DAG: declare void @mgpuModuleUnload(ptr)
// CHECK-DAG: declare ptr @mgpuStreamCreate()
// CHECK-DAG: declare void @mgpuStreamSynchronize(ptr)
// CHECK-DAG: declare void @mgpuStreamDestroy(ptr)
// CHECK-DAG: declare ptr @mgpuEventCreate()
// CHECK-DAG: declare void @mgpuEventRecord(ptr, ptr)
// CHECK-DAG: declare void @mgpuStreamWaitEvent(ptr, ptr)
// CHECK-DAG: declare void @mgpuEventDestroy(ptr)
// CHECK-DAG: declare ptr @mgpuMemAlloc(i64, ptr, i8)
// CHECK-DAG: declare void @mgpuMemFree(ptr, ptr)
// CHECK-DAG: declare void @mgpuMemcpy(ptr, ptr, i64, ptr)
// CHECK-DAG: declare void @mgpuMemset32(ptr, i32, i64, ptr)
// CHECK-DAG: declare void @mgpuMemset16(ptr, i16, i64, ptr)
// CHECK-DAG: declare ptr @mgpuModuleLoadJIT(ptr, i32)

module attributes {gpu.container_module} {
  func.func @launch(%a: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    gpu.launch_func @kernels::@double blocks in (%c1, %c1, %c1)
        threads in (%c16, %c1, %c1) args(%a : memref<16xf32>)
    return
  }
  // Only the host side matters here: the bytes are never loaded.
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, "fatbin">]

  func.func @async(%host: memref<16xf32>, %v: f32, %h: memref<16xi16>,
                   %w: i16) {
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %t2 = gpu.memcpy async [%t1] %d, %host : memref<16xf32>, memref<16xf32>
    %t3 = gpu.memset async [%t2] %d, %v : memref<16xf32>, f32
    %t4 = gpu.memset async [%t3] %h, %w : memref<16xi16>, i16
    %t5 = gpu.dealloc async [%t4] %d : memref<16xf32>
    %t6 = gpu.wait async
    %t7 = gpu.wait async [%t5, %t6]
    gpu.wait [%t7]
    return
  }
}

// -----

// PTX ("assembly") is compiled by the driver when loaded.
module attributes {gpu.container_module} {
  func.func @launch(%a: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@double blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    return
  }
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">,
                                   assembly = "ptx">]
}
