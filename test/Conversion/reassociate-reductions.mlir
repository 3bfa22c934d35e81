// RUN: pipecc-opt %s --pipecc-reassociate-reductions | FileCheck %s
// RUN: pipecc-opt %s --pipecc-lower-to-llvm | FileCheck %s --check-prefix=LLVM

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A row sum: its addition may be reassociated (summed in vector lanes);
// the element-wise op before it keeps its flags, and flags already there
// are kept beside reassoc.
// CHECK-LABEL: func.func @row_sum
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: fastmath
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
// In the CPU pipeline the flag reaches LLVM.
// LLVM-LABEL: llvm.func @row_sum
// LLVM: llvm.fadd %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<contract, reassoc>} : f32
func.func @row_sum(%x: memref<4x8xf32>, %sq: memref<4x8xf32>,
                   %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%sq : memref<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%sq : memref<4x8xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %acc, %0 fastmath<contract> : f32
    linalg.yield %1 : f32
  }
  return
}

// A loop carrying a float (a hand-written row reduction) is marked; a loop
// carrying only an index is not.
// CHECK-LABEL: func.func @loops
// CHECK: scf.for
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK: scf.for
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: fastmath
// CHECK: return
func.func @loops(%x: memref<8xf32>, %y: memref<8xf32>) -> (f32, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %x[%i] : memref<8xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  %last = scf.for %i = %c0 to %c8 step %c1 iter_args(%n = %c0) -> (index) {
    %v = memref.load %x[%i] : memref<8xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %y[%i] : memref<8xf32>
    %m = arith.addi %n, %c1 : index
    scf.yield %m : index
  }
  return %sum, %last : f32, index
}

// A bf16 reduction's conversions carry no fastmath attribute until marked
// (the attribute is optional on truncf and extf).
// CHECK-LABEL: func.func @conversions
// CHECK: arith.extf %{{.*}} fastmath<reassoc> : bf16 to f32
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK: arith.truncf %{{.*}} fastmath<reassoc> : f32 to bf16
func.func @conversions(%x: memref<4x8xbf16>, %y: memref<8xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x8xbf16>) outs(%y : memref<8xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %wa = arith.extf %a : bf16 to f32
    %wo = arith.extf %o : bf16 to f32
    %s = arith.addf %wa, %wo : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
