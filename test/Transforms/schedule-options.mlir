// Bad options and schedules the problem cannot take are errors, not
// crashes.
// RUN: not pipecc-opt %s -pipecc-schedule="schedule=nope microbatches=2" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not pipecc-opt %s -pipecc-schedule="schedule=gpipe microbatches=0" 2>&1 | FileCheck %s --check-prefix=NO-MB
// RUN: not pipecc-opt %s -pipecc-schedule="schedule=interleaved-1f1b microbatches=1" 2>&1 | FileCheck %s --check-prefix=INTERLEAVED
// RUN: not pipecc-opt %s -pipecc-schedule="schedule=zb-h1 microbatches=4 split-backward=false" 2>&1 | FileCheck %s --check-prefix=ZB-FUSED
// RUN: not pipecc-opt %s -pipecc-schedule="schedule=1f1b split-backward=maybe" 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not pipecc-opt %s -pipecc-schedule -pipecc-schedule 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: echo "module {}" | not pipecc-opt -pipecc-schedule 2>&1 | FileCheck %s --check-prefix=EMPTY

// UNKNOWN: error: cannot schedule 2 virtual stages on 2 ranks (linear placement) on 2 micro-batches with 'nope': unknown schedule 'nope'; known schedules: gpipe 1f1b
// NO-MB: error: --microbatches must be a positive int, got 0
// A generator's refusal of the problem's shape reaches the user as is.
// INTERLEAVED: error: cannot schedule 2 virtual stages on 2 ranks (linear placement) on 1 micro-batches with 'interleaved-1f1b': interleaved-1f1b needs micro-batches >= ranks, got 1 < 2
// Asked for a fused backward, a schedule that needs it split names the option.
// ZB-FUSED: error: --split-backward false: 'zb-h1' needs the backward split into B and W (it runs W apart from its B)
// SPLIT: error: --split-backward must be true, false or auto, got 'maybe'
// TWICE: error: the module already has a symbol @train; schedule it only once
// EMPTY: error: the module has no pipeline.stage_table; run pipecc-split-stages first

func.func private @stage0_forward() -> (tensor<4xf32> {pipeline.tensor = "a"}) attributes {pipeline.kind = "forward", pipeline.recv = [], pipeline.send = ["a"], pipeline.stage = 0 : i64}
func.func private @stage0_backward_input() attributes {pipeline.kind = "backward_input", pipeline.recv = ["g"], pipeline.send = [], pipeline.stage = 0 : i64}
func.func private @stage1_forward(tensor<4xf32> {pipeline.tensor = "a"}) attributes {pipeline.kind = "forward", pipeline.recv = ["a"], pipeline.send = [], pipeline.stage = 1 : i64}
func.func private @stage1_backward_input() -> (tensor<4xf32> {pipeline.tensor = "g"}) attributes {pipeline.kind = "backward_input", pipeline.recv = [], pipeline.send = ["g"], pipeline.stage = 1 : i64}
