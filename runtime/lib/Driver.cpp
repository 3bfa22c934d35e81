//===- Driver.cpp - pipecc_rt_main: the training loop of a rank -----------===//
#include "pipecc/Runtime/BlasReport.h"
#include "pipecc/Runtime/Context.h"
#include "pipecc/Runtime/CorePlacement.h"
#include "pipecc/Runtime/DataFileName.h"
#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Files.h"
#include "pipecc/Runtime/NpyReader.h"
#include "pipecc/Runtime/Safetensors.h"
#include "pipecc/Runtime/StepTimers.h"
#include "pipecc/Runtime/SyntheticData.h"
#include "pipecc/Runtime/Trace.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

using namespace pipecc::rt;

namespace {

// Tags of the runtime's own messages (Control channel, so they cannot clash
// with the generated code's tags).
constexpr int kGatherSizeTag = 1;
constexpr int kGatherDataTag = 2;

std::string executableDirectory() {
  char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0)
    return ".";
  std::string text(path, static_cast<size_t>(length));
  size_t slash = text.rfind('/');
  return slash == std::string::npos ? "." : text.substr(0, slash);
}

double secondsNow() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// "[4, 1]": the index of element `flat` in an array of `shape`.
std::string elementIndex(const Shape &shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t dim = std::max<int64_t>(1, shape[d]);
    index[d] = flat % dim;
    flat /= dim;
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d)
    text += (d ? ", " : "") + std::to_string(index[d]);
  return text + "]";
}

/// Training on inf or nan only spreads it into every weight: refuse the
/// data file at once, naming the element.
void checkFinite(const NpyArray &array) {
  const auto *values = reinterpret_cast<const float *>(array.data());
  int64_t bad = findNonFinite(values, array.bytes() / 4);
  if (bad >= 0)
    fail(array.path(), ": element ", elementIndex(array.shape(), bad),
         " is ", nonFiniteName(values[bad]), "; data must be finite");
}

void loadWeights(pipecc_rt_context &ctx, int rank) {
  std::vector<int64_t> parameters;
  for (int64_t id = 0; id < ctx.program->num_buffers; ++id)
    if (ctx.program->buffers[id].role == PIPECC_RT_ROLE_PARAMETER)
      parameters.push_back(id);
  if (parameters.empty())
    return;
  std::string path =
      ctx.options.weightsPath.empty()
          ? executableDirectory() + "/rank" + std::to_string(rank) +
                ".safetensors"
          : substituteRank(ctx.options.weightsPath, rank);
  if (access(path.c_str(), R_OK) != 0)
    fail("weights file ", path, ": cannot read: ", std::strerror(errno),
         " (this rank has ", parameters.size(),
         " parameters; pass --weights FILE)");
  SafetensorsFile file = SafetensorsFile::load(path);
  for (int64_t id : parameters) {
    const pipecc_rt_buffer_desc &desc = ctx.program->buffers[id];
    const TensorInfo *tensor = file.find(desc.name);
    if (!tensor)
      fail("weights file ", path, ": missing tensor '", desc.name,
           "' (parameter of rank ", rank, ")");
    Shape expected(desc.shape, desc.shape + desc.num_dims);
    if (tensor->dtype != DType::F32)
      fail("weights file ", path, ": tensor '", desc.name, "' has dtype ",
           safetensorsName(tensor->dtype), ", expected F32");
    if (tensor->shape != expected)
      fail("weights file ", path, ": tensor '", desc.name, "' has shape ",
           shapeToString(tensor->shape), ", expected ",
           shapeToString(expected));
    const auto *values = reinterpret_cast<const float *>(file.data(*tensor));
    if (int64_t bad = findNonFinite(values, desc.bytes / 4); bad >= 0)
      fail("weights file ", path, ": tensor '", desc.name, "' element ",
           elementIndex(expected, bad), " is ", nonFiniteName(values[bad]));
    ctx.device->copyToDevice(ctx.buffer(id).memory, values, desc.bytes);
  }
}

bool isInference(const pipecc_rt_context &ctx) {
  return ctx.program->flags & PIPECC_RT_PROGRAM_INFERENCE;
}

/// Options that only one kind of program takes are errors on the other.
void checkOptionsFitProgram(const pipecc_rt_context &ctx) {
  const Options &options = ctx.options;
  if (!isInference(ctx)) {
    if (!options.outputsDir.empty())
      fail("--outputs: this is a training program; compile the model with "
           "pipecc --inference to run it forward only");
    return;
  }
  auto refuse = [](const char *option) {
    fail(option, ": this is an inference program (pipecc --inference); it "
                 "has no loss, gradients or updates");
  };
  if (!options.savePath.empty())
    refuse("--save");
  if (!options.dumpGradsPath.empty())
    refuse("--dump-grads");
  if (options.learningRate)
    refuse("--lr");
}

/// The folder --outputs names: made if missing (its parent must exist).
void prepareOutputsDir(const std::string &dir) {
  struct stat info;
  if (lstat(dir.c_str(), &info) == 0) {
    if (!S_ISDIR(info.st_mode))
      fail("--outputs ", dir, ": exists and is not a folder");
    return;
  }
  if (mkdir(dir.c_str(), 0777) != 0)
    fail("--outputs ", dir, ": cannot create the folder: ",
         std::strerror(errno));
}

/// Writes every graph output of the last step to DIR/<name>.npy, the
/// micro-batches' copies one after another along dimension 0.
void writeOutputs(pipecc_rt_context &ctx) {
  const std::string &dir = ctx.options.outputsDir;
  for (int64_t id = 0; id < ctx.program->num_buffers; ++id) {
    const pipecc_rt_buffer_desc &desc = ctx.program->buffers[id];
    if (desc.role != PIPECC_RT_ROLE_OUTPUT)
      continue;
    Shape shape(desc.shape, desc.shape + desc.num_dims);
    int64_t copies = ctx.program->microbatches;
    if (copies > 1) {
      if (shape.empty())
        fail("output '", desc.name, "' is a scalar; with ", copies,
             " micro-batches there is one per micro-batch");
      shape[0] *= copies;
    }
    // The copies lie `stride` apart in the arena: gather them.
    std::vector<char> values(static_cast<size_t>(desc.bytes * copies));
    for (int64_t mb = 0; mb < copies; ++mb)
      ctx.device->copyToHost(values.data() + mb * desc.bytes,
                             ctx.microbatchCopy(id, mb), desc.bytes);
    writeNpy(dir + "/" + dataFileName(desc.name),
             static_cast<DType>(desc.dtype), shape, values.data());
  }
}

void loadInputs(pipecc_rt_context &ctx) {
  const pipecc_rt_rank_program &program = *ctx.program;
  std::vector<int64_t> inputs;
  std::string names;
  for (int64_t id = 0; id < program.num_buffers; ++id)
    if (program.buffers[id].role == PIPECC_RT_ROLE_DATA_INPUT) {
      inputs.push_back(id);
      names += (names.empty() ? "" : ", ") +
               std::string(program.buffers[id].name);
    }
  if (inputs.empty())
    return;
  if (!ctx.options.synthetic && ctx.options.dataDir.empty())
    fail("this rank reads data inputs (", names,
         "): pass --data DIR or --synthetic");
  for (int64_t id : inputs) {
    const pipecc_rt_buffer_desc &desc = program.buffers[id];
    InputSource &source = ctx.inputs[id];
    if (ctx.options.synthetic) {
      source.array = makeSyntheticInput(desc, program.microbatches);
      continue;
    }
    source.array =
        NpyArray::load(ctx.options.dataDir + "/" + dataFileName(desc.name));
    const NpyArray &array = *source.array;
    if (desc.num_dims == 0) {
      // Only an inference program with one micro-batch has scalar inputs.
      if (!array.shape().empty())
        fail(array.path(), ": shape ", shapeToString(array.shape()),
             " does not fit input '", desc.name, "', a scalar");
      if (array.dtype() != static_cast<DType>(desc.dtype))
        fail(array.path(), ": dtype ", numpyTypeName(array.dtype()),
             " but input '", desc.name, "' is ",
             numpyTypeName(static_cast<DType>(desc.dtype)));
      source.batches = 1;
      continue;
    }
    Shape sample(desc.shape + 1, desc.shape + desc.num_dims);
    Shape expected = sample;
    expected.insert(expected.begin(), -1);
    auto expectedText = [&] {
      std::string text = shapeToString(expected);
      return "[S" + text.substr(3) + " with S a multiple of " +
             std::to_string(desc.shape[0] * program.microbatches);
    };
    if (array.dtype() != static_cast<DType>(desc.dtype))
      fail(array.path(), ": dtype ", numpyTypeName(array.dtype()),
           " but input '", desc.name, "' is ",
           numpyTypeName(static_cast<DType>(desc.dtype)));
    if (array.shape().size() != static_cast<size_t>(desc.num_dims) ||
        !std::equal(sample.begin(), sample.end(), array.shape().begin() + 1))
      fail(array.path(), ": shape ", shapeToString(array.shape()),
           " does not fit input '", desc.name, "', expected ",
           expectedText());
    int64_t stepSamples = desc.shape[0] * program.microbatches;
    if (stepSamples == 0 || array.shape()[0] % stepSamples != 0 ||
        array.shape()[0] == 0)
      fail(array.path(), ": ", array.shape()[0],
           " samples do not split into whole steps of ", program.microbatches,
           " micro-batches of ", desc.shape[0], " samples");
    source.batches = array.shape()[0] / stepSamples;
    // Training refuses non-finite data; inference computes with it (ONNX's
    // IsNaN, Max with nan, ...).
    if (array.dtype() == DType::F32 && !isInference(ctx))
      checkFinite(array);
  }
  // Inputs are paired sample by sample: they must hold the same number.
  for (int64_t id : inputs)
    if (ctx.inputs[id].batches != ctx.inputs[inputs.front()].batches)
      fail("data inputs '", program.buffers[inputs.front()].name, "' and '",
           program.buffers[id].name, "' hold different numbers of samples (",
           ctx.inputs[inputs.front()].batches, " and ",
           ctx.inputs[id].batches, " steps' worth)");
  // The arrays stay unchanged for the run: each micro-batch's copy to the
  // device may then run while the host goes on (copyImmutableToDevice).
  for (int64_t id : inputs)
    ctx.device->pinForCopies(ctx.inputs[id].array->data(),
                             ctx.inputs[id].array->bytes());
}

/// The same check across ranks (inputs read on different ranks are paired
/// too). Collective.
void checkInputsAgreeAcrossRanks(pipecc_rt_context &ctx) {
  int64_t local = 0;
  for (const auto &entry : ctx.inputs)
    if (entry.second.array)
      local = entry.second.batches;
  int64_t most = ctx.transport->allreduceMaxI64(local);
  // -INT64_MAX, not INT64_MIN: negating the result must not overflow.
  int64_t fewest =
      -ctx.transport->allreduceMaxI64(local ? -local : -INT64_MAX);
  if (local && (most != fewest))
    fail("the data inputs of different ranks hold different numbers of "
         "samples (between ", fewest, " and ", most, " steps' worth)");
}

/// Every rank's `local` bytes on rank 0, indexed by rank (the others get an
/// empty list): sizes first, over the control channel. Collective.
std::vector<std::vector<char>> gatherBytes(Transport &transport,
                                           std::vector<char> local) {
  if (transport.rank() != 0) {
    int64_t size = static_cast<int64_t>(local.size());
    transport.send(&size, sizeof size, 0, kGatherSizeTag, Channel::Control);
    transport.send(local.data(), size, 0, kGatherDataTag, Channel::Control);
    return {};
  }
  std::vector<std::vector<char>> all(static_cast<size_t>(transport.size()));
  all[0] = std::move(local);
  for (int peer = 1; peer < transport.size(); ++peer) {
    int64_t size = 0;
    transport.recv(&size, sizeof size, peer, kGatherSizeTag,
                   Channel::Control);
    all[peer].resize(static_cast<size_t>(size));
    transport.recv(all[peer].data(), size, peer, kGatherDataTag,
                   Channel::Control);
  }
  return all;
}

/// Rank 0 prints every rank's `text`, rank by rank. Collective.
void printInRankOrder(Transport &transport, const std::string &text) {
  for (const std::vector<char> &part :
       gatherBytes(transport, std::vector<char>(text.begin(), text.end())))
    std::fwrite(part.data(), 1, part.size(), stdout);
  std::fflush(stdout);
}

/// Rank 0 collects every rank's tensors (first occurrence of a name wins)
/// and writes them to `path`; the other ranks send theirs. Collective.
void gatherAndWrite(Transport &transport, const SafetensorsWriter &local,
                    const std::string &path, const Metadata &metadata) {
  std::vector<std::vector<char>> images =
      gatherBytes(transport, local.serialize());
  if (transport.rank() != 0)
    return;
  SafetensorsWriter merged = local;
  for (const auto &item : metadata)
    merged.setMetadata(item.first, item.second);
  for (int peer = 1; peer < transport.size(); ++peer) {
    SafetensorsFile file = SafetensorsFile::parse(
        "tensors gathered from rank " + std::to_string(peer),
        std::move(images[peer]));
    for (const TensorInfo &tensor : file.tensors())
      if (!merged.contains(tensor.name))
        merged.add(tensor.name, tensor.dtype, tensor.shape, file.data(tensor));
  }
  merged.writeFile(path);
}

Shape shapeOf(const pipecc_rt_buffer_desc &desc) {
  return Shape(desc.shape, desc.shape + desc.num_dims);
}

void dumpGradients(pipecc_rt_context &ctx, float loss) {
  SafetensorsWriter local;
  if (ctx.transport->rank() == 0)
    local.add("loss", DType::F32, {}, &loss);
  for (int64_t id = 0; id < ctx.program->num_buffers; ++id) {
    const pipecc_rt_buffer_desc &desc = ctx.program->buffers[id];
    if (desc.role != PIPECC_RT_ROLE_GRADIENT)
      continue;
    const pipecc_rt_buffer_desc &parameter =
        ctx.program->buffers[desc.parameter_id];
    std::vector<float> gradient(static_cast<size_t>(desc.bytes / 4));
    std::vector<char> staging;
    const float *accumulated = reinterpret_cast<const float *>(
        ctx.hostView(ctx.buffer(id).memory, desc.bytes, staging));
    for (size_t i = 0; i < gradient.size(); ++i)
      gradient[i] = accumulated[i] * ctx.gradientScale;
    std::string name = std::string("grad.") + parameter.name;
    if (!local.contains(name))
      local.add(name, DType::F32, shapeOf(parameter), gradient.data());
  }
  gatherAndWrite(*ctx.transport, local, ctx.options.dumpGradsPath,
                 {{"producer", "pipecc"}, {"content", "step 1 gradients"}});
}

/// The last step's update is followed by no loss that would show an
/// overflow: check the parameters themselves before saving them. Collective:
/// only the lowest rank holding one reports it, so the job ends with one
/// message.
void checkParametersFinite(pipecc_rt_context &ctx) {
  std::string problem;
  for (int64_t id = 0; id < ctx.program->num_buffers && problem.empty();
       ++id) {
    const pipecc_rt_buffer_desc &desc = ctx.program->buffers[id];
    if (desc.role != PIPECC_RT_ROLE_PARAMETER)
      continue;
    std::vector<char> staging;
    const auto *values = reinterpret_cast<const float *>(
        ctx.hostView(ctx.buffer(id).memory, desc.bytes, staging));
    if (int64_t bad = findNonFinite(values, desc.bytes / 4); bad >= 0)
      problem = "step " + std::to_string(ctx.options.steps) +
                ": the update made parameter '" + desc.name + "' " +
                nonFiniteName(values[bad]) + " at element " +
                elementIndex(shapeOf(desc), bad) +
                " (learning rate too large?); nothing saved";
  }
  Transport &transport = *ctx.transport;
  int64_t rank = transport.rank();
  int64_t most =
      transport.allreduceMaxI64(problem.empty() ? INT64_MIN : -rank);
  if (most == INT64_MIN)
    return;
  int64_t reporter = -most;
  if (reporter == rank)
    fail(problem);
  // The reporter's abort ends this rank too.
  transport.barrier(Channel::Control);
  fail("rank ", reporter, " reported a non-finite parameter");
}

/// `--save` with "{rank}" in the name: each rank writes its own parameters
/// (the copies of a tied weight included) to its own file.
bool savesPerRank(const Options &options) {
  return options.savePath.find("{rank}") != std::string::npos;
}

void saveParameters(pipecc_rt_context &ctx) {
  SafetensorsWriter local;
  for (int64_t id = 0; id < ctx.program->num_buffers; ++id) {
    const pipecc_rt_buffer_desc &desc = ctx.program->buffers[id];
    std::vector<char> staging;
    if (desc.role == PIPECC_RT_ROLE_PARAMETER)
      local.add(desc.name, DType::F32, shapeOf(desc),
                ctx.hostView(ctx.buffer(id).memory, desc.bytes, staging));
  }
  Metadata metadata{{"producer", "pipecc"},
                    {"steps", std::to_string(ctx.options.steps)}};
  if (savesPerRank(ctx.options)) {
    for (const auto &item : metadata)
      local.setMetadata(item.first, item.second);
    local.writeFile(
        substituteRank(ctx.options.savePath, ctx.transport->rank()));
    return;
  }
  gatherAndWrite(*ctx.transport, local, ctx.options.savePath, metadata);
}

/// Rank 0 prints every rank's timers, rank by rank: the generated code's
/// labelled timers, then the per-step times (StepTimers.h).
void reportTimers(pipecc_rt_context &ctx) {
  Transport &transport = *ctx.transport;
  std::string text;
  for (const auto &[label, timer] : ctx.timers) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "timer rank %d %s: total %.3f ms calls %lld mean %.3f ms\n",
                  transport.rank(), label.c_str(), timer.total * 1e3,
                  static_cast<long long>(timer.calls),
                  timer.calls ? timer.total * 1e3 / timer.calls : 0.0);
    text += line;
  }
  text += stepTimerLines(transport.rank(), ctx.finishedSteps);
  printInRankOrder(transport, text);
}

/// Rank 0 gathers every rank's record of the traced step and writes the
/// timeline. Collective.
void writeTrace(pipecc_rt_context &ctx, const std::string &schedule) {
  Transport &transport = *ctx.transport;
  std::string local = ctx.trace->serialize(transport.rank());
  std::vector<std::vector<char>> parts =
      gatherBytes(transport, std::vector<char>(local.begin(), local.end()));
  if (transport.rank() != 0)
    return;
  std::vector<std::string> records;
  for (const std::vector<char> &part : parts)
    records.emplace_back(part.begin(), part.end());
  TraceRunInfo info;
  info.schedule = schedule;
  info.ranks = transport.size();
  info.microbatches = ctx.program->microbatches;
  info.step = ctx.trace->step() + 1;
  std::string document = buildTraceDocument(info, records);
  writeFileAtomically(ctx.options.tracePath, document.data(), document.size());
}

/// Rank 0 prints, rank by rank, the arena beside the measured peak.
void reportMemory(pipecc_rt_context &ctx) {
  Transport &transport = *ctx.transport;
  char line[512];
  // The stage workspace is a static buffer of the executable, beside the
  // arena (both from the compiler's plan); the packed weights are the
  // BLAS's copies (pipecc_rt_sgemm_weight), one per weight and reading.
  std::snprintf(line, sizeof line,
                "memory rank %d: arena %lld bytes (%s) peak %lld bytes (%s) "
                "stage workspace %lld bytes packed weights %lld bytes\n",
                transport.rank(), static_cast<long long>(ctx.layout.bytes),
                ctx.layout.planned ? "planned" : "runtime layout",
                static_cast<long long>(ctx.device->peakMemoryBytes()),
                ctx.device->isHost() ? "host peak resident set"
                                     : ctx.device->name(),
                static_cast<long long>(ctx.program->stage_workspace_bytes),
                static_cast<long long>(packedWeightBytes()));
  printInRankOrder(transport, line);
}

int64_t samplesPerStep(pipecc_rt_context &ctx) {
  int64_t microbatchSize = ctx.program->microbatch_size;
  if (microbatchSize <= 0) {
    int64_t local = 0;
    for (const auto &entry : ctx.inputs)
      if (ctx.program->buffers[entry.first].num_dims > 0)
        local = std::max(local, ctx.program->buffers[entry.first].shape[0]);
    microbatchSize = ctx.transport->allreduceMaxI64(local);
  }
  return microbatchSize * ctx.program->microbatches;
}

void runStep(pipecc_rt_context &ctx, int64_t samples) {
  // Whatever wrote parameters since the last step (loading, an embedding
  // host): packed copies from before are stale. Where the last writer was
  // the optimizer, it already marked them and repacked what it could.
  if (!ctx.optimizerRepackedWeights)
    notifyWeightsChanged();
  ctx.optimizerRepackedWeights = false;
  ctx.lossSum = 0;
  ctx.lossCount = 0;
  bool traced = ctx.trace && ctx.trace->step() == ctx.stepIndex;
  if (traced) {
    // One zero for every rank's clock: each leaves the barrier together.
    ctx.transport->barrier(Channel::Control);
    ctx.trace->start(secondsNow());
    ctx.recording = ctx.trace.get();
  }
  double start = secondsNow();
  // --timers: this step's times, the BLAS's counters from here.
  std::optional<SgemmCounters> sgemmBefore;
  if (ctx.options.timers) {
    ctx.currentStep = StepTimes{};
    ctx.stepTimes = &ctx.currentStep;
    sgemmBefore = readSgemmCounters();
  }
  // The accumulators start the step at zero: the optimizer's pass of the
  // step before cleared them, else (the first step, a program that owns
  // its optimizer) they are filled here, inside the step's time.
  if (!ctx.gradientsClear)
    for (BufferStorage &storage : ctx.buffers)
      if (storage.desc->role == PIPECC_RT_ROLE_GRADIENT)
        ctx.device->fill(storage.memory, 0, storage.desc->bytes);
  ctx.gradientsClear = false;

  ctx.program->step(&ctx);
  // A transfer left running would race with the next step's use of its
  // buffer.
  if (ctx.stepTimes) {
    double waitStart = secondsNow();
    ctx.transport->waitAll();
    ctx.stepTimes->wait += secondsNow() - waitStart;
  } else {
    ctx.transport->waitAll();
  }
  double lossStart = ctx.stepTimes ? secondsNow() : 0;

  double loss[2] = {ctx.lossSum, ctx.lossCount};
  bool countedMean = ctx.program->flags & PIPECC_RT_PROGRAM_COUNTED_MEAN_LOSS;
  float meanLoss;
  if (countedMean) {
    // Each micro-batch contributed its sum: every rank divides its
    // gradients by the step's label count (one rank reports the sums and
    // counts, so the all-reduce adds zeros to them and is exact).
    ctx.transport->allreduceSumF64(loss, 2);
    ctx.gradientScale = loss[1] > 0 ? static_cast<float>(1.0 / loss[1]) : 0.0f;
    meanLoss = loss[1] > 0 ? static_cast<float>(loss[0] / loss[1]) : 0.0f;
  } else {
    ctx.transport->reduceSumF64(loss, 2, /*root=*/0);
    meanLoss = loss[1] > 0 ? static_cast<float>(loss[0] / loss[1])
                           : std::numeric_limits<float>::quiet_NaN();
  }
  if (ctx.stepTimes)
    ctx.stepTimes->optimizer += secondsNow() - lossStart;
  if (ctx.stepIndex == 0 && !ctx.options.dumpGradsPath.empty())
    dumpGradients(ctx, meanLoss);
  if (!(ctx.program->flags & (PIPECC_RT_PROGRAM_OWNS_OPTIMIZER |
                              PIPECC_RT_PROGRAM_INFERENCE)))
    pipecc_rt_optimizer_step(&ctx);
  if (traced) {
    ctx.trace->finish(secondsNow());
    ctx.recording = nullptr;
  }
  double seconds = secondsNow() - start;
  if (ctx.stepTimes) {
    StepTimes &times = *ctx.stepTimes;
    times.step = seconds;
    if (std::optional<SgemmCounters> after = readSgemmCounters();
        after && sgemmBefore) {
      times.sgemmCalls = after->calls - sgemmBefore->calls;
      times.sgemmFlops = after->flops - sgemmBefore->flops;
      times.sgemmSeconds = after->seconds - sgemmBefore->seconds;
      if (ctx.sgemmCpuTime)
        times.sgemmCpuSeconds = after->cpuSeconds - sgemmBefore->cpuSeconds;
    }
    ctx.finishedSteps.push_back(times);
    ctx.stepTimes = nullptr;
  }
  if (isInference(ctx)) {
    if (ctx.transport->rank() == 0 && !ctx.options.quiet) {
      std::printf("step %lld samples/s %.1f\n",
                  static_cast<long long>(ctx.stepIndex + 1),
                  seconds > 0 ? samples / seconds : 0.0);
      std::fflush(stdout);
    }
    return;
  }

  if (ctx.transport->rank() == 0 && !ctx.options.quiet) {
    std::printf("step %lld loss %.6f samples/s %.1f\n",
                static_cast<long long>(ctx.stepIndex + 1), meanLoss,
                seconds > 0 ? samples / seconds : 0.0);
    std::fflush(stdout);
  }
}

} // namespace

/// One arena for every buffer, laid out by the compiler's plan or here,
/// allocated on the device and zero-filled.
void pipecc::rt::allocateArena(pipecc_rt_context &ctx) {
  const pipecc_rt_rank_program &program = *ctx.program;
  ctx.layout = layOutArena(program);
  ctx.arena = ctx.device->allocate(std::max<int64_t>(ctx.layout.bytes, 1));
  ctx.device->fill(ctx.arena, 0, ctx.layout.bytes);
  ctx.buffers.resize(static_cast<size_t>(program.num_buffers));
  for (int64_t id = 0; id < program.num_buffers; ++id) {
    BufferStorage &storage = ctx.buffers[static_cast<size_t>(id)];
    const BufferPlacement &placement =
        ctx.layout.buffers[static_cast<size_t>(id)];
    storage.desc = &program.buffers[id];
    storage.memory = static_cast<char *>(ctx.arena) + placement.offset;
    storage.copies = placement.copies;
    storage.stride = placement.stride;
  }
}

/// Ranks that out/launch started on this node, more than the CPUs they may
/// use, each on one CPU (CorePlacement.h). Under mpirun or srun placement
/// is the launcher's (--bind-to, --cpu-bind); with --threads above 1 a
/// rank's BLAS threads need more than one CPU.
static void placeRankOnCpu(TransportKind kind, const Transport &transport,
                           const Options &options) {
  if (!options.pinRanks || options.threads != 1 ||
      kind != TransportKind::Socket)
    return;
  std::vector<int> cpus = usableCpus();
  CorePlacement placement;
  placement.ranks = transport.localSize();
  placement.cpus = static_cast<int>(cpus.size());
  int slot = cpuSlotOfRank(transport.localRank(), placement.ranks,
                           placement.cpus);
  if (slot >= 0) {
    if (pinToCpu(cpus[static_cast<size_t>(slot)], placement.error))
      placement.cpu = cpus[static_cast<size_t>(slot)];
  }
  recordCorePlacement(placement);
}

/// --threads N where this node's ranks times N pass the CPUs they may use:
/// the threads then share cores and wait for each other (measured: the
/// benchmark MLP at P = 2 on 2 cores, 37 ms a step at one thread per rank,
/// 43 at two). Said once per node; not an error, a launcher may know
/// better.
static void warnOversubscribedThreads(const Transport &transport,
                                      const Options &options) {
  if (options.threads <= 1 || transport.localRank() != 0)
    return;
  int64_t cpus = static_cast<int64_t>(usableCpus().size());
  int64_t threads = int64_t(transport.localSize()) * options.threads;
  if (cpus > 0 && threads > cpus)
    std::fprintf(stderr,
                 "pipecc-runtime: warning: %d rank%s on this node x --threads "
                 "%d = %lld threads for %lld CPUs: threads will share cores "
                 "(give each rank at most %lld)\n",
                 transport.localSize(), transport.localSize() == 1 ? "" : "s",
                 options.threads, static_cast<long long>(threads),
                 static_cast<long long>(cpus),
                 static_cast<long long>(std::max<int64_t>(
                     1, cpus / transport.localSize())));
}

int pipecc::rt::runRank(int argc, char **argv,
                        const pipecc_rt_rank_program *program,
                        const RankSetup &setup) {
  // The transport comes first (its rank labels every later error); a bad
  // --transport value is reported before any rank is known.
  TransportKind kind = chooseTransport(findTransportOption(argc, argv));
  std::unique_ptr<Transport> transportOwner =
      setup.createTransport(kind, &argc, &argv);
  Transport &transport = *transportOwner;
  Options options = parseOptions(argc, argv);
  if (options.help) {
    if (transport.rank() == 0)
      std::fputs(usageText(argc > 0 ? argv[0] : nullptr).c_str(), stdout);
    transport.finalize();
    return 0;
  }
  validateProgram(program, transport.rank(), transport.size(), setup.target);
  placeRankOnCpu(kind, transport, options);
  warnOversubscribedThreads(transport, options);
  if (setup.configureMatmuls)
    setup.configureMatmuls(transport, options);
  std::unique_ptr<Device> device = setup.createDevice(transport);

  pipecc_rt_context ctx;
  ctx.program = program;
  ctx.transport = &transport;
  ctx.device = device.get();
  ctx.options = options;
  ctx.learningRate = options.learningRate.value_or(program->default_lr);
  ctx.gradientScale = program->gradient_scale > 0
                          ? program->gradient_scale
                          : 1.0f / static_cast<float>(program->microbatches);
  checkOptionsFitProgram(ctx);
  // Pinned ranks share their CPU (CorePlacement.h): a product's wall time
  // then holds other ranks' time slices, so --timers adds its CPU time.
  if (options.timers && corePlacement().cpu >= 0)
    ctx.sgemmCpuTime = countSgemmCpuTime();
  allocateArena(ctx);
  // The stage functions' temporaries, a global of the executable beside
  // the arena, hold as much again (host memory on every target with one).
  adviseHugePages(program->stage_workspace, program->stage_workspace_bytes);
  loadWeights(ctx, transport.rank());
  // Output files are written by rank 0 (or each rank, with "{rank}") at the
  // end; refuse bad paths now, not after training.
  if (savesPerRank(options))
    checkOutputFile(substituteRank(options.savePath, transport.rank()));
  if (transport.rank() == 0) {
    if (!options.savePath.empty() && !savesPerRank(options))
      checkOutputFile(options.savePath);
    if (!options.dumpGradsPath.empty())
      checkOutputFile(options.dumpGradsPath);
    if (!options.outputsDir.empty())
      prepareOutputsDir(options.outputsDir);
  }
  std::string traceSchedule;
  if (!options.tracePath.empty()) {
    ctx.trace = std::make_unique<StepTrace>(
        (options.traceStep ? options.traceStep : options.steps) - 1);
    // The schedule's name is the compiler's, in the manifest beside the
    // ranks; read it now rather than fail after training.
    if (transport.rank() == 0) {
      try {
        checkOutputFile(options.tracePath);
      } catch (const RuntimeError &error) {
        fail("--trace ", error.what());
      }
      traceSchedule =
          scheduleFromManifest(executableDirectory() + "/pipeline.json");
    }
  }
  loadInputs(ctx);
  checkInputsAgreeAcrossRanks(ctx);
  int64_t samples = samplesPerStep(ctx);

  // Start timing together: set-up (file loading) differs between ranks.
  transport.barrier(Channel::Control);
  // --gemms counts the steps after the first (its packing, first touches
  // and page faults are once per run), or the one step.
  int64_t firstRecordedStep = std::min<int64_t>(1, options.steps - 1);
  for (ctx.stepIndex = 0; ctx.stepIndex < options.steps; ++ctx.stepIndex) {
    if (options.gemms && ctx.stepIndex == firstRecordedStep)
      recordGemmProducts(true);
    runStep(ctx, samples);
  }
  ctx.stepIndex = options.steps > 0 ? options.steps - 1 : 0;

  if (!options.savePath.empty()) {
    checkParametersFinite(ctx);
    saveParameters(ctx);
  }
  if (!options.outputsDir.empty() && transport.rank() == 0)
    writeOutputs(ctx);
  if (ctx.trace)
    writeTrace(ctx, traceSchedule);
  if (options.timers)
    reportTimers(ctx);
  if (options.memory)
    reportMemory(ctx);
  if (options.blas)
    printInRankOrder(transport, blasReportLine(transport.rank()));
  if (options.gemms)
    printInRankOrder(transport, gemmProductLines(transport.rank()));
  transport.barrier(Channel::Control);
  transport.finalize();
  return 0;
}
