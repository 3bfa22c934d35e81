// The host program of rank 1 of a two-stage MLP (gpipe, 2 micro-batches), as
// the lower phase builds it: the stage functions the rank's program calls
// and the whole schedule's messages (other ranks' computes call functions
// the module does not hold, so the lower phase drops them) in one module. pipecc-record-stage-abi keeps each function's
// bindings through the CPU stage lowering; pipecc-lower-rank-program then
// writes pipecc_step, the buffer table, the program constant and main.
// RUN: pipecc-opt %s --pipecc-record-stage-abi | FileCheck %s --check-prefix=ABI
// RUN: pipecc-opt %s --pipecc-record-stage-abi --pipecc-lower-to-llvm --pipecc-lower-rank-program | FileCheck %s
// RUN: pipecc-opt %s --pipecc-record-stage-abi --pipecc-lower-to-llvm --pipecc-lower-rank-program="target=cuda microbatch-size=4 learning-rate=0.5" | FileCheck %s --check-prefix=OPTIONS

// The bindings, with the class count of the labels the loss indexes with;
// the function's own argument attributes are gone.
// ABI-LABEL: func.func @stage1_forward(%arg0: tensor<4xi64>, %arg1: tensor<3x16xf32>, %arg2: tensor<4x16xf32>)
// ABI-SAME: pipeline.stage_abi = {args = [{num_classes = 3 : i64, pipeline.input = "labels", pipeline.tensor = "labels", type = tensor<4xi64>}, {pipeline.param = "w1", pipeline.tensor = "w1", type = tensor<3x16xf32>}, {pipeline.tensor = "a4", type = tensor<4x16xf32>}], kind = "forward",
// ABI-SAME: {pipeline.loss, pipeline.tensor = "a7", type = tensor<f32>}]}
// ABI-NOT: pipeline.kind =
// ABI: pipeline.pipeline @train

// The schedule and the ABI attributes are consumed; the module keeps its rank.
// CHECK: module attributes {pipeline.rank = 1 : i64, pipeline.workspace_bytes = {{[0-9]+}} : i64}
// CHECK-NOT: pipeline.stage_abi
// CHECK-NOT: pipeline.pipeline
// CHECK-NOT: pipeline.program

// Buffers in order of first use: labels (0), w1 (1) and its gradient (2),
// the received a4 (3), the forward's results a5, a6, a7 (4-6), the
// backward's g9 and g12 (7, 8); w1's gradient is written by the W function
// into its accumulator (no scratch buffer), checked after the last W.
// CHECK-LABEL: llvm.func @pipecc_step(%arg0: !llvm.ptr)
// Message tags count the pipeline's tensor names in order: a4 = 0, g12 = 1.
// CHECK: %[[A4:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK: %[[MB0:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: %[[FROM:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[TAG0:.*]] = llvm.mlir.constant(0 : i32) : i32
// Without a memory plan every micro-batch has its own copy of a4: both
// receives are posted at the start of the step, in program order, and each
// is waited for right before the forward reading it.
// CHECK: %[[RECV0:.*]] = llvm.call @pipecc_rt_irecv(%arg0, %[[A4]], %[[MB0]], %[[FROM]], %[[TAG0]]) : (!llvm.ptr, i64, i64, i32, i32) -> i64
// CHECK: %[[RECV1:.*]] = llvm.call @pipecc_rt_irecv(
// CHECK-NEXT: llvm.call @pipecc_rt_wait(%arg0, %[[RECV0]])
// Every compute action lies between pipecc_rt_trace_begin(kind, virtual
// stage, chunk, micro-batch) and pipecc_rt_trace_end (--trace): F of stage 1,
// chunk 0, micro-batch 0.
// CHECK: %[[KIND_F:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[STAGE1:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[CHUNK0:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[TMB0:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: llvm.call @pipecc_rt_trace_begin(%arg0, %[[KIND_F]], %[[STAGE1]], %[[CHUNK0]], %[[TMB0]]) : (!llvm.ptr, i32, i64, i64, i64) -> ()
// Data loads at the forward, then the class-id check (3 classes, no
// ignored label).
// CHECK: llvm.call @pipecc_rt_load_microbatch(
// CHECK: %[[THREE:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK: %[[NOIGNORE:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: llvm.call @pipecc_rt_check_class_ids({{.*}}, %[[THREE]], %[[NOIGNORE]],
// Three inputs then three outputs; the loss is reported by address, never
// loaded by the host code.
// CHECK: llvm.call @stage1_forward(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LOSS:[^)]*]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.call @pipecc_rt_report_loss_at(%arg0, %{{.*}}, %[[LOSS]])
// CHECK-NEXT: llvm.call @pipecc_rt_trace_end(%arg0)
// CHECK: llvm.call @pipecc_rt_wait(%arg0, %[[RECV1]])
// CHECK: llvm.call @stage1_forward(
// CHECK: llvm.call @stage1_backward_input(
// CHECK-NOT: llvm.call @pipecc_rt_accumulate_gradient
// CHECK: llvm.call @stage1_backward_weight(
// CHECK-NEXT: llvm.call @pipecc_rt_trace_end(%arg0)
// The send of micro-batch 0's g12 is posted before the next compute
// (micro-batch 1's backward) and waited for only at the end of the step
// (without a memory plan every micro-batch has its own copy).
// CHECK: %[[G12:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK: %[[TO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[TAG1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: %[[SEND0:.*]] = llvm.call @pipecc_rt_isend(%arg0, %[[G12]], %{{.*}}, %[[TO]], %[[TAG1]])
// CHECK-NOT: @pipecc_rt_wait
// CHECK: llvm.call @pipecc_rt_trace_begin(
// CHECK: llvm.call @stage1_backward_input(
// CHECK: %[[SEND1:.*]] = llvm.call @pipecc_rt_isend(
// CHECK-NEXT: llvm.call @pipecc_rt_wait(%arg0, %[[SEND0]])
// CHECK-NEXT: llvm.call @pipecc_rt_wait(%arg0, %[[SEND1]])
// CHECK-NOT: llvm.load
// CHECK-NEXT: llvm.return

// CHECK: llvm.mlir.global internal constant @pipecc_target("cpu\00")
// Nine descriptors {name, role, dtype, per_microbatch, num_dims, shape, bytes,
// parameter_id, num_classes, slots, offset} (ABI version 11).
// CHECK: llvm.mlir.global internal constant @pipecc_buffers() {{.*}} : !llvm.array<9 x struct<(ptr, i32, i32, i32, i32, ptr, i64, i64, i64, i64, i64)>>
// CHECK-LABEL: llvm.mlir.global internal constant @pipecc_program()
// CHECK-SAME: !llvm.struct<(i32, i32, i32, i32, i64, f32, f32, i32, i64, ptr, ptr, i64, ptr, i64, ptr)>
// CHECK: %[[VERSION:.*]] = llvm.mlir.constant(11 : i32) : i32
// CHECK: llvm.insertvalue %[[VERSION]], %{{.*}}[0]
// CHECK: llvm.mlir.addressof @pipecc_target
// The stage workspace's address, for the runtime's huge-page advice.
// CHECK: %[[WS:.*]] = llvm.mlir.addressof @pipecc_stage_workspace
// CHECK: llvm.insertvalue %[[WS]], %{{.*}}[14]
// CHECK-LABEL: llvm.func @main(
// CHECK: llvm.call @pipecc_rt_main(

// On CUDA (NCCL matches messages by the order they start) each receive is
// posted where the program has it.
// OPTIONS-LABEL: llvm.func @pipecc_step
// OPTIONS: %[[R0:.*]] = llvm.call @pipecc_rt_irecv(
// OPTIONS-NEXT: llvm.call @pipecc_rt_wait(%arg0, %[[R0]])
// OPTIONS: llvm.call @stage1_forward(
// OPTIONS: %[[R1:.*]] = llvm.call @pipecc_rt_irecv(
// OPTIONS-NEXT: llvm.call @pipecc_rt_wait(%arg0, %[[R1]])
// OPTIONS: llvm.mlir.global internal constant @pipecc_target("cuda\00")
// OPTIONS: llvm.mlir.constant(5.000000e-01 : f32) : f32

module attributes {pipeline.rank = 1 : i64, pipeline.parameters = [{name = "w0", stages = array<i64: 0>, trainable = true, type = tensor<16x8xf32>}, {name = "b0", stages = array<i64: 0>, trainable = true, type = tensor<16xf32>}, {name = "w1", stages = array<i64: 1>, trainable = true, type = tensor<3x16xf32>}]} {
  func.func @stage1_forward(%arg0: tensor<4xi64> {pipeline.input = "labels", pipeline.tensor = "labels"}, %arg1: tensor<3x16xf32> {pipeline.param = "w1", pipeline.tensor = "w1"}, %arg2: tensor<4x16xf32> {pipeline.tensor = "a4"}) -> (tensor<4x16xf32> {pipeline.tensor = "a5"}, tensor<4x3xf32> {pipeline.tensor = "a6"}, tensor<f32> {pipeline.loss, pipeline.tensor = "a7"}) attributes {pipeline.kind = "forward", pipeline.recv = ["a4"], pipeline.send = [], pipeline.stage = 1 : i64} {
    %0 = graph.relu %arg2 : tensor<4x16xf32>
    %1 = graph.matmul %0, %arg1 transpose_rhs : tensor<4x16xf32>, tensor<3x16xf32> -> tensor<4x3xf32>
    %2 = graph.cross_entropy %1, %arg0 : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
    return %0, %1, %2 : tensor<4x16xf32>, tensor<4x3xf32>, tensor<f32>
  }
  func.func @stage1_backward_input(%arg0: tensor<4xi64> {pipeline.input = "labels", pipeline.tensor = "labels"}, %arg1: tensor<3x16xf32> {pipeline.param = "w1", pipeline.tensor = "w1"}, %arg2: tensor<4x16xf32> {pipeline.tensor = "a5"}, %arg3: tensor<4x3xf32> {pipeline.tensor = "a6"}) -> (tensor<4x3xf32> {pipeline.tensor = "g9"}, tensor<4x16xf32> {pipeline.tensor = "g12"}) attributes {pipeline.kind = "backward_input", pipeline.recv = [], pipeline.send = ["g12"], pipeline.stage = 1 : i64} {
    %0 = graph.constant dense<1.000000e+00> : tensor<f32>
    %1 = graph.cross_entropy_grad %arg3, %arg0, %0 : tensor<4x3xf32>, tensor<4xi64>, tensor<f32>
    %2 = graph.matmul %1, %arg1 : tensor<4x3xf32>, tensor<3x16xf32> -> tensor<4x16xf32>
    %3 = graph.relu_grad %arg2, %2 : tensor<4x16xf32>
    return %1, %3 : tensor<4x3xf32>, tensor<4x16xf32>
  }
  func.func @stage1_backward_weight(%arg0: tensor<4x16xf32> {pipeline.tensor = "a5"}, %arg1: tensor<4x3xf32> {pipeline.tensor = "g9"}) -> (tensor<3x16xf32> {pipeline.param_grad = ["w1"], pipeline.tensor = "g11"}) attributes {pipeline.kind = "backward_weight", pipeline.stage = 1 : i64} {
    %0 = graph.matmul %arg1, %arg0 transpose_lhs : tensor<4x3xf32>, tensor<4x16xf32> -> tensor<3x16xf32>
    return %0 : tensor<3x16xf32>
  }
  pipeline.pipeline @train ranks = 2 chunks = 1 microbatches = 2 schedule = "gpipe" placement = [0, 1] {
    pipeline.program rank 0 {
      pipeline.send "a4" to 1 mb 0 stages 0 -> 1 : tensor<4x16xf32>
      pipeline.send "a4" to 1 mb 1 stages 0 -> 1 : tensor<4x16xf32>
      pipeline.recv "g12" from 1 mb 0 stages 1 -> 0 : tensor<4x16xf32>
      pipeline.recv "g12" from 1 mb 1 stages 1 -> 0 : tensor<4x16xf32>
      pipeline.optimizer_step
    }
    pipeline.program rank 1 {
      pipeline.recv "a4" from 0 mb 0 stages 0 -> 1 : tensor<4x16xf32>
      pipeline.forward @stage1_forward stage 1 mb 0
      pipeline.recv "a4" from 0 mb 1 stages 0 -> 1 : tensor<4x16xf32>
      pipeline.forward @stage1_forward stage 1 mb 1
      pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 0
      pipeline.send "g12" to 0 mb 0 stages 1 -> 0 : tensor<4x16xf32>
      pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 1
      pipeline.send "g12" to 0 mb 1 stages 1 -> 0 : tensor<4x16xf32>
      pipeline.optimizer_step
    }
  }
}
