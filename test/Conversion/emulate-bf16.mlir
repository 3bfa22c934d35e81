// pipecc-emulate-bf16 (on loops, after linalg is lowered): bf16 arith is
// computed in f32 and rounded back with integer operations, no truncf left
// for LLVM to turn into a compiler-runtime call.
// RUN: pipecc-opt %s --pipecc-emulate-bf16 | FileCheck %s

// CHECK-LABEL: func.func @add
// CHECK-NOT: bf16 to f32
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK-NOT: arith.truncf
func.func @add(%a: bf16, %b: bf16) -> bf16 {
  %0 = arith.addf %a, %b : bf16
  return %0 : bf16
}
