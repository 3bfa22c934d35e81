// RUN: pipecc-opt %s --pipecc-hoist-invariant-loads --split-input-file | FileCheck %s

// A per-row value read in a row loop that stores elsewhere in the same
// workspace: it moves in front of the column loop (not further: it depends
// on the row).
memref.global "private" @ws : memref<4096xi8>

// CHECK-LABEL: func.func @disjoint_views
// CHECK: scf.for %[[I:.*]] = %{{.*}} to
// CHECK-NEXT: %[[R:.*]] = memref.load %{{.*}}[%[[I]]] : memref<4xf32>
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to
// CHECK-NEXT: memref.store %[[R]], %{{.*}}[%[[I]], %[[J]]]
func.func @disjoint_views() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  %g = memref.get_global @ws : memref<4096xi8>
  %rows = memref.view %g[%c0][] : memref<4096xi8> to memref<4xf32>
  %out = memref.view %g[%c1024][] : memref<4096xi8> to memref<4x16xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %r = memref.load %rows[%i] : memref<4xf32>
      memref.store %r, %out[%i, %j] : memref<4x16xf32>
    }
  }
  return
}

// -----

// Views whose bytes overlap (bytes 1024-1039 are both): the load stays.
memref.global "private" @ws : memref<4096xi8>

// CHECK-LABEL: func.func @overlapping_views
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
func.func @overlapping_views() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  %c1036 = arith.constant 1036 : index
  %g = memref.get_global @ws : memref<4096xi8>
  %rows = memref.view %g[%c1036][] : memref<4096xi8> to memref<4xf32>
  %out = memref.view %g[%c1024][] : memref<4096xi8> to memref<4x16xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %r = memref.load %rows[%i] : memref<4xf32>
      memref.store %r, %out[%i, %j] : memref<4x16xf32>
    }
  }
  return
}

// -----

// A function argument may be a view of the workspace (an outlined part's
// caller cuts them from it): the load stays, and so does a load of the
// workspace when the loop stores through an argument.
memref.global "private" @ws : memref<4096xi8>

// CHECK-LABEL: func.func @arguments_may_overlap
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load %arg0
// CHECK-NEXT: memref.store
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store %{{.*}}, %arg1
func.func @arguments_may_overlap(%rows: memref<4xf32>, %out: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  %g = memref.get_global @ws : memref<4096xi8>
  %view = memref.view %g[%c1024][] : memref<4096xi8> to memref<4x16xf32>
  %wsrows = memref.view %g[%c0][] : memref<4096xi8> to memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %r = memref.load %rows[%i] : memref<4xf32>
      memref.store %r, %view[%i, %j] : memref<4x16xf32>
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %r = memref.load %wsrows[%i] : memref<4xf32>
      memref.store %r, %out[%i, %j] : memref<4x16xf32>
    }
  }
  return
}

// -----

// A call may write anything; a loop that may not run keeps its loads (the
// load after it would read what it never read).
memref.global "private" @ws : memref<4096xi8>
func.func private @opaque()

// CHECK-LABEL: func.func @calls_and_empty_loops
// CHECK: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: func.call @opaque
// CHECK: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
func.func @calls_and_empty_loops(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  %g = memref.get_global @ws : memref<4096xi8>
  %rows = memref.view %g[%c0][] : memref<4096xi8> to memref<4xf32>
  %out = memref.view %g[%c1024][] : memref<4096xi8> to memref<16xf32>
  scf.for %j = %c0 to %c16 step %c1 {
    %r = memref.load %rows[%c0] : memref<4xf32>
    func.call @opaque() : () -> ()
    memref.store %r, %out[%j] : memref<16xf32>
  }
  scf.for %j = %c0 to %n step %c1 {
    %r = memref.load %rows[%c0] : memref<4xf32>
    memref.store %r, %out[%j] : memref<16xf32>
  }
  return
}

// -----

// A loop that stores nothing (a reduction carried in iter_args): its
// invariant loads of an argument move out of every loop, innermost first.
// CHECK-LABEL: func.func @no_stores
// CHECK: %[[V:.*]] = memref.load %arg0[%{{.*}}] : memref<4xf32>
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: arith.addf %{{.*}}, %[[V]]
func.func @no_stores(%in: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %zero) -> f32 {
    %inner = scf.for %j = %c0 to %c4 step %c1 iter_args(%b = %a) -> f32 {
      %v = memref.load %in[%c1] : memref<4xf32>
      %s = arith.addf %b, %v : f32
      scf.yield %s : f32
    }
    scf.yield %inner : f32
  }
  return %sum : f32
}
