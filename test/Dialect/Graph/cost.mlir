// RUN: pipecc-opt %s -test-graph-cost -o /dev/null | FileCheck %s

// CHECK-LABEL: cost of @layer
func.func @layer(%x: tensor<16x64xf32>) -> tensor<16x256xf32> {
  // Parameters are resident: no cost.
  // CHECK-NEXT: graph.param: flops=0 transcendentals=0 read=0 written=0
  %w = graph.param "w" trainable : tensor<256x64xf32>
  // 2*M*N*K = 2*16*256*64; reads 16*64*4 + 256*64*4, writes 16*256*4.
  // CHECK-NEXT: graph.matmul: flops=524288 transcendentals=0 read=69632 written=16384
  %h = graph.matmul %x, %w transpose_rhs : tensor<16x64xf32>, tensor<256x64xf32> -> tensor<16x256xf32>
  // CHECK-NEXT: graph.relu: flops=4096 transcendentals=0 read=16384 written=16384
  %r = graph.relu %h : tensor<16x256xf32>
  // CHECK-NEXT: graph.tanh: flops=0 transcendentals=4096 read=16384 written=16384
  %t = graph.tanh %r : tensor<16x256xf32>
  // A reduction costs a flop per input element.
  // CHECK-NEXT: graph.reduce_sum: flops=4096 transcendentals=0 read=16384 written=64
  %s = graph.reduce_sum %t axes = [1] keep_dims : tensor<16x256xf32> -> tensor<16x1xf32>
  // CHECK-NEXT: graph.sub: flops=4096 transcendentals=0 read=16448 written=16384
  %d = graph.sub %t, %s : tensor<16x256xf32>, tensor<16x1xf32>
  // CHECK-NEXT: graph.reshape: flops=0 transcendentals=0 read=0 written=0
  %v = graph.reshape %d : tensor<16x256xf32> -> tensor<4096xf32>
  // CHECK-NEXT: graph.softmax: flops=16384 transcendentals=4096
  %p = graph.softmax %d axis = 1 : tensor<16x256xf32>
  // CHECK-NEXT: total: flops=552960 transcendentals=8192
  return %p : tensor<16x256xf32>
}
