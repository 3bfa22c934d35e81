// RUN: pipecc-opt %s --pipecc-outline-op-groups="max-ops=2" | FileCheck %s

// Three ops that become loops: more than two, so groups of at most two move
// out. Allocations stay before the calls, the dealloc inside the first group
// moves after its call, and the constant is cloned, not passed.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>)
// CHECK: %[[T:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[S:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: call @chain_part0(%[[S]], %[[A]], %[[T]])
// CHECK-NEXT: memref.dealloc %[[S]]
// CHECK-NEXT: call @chain_part1(%[[T]], %[[B]])
// CHECK-NEXT: return
// CHECK: func.func private @chain_part0(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) attributes {no_inline}
// CHECK-NEXT: arith.constant 0.0
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: memref.copy
// CHECK-NEXT: return
// CHECK: func.func private @chain_part1(
func.func @chain(%a: memref<4xf32>, %b: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<4xf32>
  %s = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<4xf32>)
  memref.copy %a, %t : memref<4xf32> to memref<4xf32>
  memref.dealloc %s : memref<4xf32>
  memref.copy %t, %b : memref<4xf32> to memref<4xf32>
  return
}

// Short functions are left alone.
// CHECK-LABEL: func.func @short(
// CHECK-NOT: call
// CHECK: return
func.func @short(%a: memref<4xf32>, %b: memref<4xf32>) {
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  return
}
