// Rank modules the host program pass refuses, each with one error.
// RUN: pipecc-opt %s --pipecc-lower-rank-program -split-input-file -verify-diagnostics

// expected-error @+1 {{a rank module needs 'pipeline.rank', the rank whose program it holds}}
module attributes {pipeline.parameters = []} {
}

// -----

// expected-error @+1 {{a rank module holds one pipeline.pipeline, found 0}}
module attributes {pipeline.rank = 0 : i64, pipeline.parameters = []} {
}

// -----

module attributes {pipeline.rank = 3 : i64, pipeline.parameters = []} {
  // expected-error @+1 {{'pipeline.pipeline' op has no program for rank 3}}
  pipeline.pipeline @train ranks = 1 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0] {
    pipeline.program rank 0 {
    }
  }
}

// -----

module attributes {pipeline.rank = 0 : i64, pipeline.parameters = []} {
  // expected-error @+1 {{stage function 'forward' is not lowered to the LLVM dialect; run the target's stage lowering first}}
  func.func @forward(%arg0: tensor<4xf32>) attributes {pipeline.stage_abi = {kind = "forward", args = [{pipeline.input = "x", type = tensor<4xf32>}], results = []}} {
    return
  }
  pipeline.pipeline @train ranks = 1 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0] {
    pipeline.program rank 0 {
      pipeline.forward @forward stage 0 mb 0
    }
  }
}

// -----

// The function takes one pointer, its ABI says an input and a result.
module attributes {pipeline.rank = 0 : i64, pipeline.parameters = []} {
  // expected-error @+1 {{expected 2 pointer arguments (bare-pointer memrefs: inputs, then outputs), found 1}}
  llvm.func @forward(%arg0: !llvm.ptr) attributes {pipeline.stage_abi = {kind = "forward", args = [{pipeline.input = "x", type = tensor<4xf32>}], results = [{pipeline.tensor = "y", type = tensor<4xf32>}]}} {
    llvm.return
  }
  pipeline.pipeline @train ranks = 1 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0] {
    pipeline.program rank 0 {
      pipeline.forward @forward stage 0 mb 0
    }
  }
}

// -----

module attributes {pipeline.rank = 0 : i64, pipeline.parameters = []} {
  // expected-error @+1 {{the runtime has no buffers of element type 'f16'}}
  llvm.func @forward(%arg0: !llvm.ptr) attributes {pipeline.stage_abi = {kind = "forward", args = [{pipeline.input = "x", type = tensor<4xf16>}], results = []}} {
    llvm.return
  }
  pipeline.pipeline @train ranks = 1 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0] {
    pipeline.program rank 0 {
      pipeline.forward @forward stage 0 mb 0
    }
  }
}

// -----

module attributes {pipeline.rank = 0 : i64, pipeline.parameters = []} {
  // expected-error @+1 {{malformed 'pipeline.stage_abi': expected {kind = string, args = [...], results = [...]} with a ranked tensor type per binding}}
  llvm.func @forward(%arg0: !llvm.ptr) attributes {pipeline.stage_abi = {kind = "forward", args = [{pipeline.input = "x"}], results = []}} {
    llvm.return
  }
  pipeline.pipeline @train ranks = 1 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0] {
    pipeline.program rank 0 {
      pipeline.forward @forward stage 0 mb 0
    }
  }
}

// -----

module attributes {pipeline.rank = 0 : i64, pipeline.parameters = []} {
  llvm.func @forward(%arg0: !llvm.ptr) attributes {pipeline.stage_abi = {kind = "forward", args = [{pipeline.input = "x", type = tensor<4xf32>}], results = []}} {
    llvm.return
  }
  // Not a stage function of the rank: it has no stage ABI.
  llvm.func @helper() {
    llvm.return
  }
  pipeline.pipeline @train ranks = 1 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0] {
    pipeline.program rank 0 {
      // expected-error @+1 {{rank has no stage function @helper}}
      pipeline.backward_input @helper stage 0 mb 0
    }
  }
}

// -----

// A static memory plan must place this rank's buffer table, entry by entry.
// expected-error @+1 {{'pipeline.memory_plan' entry 0 is 'z', buffer 0 is 'x'}}
module attributes {pipeline.rank = 0 : i64, pipeline.parameters = [], pipeline.memory_plan = {arena_bytes = 128 : i64, buffers = [{name = "z", slots = 1 : i64, offset = 0 : i64}, {name = "y", slots = 1 : i64, offset = 64 : i64}]}} {
  llvm.func @forward(%arg0: !llvm.ptr, %arg1: !llvm.ptr) attributes {pipeline.stage_abi = {kind = "forward", args = [{pipeline.input = "x", type = tensor<4xf32>}], results = [{pipeline.tensor = "y", type = tensor<4xf32>}]}} {
    llvm.return
  }
  pipeline.pipeline @train ranks = 1 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0] {
    pipeline.program rank 0 {
      pipeline.forward @forward stage 0 mb 0
    }
  }
}

// -----

// expected-error @+1 {{'pipeline.memory_plan' places 1 buffers, the rank's buffer table has 2}}
module attributes {pipeline.rank = 0 : i64, pipeline.parameters = [], pipeline.memory_plan = {arena_bytes = 128 : i64, buffers = [{name = "x", slots = 1 : i64, offset = 0 : i64}]}} {
  llvm.func @forward(%arg0: !llvm.ptr, %arg1: !llvm.ptr) attributes {pipeline.stage_abi = {kind = "forward", args = [{pipeline.input = "x", type = tensor<4xf32>}], results = [{pipeline.tensor = "y", type = tensor<4xf32>}]}} {
    llvm.return
  }
  pipeline.pipeline @train ranks = 1 chunks = 1 microbatches = 1 schedule = "gpipe" placement = [0] {
    pipeline.program rank 0 {
      pipeline.forward @forward stage 0 mb 0
    }
  }
}
