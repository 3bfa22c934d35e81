// RUN: pipecc-opt %s --pipecc-accumulate-gradients | FileCheck %s
// Weight-gradient out-params of a W function become the accumulators: the
// zero fills before the matmul (sgemm then runs with beta = 1) and before
// the bias reduction go; a gradient of another producer is written to a
// temporary and added by one loop; a result the rank reads again ("h", an
// argument of @other) and a gradient shared by two parameters keep their
// writes, and no `accumulate` on their bindings.

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @stage0_backward_weight
// CHECK-SAME: %[[X:[^:]*]]: memref<4x8xf32>, %[[G:[^:]*]]: memref<4x8xf32>, %[[DW:[^:]*]]: memref<8x8xf32>, %[[DB:[^:]*]]: memref<8xf32>, %[[DS:[^:]*]]: memref<4x8xf32>, %[[H:[^:]*]]: memref<8xf32>, %[[DT:[^:]*]]: memref<8xf32>
// CHECK-SAME: results = [{accumulate, pipeline.param_grad = ["w"], pipeline.tensor = "dw", type = tensor<8x8xf32>}, {accumulate, pipeline.param_grad = ["b"], pipeline.tensor = "db", type = tensor<8xf32>}, {accumulate, pipeline.param_grad = ["s"], pipeline.tensor = "ds", type = tensor<4x8xf32>}, {pipeline.param_grad = ["h"], pipeline.tensor = "h", type = tensor<8xf32>}, {pipeline.param_grad = ["t", "u"], pipeline.tensor = "dt", type = tensor<8xf32>}]
// CHECK: %[[TMP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%[[DW]]
// CHECK: linalg.matmul_transpose_a ins(%[[G]], %[[X]] : memref<4x8xf32>, memref<4x8xf32>) outs(%[[DW]] : memref<8x8xf32>)
// CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%[[DB]]
// CHECK: linalg.generic {{.*}} ins(%[[G]] : memref<4x8xf32>) outs(%[[DB]] : memref<8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[G]] : memref<4x8xf32>) outs(%[[TMP]] : memref<4x8xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[H]] : memref<8xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[DT]] : memref<8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[TMP]] : memref<4x8xf32>) outs(%[[DS]] : memref<4x8xf32>)
// CHECK: arith.addf
// CHECK: return
func.func @stage0_backward_weight(%x: memref<4x8xf32>, %g: memref<4x8xf32>, %dw: memref<8x8xf32>, %db: memref<8xf32>, %ds: memref<4x8xf32>, %h: memref<8xf32>, %dt: memref<8xf32>) attributes {pipeline.stage_abi = {kind = "backward_weight", args = [{pipeline.tensor = "x", type = tensor<4x8xf32>}, {pipeline.tensor = "g", type = tensor<4x8xf32>}], results = [{pipeline.tensor = "dw", pipeline.param_grad = ["w"], type = tensor<8x8xf32>}, {pipeline.tensor = "db", pipeline.param_grad = ["b"], type = tensor<8xf32>}, {pipeline.tensor = "ds", pipeline.param_grad = ["s"], type = tensor<4x8xf32>}, {pipeline.tensor = "h", pipeline.param_grad = ["h"], type = tensor<8xf32>}, {pipeline.tensor = "dt", pipeline.param_grad = ["t", "u"], type = tensor<8xf32>}]}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dw : memref<8x8xf32>)
  linalg.matmul_transpose_a ins(%g, %x : memref<4x8xf32>, memref<4x8xf32>) outs(%dw : memref<8x8xf32>)
  linalg.fill ins(%zero : f32) outs(%db : memref<8xf32>)
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%g : memref<4x8xf32>) outs(%db : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sum = arith.addf %in, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g : memref<4x8xf32>) outs(%ds : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %twice = arith.addf %in, %in : f32
    linalg.yield %twice : f32
  }
  linalg.fill ins(%zero : f32) outs(%h : memref<8xf32>)
  linalg.fill ins(%zero : f32) outs(%dt : memref<8xf32>)
  return
}

func.func @stage0_forward(%h: memref<8xf32>) attributes {pipeline.stage_abi = {kind = "forward", args = [{pipeline.tensor = "h", type = tensor<8xf32>}], results = []}} {
  return
}
