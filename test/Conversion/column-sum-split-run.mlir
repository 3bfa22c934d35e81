// A bias gradient's column sum split into chunks of rows
// (pipecc-map-loops-to-gpu reduction-chunk), run on the CPU as the CUDA
// pipeline's loop nests: the same result as the unsplit sum. The values
// are small integers, so every order of addition is exact and the two
// outputs must be identical.
// RUN: pipecc-opt %s --pipecc-lower-to-llvm="bare-ptr-memref-call-conv=0 gpu-loops-block-size=3" | %mlir_run_main | grep -v base@ > %t.whole
// RUN: pipecc-opt %s --pipecc-lower-to-llvm="bare-ptr-memref-call-conv=0 gpu-loops-block-size=3 gpu-loops-reduction-chunk=2" | %mlir_run_main > %t.split
// RUN: grep -v base@ %t.split | diff %t.whole -
// RUN: FileCheck %s < %t.split
// The split happened: 4 chunks of 2 rows (the last one 1) by 3 columns.
// RUN: pipecc-opt %s --pipecc-lower-to-llvm="bare-ptr-memref-call-conv=0 gpu-loops-block-size=3 gpu-loops-reduction-chunk=2" --mlir-print-ir-after=pipecc-map-loops-to-gpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=IR
// IR: memref.alloc() {alignment = 64 : i64} : memref<4x3xf32>

func.func @bias_gradient(%x: tensor<7x3xf32>) -> tensor<3xf32> {
  %0 = graph.reduce_sum %x axes = [0] : tensor<7x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func @main() {
  %x = graph.constant dense<[[1.0, -2.0, 3.0], [4.0, 5.0, -6.0], [7.0, 8.0, 9.0], [-10.0, 11.0, 12.0], [13.0, -14.0, 15.0], [16.0, 17.0, 18.0], [19.0, 20.0, -21.0]]> : tensor<7x3xf32>
  %sum = call @bias_gradient(%x) : (tensor<7x3xf32>) -> tensor<3xf32>
  %m = bufferization.to_memref %sum : memref<3xf32>
  %u = memref.cast %m : memref<3xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

// CHECK: rank = 1 offset = 0 sizes = [3] strides = [1] data =
// CHECK-NEXT: [50, 45, 30]
