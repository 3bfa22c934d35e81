// RUN: pipecc-opt %s --pipecc-map-loops-to-gpu="block-size=4" --split-input-file | FileCheck %s
// RUN: pipecc-opt %s --pipecc-map-loops-to-gpu="block-size=4 reduction-chunk=2" --split-input-file | FileCheck %s --check-prefix=SPLIT

// A row loop writing only row %i of its output: one thread per row.
// CHECK-LABEL: func.func @rows(
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK: scf.for
// CHECK: memref.store
// CHECK: {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NOT: scf.parallel
func.func @rows(%in: memref<6x3xf32>, %out: memref<6x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      %x = memref.load %in[%i, %j] : memref<6x3xf32>
      memref.store %x, %out[%i, %j] : memref<6x3xf32>
    }
  }
  return
}

// -----

// Iterations that read another iteration's output (a prefix sum) stay a
// sequential loop.
// CHECK-LABEL: func.func @prefix(
// CHECK-NOT: scf.parallel
// CHECK: scf.for
func.func @prefix(%out: memref<6xf32>) {
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c1 to %c6 step %c1 {
    %p = arith.subi %i, %c1 : index
    %x = memref.load %out[%p] : memref<6xf32>
    %y = memref.load %out[%i] : memref<6xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %out[%i] : memref<6xf32>
  }
  return
}

// -----

// A loop carrying a value (a sum) stays sequential.
// CHECK-LABEL: func.func @carried(
// CHECK-NOT: scf.parallel
// CHECK: scf.for {{.*}} iter_args
func.func @carried(%in: memref<6xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c6 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %in[%i] : memref<6xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  memref.store %sum, %out[] : memref<f32>
  return
}

// -----

// A sum over axis 0: the reduction moves inside the thread of each column;
// the 2-D copy is collapsed into one dimension of 6 elements (2 blocks of
// 4 threads, the tail guarded).
// CHECK-LABEL: func.func @column_sum(
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<2x3xf32>
// CHECK: arith.addf
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %c3
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%[[N]]) step
// CHECK: scf.parallel
// CHECK: arith.cmpi ult
// CHECK: arith.remsi
// CHECK: arith.divsi
// CHECK: memref.store {{.*}} : memref<2x3xf32>
func.func @column_sum(%in: memref<2x3xf32>, %out: memref<3xf32>, %copy: memref<2x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%in : memref<2x3xf32>) outs(%out : memref<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  memref.copy %in, %copy : memref<2x3xf32> to memref<2x3xf32>
  return
}

// -----

// A loss over the rows (a cross-entropy's shape: a row's worth of work per
// term, summed with a count): the rows' terms go to a buffer in parallel,
// then one short loop adds them in the same order with the same adds, so
// the sum rounds as before. The count's term is defined outside: no buffer.
// CHECK-LABEL: func.func @row_loss(
// CHECK-SAME: %[[IN:.*]]: memref<6x3xf32>, %[[OUT:.*]]: memref<f32>
// CHECK: %[[TERMS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<6xf32>
// CHECK: scf.parallel
// CHECK: scf.parallel (%[[ROW:.*]]) =
// CHECK: scf.for {{.*}} iter_args
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[TERMS]][%{{.*}}] : memref<6xf32>
// CHECK: %[[SUMS:.*]]:2 = scf.for %[[I:.*]] = %c0 to %c6 step %c1 iter_args(%[[S:.*]] = %{{.*}}, %[[N:.*]] = %{{.*}}) -> (f32, f32) {
// CHECK-NEXT: %[[T:.*]] = memref.load %[[TERMS]][%[[I]]] : memref<6xf32>
// CHECK-NEXT: arith.addf %[[S]], %[[T]] fastmath<contract> : f32
// CHECK-NEXT: arith.addf %[[ONE:.*]], %[[N]] : f32
// CHECK: memref.dealloc %[[TERMS]]
// CHECK: arith.divf %[[SUMS]]#0, %[[SUMS]]#1
func.func @row_loss(%in: memref<6x3xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %sums:2 = scf.for %i = %c0 to %c6 step %c1 iter_args(%acc = %zero, %n = %zero) -> (f32, f32) {
    %row = scf.for %j = %c0 to %c3 step %c1 iter_args(%r = %zero) -> f32 {
      %x = memref.load %in[%i, %j] : memref<6x3xf32>
      %e = math.exp %x : f32
      %s = arith.addf %r, %e : f32
      scf.yield %s : f32
    }
    %l = math.log %row : f32
    %next = arith.addf %acc, %l fastmath<contract> : f32
    %count = arith.addf %one, %n : f32
    scf.yield %next, %count : f32, f32
  }
  %mean = arith.divf %sums#0, %sums#1 : f32
  memref.store %mean, %out[] : memref<f32>
  return
}

// -----

// Rows at a stride, from an offset: row (i - 1) / 2 of the buffer.
// CHECK-LABEL: func.func @strided_rows(
// CHECK: memref.alloc() {{.*}} : memref<3xf32>
// CHECK: scf.parallel
// CHECK: %[[OFF:.*]] = arith.subi %{{.*}}, %c1
// CHECK: %[[ROW:.*]] = arith.divui %[[OFF]], %c2
// CHECK: memref.store %{{.*}}[%[[ROW]]] : memref<3xf32>
// CHECK: scf.for %{{.*}} = %c1 to %c6 step %c2
func.func @strided_rows(%in: memref<6x3xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c1 to %c6 step %c2 iter_args(%acc = %zero) -> f32 {
    %row = scf.for %j = %c0 to %c3 step %c1 iter_args(%r = %zero) -> f32 {
      %x = memref.load %in[%i, %j] : memref<6x3xf32>
      %s = arith.addf %r, %x : f32
      scf.yield %s : f32
    }
    %next = arith.addf %acc, %row : f32
    scf.yield %next : f32
  }
  memref.store %sum, %out[] : memref<f32>
  return
}

// -----

// A carried value that is not a sum of terms (a running maximum) keeps the
// loop sequential, and so does a term that reads the running sum.
// CHECK-LABEL: func.func @not_row_sums(
// CHECK-NOT: memref.alloc
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.maximumf
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.mulf
func.func @not_row_sums(%in: memref<6x3xf32>, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %max = scf.for %i = %c0 to %c6 step %c1 iter_args(%m = %zero) -> f32 {
    %row = scf.for %j = %c0 to %c3 step %c1 iter_args(%r = %zero) -> f32 {
      %x = memref.load %in[%i, %j] : memref<6x3xf32>
      %s = arith.addf %r, %x : f32
      scf.yield %s : f32
    }
    %next = arith.maximumf %m, %row : f32
    scf.yield %next : f32
  }
  %sum = scf.for %i = %c0 to %c6 step %c1 iter_args(%acc = %zero) -> f32 {
    %row = scf.for %j = %c0 to %c3 step %c1 iter_args(%r = %zero) -> f32 {
      %x = memref.load %in[%i, %j] : memref<6x3xf32>
      %s = arith.addf %r, %x : f32
      scf.yield %s : f32
    }
    %scaled = arith.mulf %acc, %row : f32
    %next = arith.addf %acc, %scaled : f32
    scf.yield %next : f32
  }
  %c1i = arith.constant 1 : index
  memref.store %max, %out[%c0] : memref<2xf32>
  memref.store %sum, %out[%c1i] : memref<2xf32>
  return
}

// -----

// A bias gradient's column sum over 5 rows: with chunks of 2 rows, one
// thread per (chunk, column) sums its rows (the last chunk 1 row) into
// partial sums, one thread per column adds the 3 partial sums into the
// output (the body's add, operands in its order). Chunks of 64 (the
// default) would not make 2 chunks: one thread per column.
// CHECK-LABEL: func.func @bias_gradient(
// CHECK-NOT: memref.alloc
// CHECK: return
// SPLIT-LABEL: func.func @bias_gradient(
// SPLIT-SAME: %[[IN:.*]]: memref<5x3xf32>, %[[OUT:.*]]: memref<3xf32>
// SPLIT: %[[PARTIAL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3x3xf32>
// SPLIT: scf.parallel
// SPLIT: %[[FIRST:.*]] = arith.muli %{{.*}}, %c2
// SPLIT: %[[END:.*]] = arith.minsi %{{.*}}, %c5
// SPLIT: scf.for %[[R:.*]] = %[[FIRST]] to %[[END]] step %c1 iter_args(%[[S:.*]] = %cst)
// SPLIT: %[[X:.*]] = memref.load %[[IN]][%[[R]], %{{.*}}]
// SPLIT: arith.addf %[[X]], %[[S]] fastmath<contract>
// SPLIT: memref.store %{{.*}}, %[[PARTIAL]][
// SPLIT: mapping = [#gpu.loop_dim_map<processor = block_x
// SPLIT: scf.parallel
// SPLIT: %[[O:.*]] = memref.load %[[OUT]][
// SPLIT: scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args(%[[T:.*]] = %[[O]])
// SPLIT: %[[P:.*]] = memref.load %[[PARTIAL]][
// SPLIT: arith.addf %[[P]], %[[T]] fastmath<contract>
// SPLIT: memref.store %{{.*}}, %[[OUT]][
// SPLIT: mapping = [#gpu.loop_dim_map<processor = block_x
// SPLIT: memref.dealloc %[[PARTIAL]]
#sum_in = affine_map<(d0, d1) -> (d0, d1)>
#sum_out = affine_map<(d0, d1) -> (d1)>
func.func @bias_gradient(%in: memref<5x3xf32>, %out: memref<3xf32>) {
  linalg.generic {indexing_maps = [#sum_in, #sum_out], iterator_types = ["reduction", "parallel"]} ins(%in : memref<5x3xf32>) outs(%out : memref<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<contract> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A column sum into a running maximum is not a sum: not split.
// SPLIT-LABEL: func.func @column_max(
// SPLIT-NOT: memref.alloc
// SPLIT: return
#max_in = affine_map<(d0, d1) -> (d0, d1)>
#max_out = affine_map<(d0, d1) -> (d1)>
func.func @column_max(%in: memref<5x3xf32>, %out: memref<3xf32>) {
  linalg.generic {indexing_maps = [#max_in, #max_out], iterator_types = ["reduction", "parallel"]} ins(%in : memref<5x3xf32>) outs(%out : memref<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.maximumf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}
