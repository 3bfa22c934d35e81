// RUN: pipecc-opt %s --split-input-file --pipecc-fuse-column-sums | FileCheck %s

// ReLU's backward and the bias gradient: one loop stores dL/dz and adds it
// into the column sums (the zeroing moved before it).
// CHECK-LABEL: func.func @relu_backward_bias_grad(
// CHECK-SAME: %[[Z:.*]]: memref<4x8xf32>, %[[G:.*]]: memref<4x8xf32>, %[[DZ:.*]]: memref<4x8xf32>, %[[DB:.*]]: memref<8xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[DB]] : memref<8xf32>)
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK-SAME: ins(%[[Z]], %[[G]] : memref<4x8xf32>, memref<4x8xf32>) outs(%[[DZ]], %[[DB]] : memref<4x8xf32>, memref<8xf32>)
// CHECK: %[[MASKED:.*]] = arith.select
// CHECK: %[[SUM:.*]] = arith.addf %[[MASKED]], %{{.*}} : f32
// CHECK: linalg.yield %[[MASKED]], %[[SUM]] : f32, f32
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @relu_backward_bias_grad(%z: memref<4x8xf32>, %g: memref<4x8xf32>, %dz: memref<4x8xf32>, %db: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z, %g : memref<4x8xf32>, memref<4x8xf32>) outs(%dz : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.cmpf ogt, %a, %zero : f32
    %s = arith.select %p, %b, %zero : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%db : memref<8xf32>)
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dz : memref<4x8xf32>) outs(%db : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An op the pass cannot see through between the loops: unchanged.
// CHECK-LABEL: func.func @op_between(
// CHECK-COUNT-2: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @op_between(%z: memref<4x8xf32>, %dz: memref<4x8xf32>, %db: memref<8xf32>, %c: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<4x8xf32>) outs(%dz : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %zero : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%db : memref<8xf32>)
  memref.copy %dz, %c : memref<4x8xf32> to memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dz : memref<4x8xf32>) outs(%db : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row sum (out[i] += in[i, j]) is not a column sum: unchanged.
// CHECK-LABEL: func.func @row_sum(
// CHECK-COUNT-2: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_sum(%z: memref<4x8xf32>, %dz: memref<4x8xf32>, %r: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<4x8xf32>) outs(%dz : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %zero : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%r : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dz : memref<4x8xf32>) outs(%r : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Ops in between that read the stored matrix or touch other buffers are
// fine: the fused loop runs at the producer's place.
// CHECK-LABEL: func.func @reader_between(
// CHECK-SAME: %[[Z:.*]]: memref<4x8xf32>, %[[DZ:.*]]: memref<4x8xf32>, %[[DB:.*]]: memref<8xf32>, %[[C:.*]]: memref<4x8xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[DB]] : memref<8xf32>)
// CHECK-NEXT: linalg.generic
// CHECK-SAME: outs(%[[DZ]], %[[DB]] : memref<4x8xf32>, memref<8xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[DZ]] : memref<4x8xf32>) outs(%[[C]] : memref<4x8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @reader_between(%z: memref<4x8xf32>, %dz: memref<4x8xf32>, %db: memref<8xf32>, %c: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<4x8xf32>) outs(%dz : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %zero : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%dz : memref<4x8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%db : memref<8xf32>)
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dz : memref<4x8xf32>) outs(%db : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Two loops write the matrix: the sums join the last one, whose values the
// sum reads.
// CHECK-LABEL: func.func @writer_between(
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : memref<4x8xf32>)
// CHECK: arith.maximumf
// CHECK: linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<8xf32>)
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @writer_between(%z: memref<4x8xf32>, %dz: memref<4x8xf32>, %db: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<4x8xf32>) outs(%dz : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %zero : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<4x8xf32>) outs(%dz : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %o : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%db : memref<8xf32>)
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dz : memref<4x8xf32>) outs(%db : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// No fill: the sum adds into a gradient accumulator (as
// pipecc-accumulate-gradients leaves a weight-gradient function). The
// fused loop starts from the accumulator's value, which nothing between
// the loops changes; nothing is zeroed.
// CHECK-LABEL: func.func @accumulates_into_gradient(
// CHECK-SAME: %[[Z:.*]]: memref<4x8xf32>, %[[G:.*]]: memref<4x8xf32>, %[[DZ:.*]]: memref<4x8xf32>, %[[DB:.*]]: memref<8xf32>, %[[C:.*]]: memref<4x8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[Z]], %[[G]] : memref<4x8xf32>, memref<4x8xf32>) outs(%[[DZ]], %[[DB]] : memref<4x8xf32>, memref<8xf32>)
// CHECK: %[[MASKED:.*]] = arith.select
// CHECK: %[[SUM:.*]] = arith.addf %[[MASKED]], %{{.*}} : f32
// CHECK: linalg.yield %[[MASKED]], %[[SUM]] : f32, f32
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[C]] : memref<4x8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @accumulates_into_gradient(%z: memref<4x8xf32>, %g: memref<4x8xf32>, %dz: memref<4x8xf32>, %db: memref<8xf32>, %c: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z, %g : memref<4x8xf32>, memref<4x8xf32>) outs(%dz : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.cmpf ogt, %a, %zero : f32
    %s = arith.select %p, %b, %zero : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%dz : memref<4x8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dz : memref<4x8xf32>) outs(%db : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An op between them adds into the gradient: the sum would start from a
// value the producer's place does not have; unchanged.
// CHECK-LABEL: func.func @gradient_written_between(
// CHECK-COUNT-3: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @gradient_written_between(%z: memref<4x8xf32>, %dz: memref<4x8xf32>, %db: memref<8xf32>, %other: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<4x8xf32>) outs(%dz : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %zero : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%other : memref<4x8xf32>) outs(%db : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dz : memref<4x8xf32>) outs(%db : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The sum goes into a temporary allocated after the producer (a grouped
// weight gradient adds two micro-batches' sums): the allocation moves up
// so that the fused loop can write it.
// CHECK-LABEL: func.func @sum_into_later_allocation(
// CHECK: %[[T:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[T]] : memref<8xf32>)
// CHECK-NEXT: linalg.generic
// CHECK-SAME: outs(%{{.*}}, %[[T]] : memref<4x8xf32>, memref<8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: memref.copy %[[T]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @sum_into_later_allocation(%z: memref<4x8xf32>, %dz: memref<4x8xf32>, %db: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<4x8xf32>) outs(%dz : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %zero : f32
    linalg.yield %s : f32
  }
  %t = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<8xf32>)
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dz : memref<4x8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  memref.copy %t, %db : memref<8xf32> to memref<8xf32>
  return
}
