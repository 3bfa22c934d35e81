// RUN: pipecc-opt %s --pipecc-approximate-math | FileCheck %s
// RUN: pipecc-opt %s --pipecc-lower-to-llvm | FileCheck %s --check-prefix=CALLS

// f32 exp, erf and tanh become inline arithmetic; log keeps its libm call.
// CHECK-LABEL: func.func @f32
// CHECK-NOT: math.exp
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK-NOT: math.fma
// CHECK-NOT: math.floor
// Each of the polynomials' fma is a multiply and an add that may contract
// into one FMA where the target CPU has it (llvm.fmuladd's meaning).
// CHECK: arith.mulf {{.*}} fastmath<contract>
// CHECK: arith.addf {{.*}} fastmath<contract>
// CHECK: math.log
// CHECK: return
// In the CPU pipeline no libm call or intrinsic is left for them.
// CALLS-LABEL: llvm.func @f32
// CALLS-NOT: llvm.call @expf
// CALLS-NOT: llvm.call @erff
// CALLS-NOT: llvm.call @tanhf
// CALLS-NOT: llvm.call @fmaf
// CALLS-NOT: llvm.call @floorf
// CALLS-NOT: llvm.intr.fma
// CALLS-NOT: llvm.intr.floor
// CALLS-NOT: llvm.intr.exp
// The polynomials' floor truncates through i32, not i64: x86-64 without
// AVX-512 has no vector f32 -> i64 conversion, and one would scalarize the
// loop around every exp and erf.
// CALLS-NOT: llvm.fptosi {{.*}} to i64
// CALLS: llvm.intr.log
// CALLS: llvm.return
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
// CALLS-LABEL: llvm.func @f64
// CALLS: llvm.intr.exp
// CALLS: llvm.call @erf(
func.func @f64(%x: f64) -> (f64, f64) {
  %0 = math.exp %x : f64
  %1 = math.erf %x : f64
  return %0, %1 : f64, f64
}
