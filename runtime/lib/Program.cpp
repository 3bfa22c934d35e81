//===- Program.cpp - Validating the compiler's rank program ---------------===//
//
// The program is data emitted by another tool; checking it up front turns a
// layout or codegen mistake into one clear message instead of a corrupted
// run.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/Arena.h"
#include "pipecc/Runtime/Context.h"
#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Numbers.h"

#include <cmath>
#include <cstring>
#include <set>

namespace pipecc::rt {

namespace {
const char *roleName(int32_t role) {
  switch (role) {
  case PIPECC_RT_ROLE_PARAMETER: return "parameter";
  case PIPECC_RT_ROLE_GRADIENT: return "gradient";
  case PIPECC_RT_ROLE_DATA_INPUT: return "data input";
  case PIPECC_RT_ROLE_ACTIVATION: return "activation";
  case PIPECC_RT_ROLE_SCRATCH: return "scratch";
  case PIPECC_RT_ROLE_OUTPUT: return "output";
  }
  return "unknown role";
}

std::string label(const pipecc_rt_buffer_desc &desc, int64_t id) {
  std::string text = "buffer " + std::to_string(id);
  if (desc.name)
    text += std::string(" ('") + desc.name + "')";
  return text;
}
} // namespace

void validateProgram(const pipecc_rt_rank_program *program, int rank,
                     int size, const char *target) {
  if (!program)
    fail("no rank program (NULL)");
  if (program->abi_version != PIPECC_RT_ABI_VERSION)
    fail("rank program built for runtime ABI version ",
         program->abi_version, ", this runtime has version ",
         PIPECC_RT_ABI_VERSION, " (recompile with a matching pipecc)");
  const char *programTarget = program->target ? program->target : "cpu";
  if (std::strcmp(programTarget, target) != 0)
    fail("rank program compiled for the '", programTarget,
         "' target, but this runtime is the '", target,
         "' one (link it with the matching runtime)");
  if (program->num_ranks != size)
    fail("this executable belongs to a ", program->num_ranks,
         "-rank pipeline but the job has ", size,
         " processes (use the generated launch script)");
  if (program->rank != rank)
    fail("this executable is rank ", program->rank,
         "'s program but the job gave it rank ", rank,
         " (rank executables must be listed in order rank0, rank1, ...)");
  if (program->microbatches < 1)
    fail("rank program has ", program->microbatches, " micro-batches");
  if (program->num_buffers < 0 ||
      (program->num_buffers > 0 && !program->buffers))
    fail("rank program has a bad buffer table");
  if (!program->step)
    fail("rank program has no step function");
  if (program->gradient_scale < 0 || !std::isfinite(program->gradient_scale))
    fail("rank program has a bad gradient scale ", program->gradient_scale);
  if (!isValidLearningRate(program->default_lr))
    fail("rank program has the learning rate ", program->default_lr,
         ", which is not a positive normal float32");

  std::set<std::string> parameterNames, outputNames;
  bool inference = program->flags & PIPECC_RT_PROGRAM_INFERENCE;
  for (int64_t id = 0; id < program->num_buffers; ++id) {
    const pipecc_rt_buffer_desc &desc = program->buffers[id];
    std::string where = label(desc, id);
    if (desc.role < PIPECC_RT_ROLE_PARAMETER ||
        desc.role > PIPECC_RT_ROLE_OUTPUT)
      fail(where, ": unknown role ", desc.role);
    if ((desc.dtype < PIPECC_RT_F32 || desc.dtype > PIPECC_RT_I32) &&
        desc.dtype != PIPECC_RT_BF16 && desc.dtype != PIPECC_RT_BOOL)
      fail(where, ": unknown dtype ", desc.dtype);
    if (desc.bytes < 0 || desc.num_dims < 0 ||
        (desc.num_dims > 0 && !desc.shape))
      fail(where, ": bad size or shape");
    bool needsShape = desc.role == PIPECC_RT_ROLE_PARAMETER ||
                      desc.role == PIPECC_RT_ROLE_GRADIENT ||
                      desc.role == PIPECC_RT_ROLE_DATA_INPUT ||
                      desc.role == PIPECC_RT_ROLE_OUTPUT;
    if (desc.shape || needsShape) {
      Shape shape(desc.shape, desc.shape + desc.num_dims);
      int64_t expected =
          elementCount(shape) * elementSize(static_cast<DType>(desc.dtype));
      if (expected != desc.bytes)
        fail(where, ": ", desc.bytes, " bytes but shape ",
             shapeToString(shape), " needs ", expected);
    }
    bool isWeight = desc.role == PIPECC_RT_ROLE_PARAMETER ||
                    desc.role == PIPECC_RT_ROLE_GRADIENT;
    if (isWeight && desc.dtype != PIPECC_RT_F32)
      fail(where, ": ", roleName(desc.role), "s must be F32");
    if (isWeight && desc.per_microbatch)
      fail(where, ": ", roleName(desc.role), "s cannot be per-micro-batch");
    switch (desc.role) {
    case PIPECC_RT_ROLE_PARAMETER:
      if (!desc.name || !*desc.name)
        fail(where, ": parameter without a name");
      if (!parameterNames.insert(desc.name).second)
        fail(where, ": two parameters named '", desc.name, "'");
      break;
    case PIPECC_RT_ROLE_GRADIENT: {
      int64_t parameter = desc.parameter_id;
      if (parameter < 0 || parameter >= program->num_buffers ||
          program->buffers[parameter].role != PIPECC_RT_ROLE_PARAMETER)
        fail(where, ": parameter_id ", parameter,
             " does not name a parameter buffer");
      if (program->buffers[parameter].bytes != desc.bytes)
        fail(where, ": size differs from its parameter ",
             label(program->buffers[parameter], parameter));
      break;
    }
    case PIPECC_RT_ROLE_DATA_INPUT:
      if (!desc.name || !*desc.name)
        fail(where, ": data input without a name");
      // An inference program reads a scalar input whole.
      if (desc.num_dims < 1 && !(inference && program->microbatches == 1))
        fail(where, ": data input without a micro-batch dimension");
      break;
    case PIPECC_RT_ROLE_OUTPUT:
      if (!inference)
        fail(where, ": only an inference program has outputs");
      if (!desc.name || !*desc.name)
        fail(where, ": output without a name");
      if (!desc.per_microbatch)
        fail(where, ": outputs are per-micro-batch");
      if (!outputNames.insert(desc.name).second)
        fail(where, ": two outputs named '", desc.name, "'");
      if (desc.slots != 0 && desc.slots != program->microbatches)
        fail(where, ": an output keeps every micro-batch's copy, but has ",
             desc.slots, " slots");
      break;
    default:
      break;
    }
  }
  layOutArena(*program); // throws on a bad placement
}

} // namespace pipecc::rt
