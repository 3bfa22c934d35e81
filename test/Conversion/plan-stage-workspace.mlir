// RUN: pipecc-opt %s --pipecc-plan-stage-workspace | FileCheck %s
// Static temporaries become views of one workspace at 64-byte aligned
// offsets; temporaries with disjoint lifetimes share bytes (t0 and t1 at
// 128), one alive throughout (big) has its own; nothing is freed. The
// workspace is sized by the larger function. A dynamic allocation stays.

// CHECK: module attributes {pipeline.workspace_bytes = 192 : i64}
// CHECK: memref.global "private" @pipecc_stage_workspace : memref<192xi8> = dense<0> {alignment = 64 : i64}

// CHECK-LABEL: func.func @stage
// CHECK: %[[WS:.*]] = memref.get_global @pipecc_stage_workspace
// CHECK: %[[C0:c0_[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %[[WS]][%[[C0]]][] : memref<192xi8> to memref<32xf32>
// CHECK: %[[A:.*]] = arith.constant 128 : index
// CHECK: memref.view %[[WS]][%[[A]]][] : memref<192xi8> to memref<16xf32>
// CHECK: %[[B:.*]] = arith.constant 128 : index
// CHECK: memref.view %[[WS]][%[[B]]][] : memref<192xi8> to memref<16xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @stage(%a: memref<16xf32>, %out: memref<16xf32>) attributes {pipeline.stage_abi = {kind = "forward", args = [], results = []}} {
  %c0 = arith.constant 0 : index
  %c0f = arith.constant 0.0 : f32
  %big = memref.alloc() {alignment = 64 : i64} : memref<32xf32>
  memref.store %c0f, %big[%c0] : memref<32xf32>
  %t0 = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %a, %t0 : memref<16xf32> to memref<16xf32>
  memref.copy %t0, %out : memref<16xf32> to memref<16xf32>
  memref.dealloc %t0 : memref<16xf32>
  %t1 = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %out, %t1 : memref<16xf32> to memref<16xf32>
  memref.copy %t1, %out : memref<16xf32> to memref<16xf32>
  memref.dealloc %t1 : memref<16xf32>
  %v = memref.load %big[%c0] : memref<32xf32>
  memref.store %v, %out[%c0] : memref<16xf32>
  memref.dealloc %big : memref<32xf32>
  return
}

// CHECK-LABEL: func.func @dynamic
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<192xi8> to memref<8xf32>
func.func @dynamic(%n: index, %out: memref<8xf32>) attributes {pipeline.stage_abi = {kind = "forward", args = [], results = []}} {
  %d = memref.alloc(%n) : memref<?xf32>
  %s = memref.alloc() : memref<8xf32>
  memref.copy %s, %out : memref<8xf32> to memref<8xf32>
  memref.dealloc %s : memref<8xf32>
  memref.dealloc %d : memref<?xf32>
  return
}

// Functions that are not stage functions may call each other: untouched.
// CHECK-LABEL: func.func @helper
// CHECK: memref.alloc() : memref<8xf32>
func.func @helper(%out: memref<8xf32>) {
  %s = memref.alloc() : memref<8xf32>
  memref.copy %s, %out : memref<8xf32> to memref<8xf32>
  memref.dealloc %s : memref<8xf32>
  return
}
