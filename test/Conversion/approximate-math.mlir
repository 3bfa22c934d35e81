// RUN: pipecc-opt %s --pipecc-approximate-math | FileCheck %s
// RUN: pipecc-opt %s --pipecc-approximate-math --convert-math-to-llvm --convert-math-to-libm | FileCheck %s --check-prefix=CALLS

// f32 exp, erf and tanh become inline arithmetic; log keeps its libm call.
// CHECK-LABEL: func.func @f32
// CHECK-NOT: math.exp
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK-NOT: math.fma
// CHECK-NOT: math.floor
// CHECK: math.log
// CHECK: return
// CALLS-LABEL: func.func @f32
// CALLS-NOT: call @expf
// CALLS-NOT: call @erff
// CALLS-NOT: call @tanhf
// CALLS-NOT: call @fmaf
// CALLS-NOT: call @floorf
// CALLS-NOT: llvm.intr.fma
// CALLS-NOT: llvm.intr.floor
// CALLS-NOT: llvm.intr.exp
// CALLS: return
func.func @f32(%x: f32) -> (f32, f32, f32, f32) {
  %0 = math.exp %x : f32
  %1 = math.erf %x : f32
  %2 = math.tanh %x : f32
  %3 = math.log %x : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

// f64 keeps libm's accuracy.
// CHECK-LABEL: func.func @f64
// CHECK: math.exp
// CHECK: math.erf
func.func @f64(%x: f64) -> (f64, f64) {
  %0 = math.exp %x : f64
  %1 = math.erf %x : f64
  return %0, %1 : f64, f64
}
