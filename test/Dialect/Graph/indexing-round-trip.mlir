// The transformer ops print and parse back, in custom and generic form.
// RUN: pipecc-opt %s | pipecc-opt | FileCheck %s
// RUN: pipecc-opt %s --mlir-print-op-generic | pipecc-opt | FileCheck %s

// CHECK-LABEL: func.func @attention_ops
func.func @attention_ops(%x: tensor<2x4x6xf32>, %ids: tensor<2x4xi64>) -> tensor<1x2x4x2xf32> {
  %table = graph.param "table" trainable : tensor<10x6xf32>
  // CHECK: graph.gather %{{.*}}, %{{.*}} axis = 0 : tensor<10x6xf32>, tensor<2x4xi64> -> tensor<2x4x6xf32>
  %e = graph.gather %table, %ids axis = 0 : tensor<10x6xf32>, tensor<2x4xi64> -> tensor<2x4x6xf32>
  // CHECK: graph.gather_grad %{{.*}}, %{{.*}} axis = 0 : tensor<2x4xi64>, tensor<2x4x6xf32> -> tensor<10x6xf32>
  %de = graph.gather_grad %ids, %e axis = 0 : tensor<2x4xi64>, tensor<2x4x6xf32> -> tensor<10x6xf32>
  // CHECK: graph.sqrt %{{.*}} : tensor<2x4x6xf32>
  %s = graph.sqrt %e : tensor<2x4x6xf32>
  // CHECK: graph.erf %{{.*}} : tensor<2x4x6xf32>
  %r = graph.erf %s : tensor<2x4x6xf32>
  // CHECK: graph.slice %{{.*}} offsets = [0, 0, 2] sizes = [2, 4, 2] : tensor<2x4x6xf32> -> tensor<2x4x2xf32>
  %q = graph.slice %r offsets = [0, 0, 2] sizes = [2, 4, 2] : tensor<2x4x6xf32> -> tensor<2x4x2xf32>
  // CHECK: graph.pad %{{.*}} low = [0, 0, 2] : tensor<2x4x2xf32> -> tensor<2x4x6xf32>
  %p = graph.pad %q low = [0, 0, 2] : tensor<2x4x2xf32> -> tensor<2x4x6xf32>
  %sc = graph.matmul %q, %q transpose_rhs : tensor<2x4x2xf32>, tensor<2x4x2xf32> -> tensor<2x4x4xf32>
  %m = graph.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %ninf = graph.constant dense<0xFF800000> : tensor<f32>
  // CHECK: graph.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x1x4x4xi1>, tensor<f32>, tensor<2x4x4xf32>
  %w = graph.where %m, %ninf, %sc : tensor<1x1x4x4xi1>, tensor<f32>, tensor<2x4x4xf32>
  %pr = graph.softmax %w axis = 3 : tensor<1x2x4x4xf32>
  %y = graph.matmul %pr, %q : tensor<1x2x4x4xf32>, tensor<2x4x2xf32> -> tensor<1x2x4x2xf32>
  return %y : tensor<1x2x4x2xf32>
}
