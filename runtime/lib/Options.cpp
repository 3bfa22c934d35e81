//===- Options.cpp --------------------------------------------------------===//
#include "pipecc/Runtime/Options.h"
#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Numbers.h"

#include <limits>

namespace pipecc::rt {

namespace {
/// OpenBLAS's own limit (MAX_THREADS of the builds we link is 64 or more;
/// a larger request would be cut silently).
constexpr int64_t kMaxBlasThreads = 64;

int64_t parseCount(const std::string &option, const std::string &text) {
  std::string error;
  std::optional<int64_t> value = parseIntegerOption(
      option, text, 0, std::numeric_limits<int64_t>::max(), error);
  if (!value)
    fail(error);
  return *value;
}

float parseLearningRate(const std::string &option, const std::string &text) {
  std::string error;
  std::optional<float> value = parseLearningRateOption(option, text, error);
  if (!value)
    fail(error);
  return *value;
}
} // namespace

Options parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string name = arg;
    std::optional<std::string> inlineValue;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 &&
                                   eq != std::string::npos) {
      name = arg.substr(0, eq);
      inlineValue = arg.substr(eq + 1);
    }
    auto value = [&]() -> std::string {
      if (inlineValue)
        return *inlineValue;
      if (i + 1 >= argc)
        fail("option ", name, " needs a value");
      return argv[++i];
    };
    auto flag = [&]() {
      if (inlineValue)
        fail("option ", name, " takes no value");
      return true;
    };
    if (name == "--steps")
      options.steps = parseCount(name, value());
    else if (name == "--data")
      options.dataDir = value();
    else if (name == "--synthetic")
      options.synthetic = flag();
    else if (name == "--weights")
      options.weightsPath = value();
    else if (name == "--lr")
      options.learningRate = parseLearningRate(name, value());
    else if (name == "--dump-grads")
      options.dumpGradsPath = value();
    else if (name == "--save")
      options.savePath = value();
    else if (name == "--outputs")
      options.outputsDir = value();
    else if (name == "--quiet")
      options.quiet = flag();
    else if (name == "--timers")
      options.timers = flag();
    else if (name == "--memory")
      options.memory = flag();
    else if (name == "--trace")
      options.tracePath = value();
    else if (name == "--trace-step") {
      options.traceStep = parseCount(name, value());
      if (options.traceStep < 1)
        fail("--trace-step: steps count from 1, got ", options.traceStep);
    }
    else if (name == "--threads") {
      std::string error;
      std::optional<int64_t> threads =
          parseIntegerOption(name, value(), 1, kMaxBlasThreads, error);
      if (!threads)
        fail(error);
      options.threads = static_cast<int>(*threads);
    }
    else if (name == "--blas")
      options.blas = flag();
    else if (name == "--gemms")
      options.gemms = flag();
    else if (name == "--no-packed-weights")
      options.packedWeights = !flag();
    else if (name == "--pin-ranks") {
      std::string mode = value();
      if (mode != "auto" && mode != "off")
        fail("--pin-ranks: unknown mode '", mode,
             "' (expected auto or off)");
      options.pinRanks = mode == "auto";
    }
    else if (name == "--transport") {
      options.transport = value();
      if (options.transport != "mpi" && options.transport != "socket")
        fail("--transport: unknown transport '", options.transport,
             "' (expected mpi or socket)");
    }
    else if (name == "--help" || name == "-h")
      options.help = flag();
    else
      fail("unknown option '", arg, "' (see --help)");
  }
  if (options.synthetic && !options.dataDir.empty())
    fail("--data and --synthetic exclude each other");
  if (!options.dumpGradsPath.empty() && options.steps < 1)
    fail("--dump-grads needs at least one step");
  if (options.traceStep && options.tracePath.empty())
    fail("--trace-step needs --trace FILE");
  if (!options.tracePath.empty() && options.steps < 1)
    fail("--trace needs at least one step");
  if (options.traceStep > options.steps)
    fail("--trace-step ", options.traceStep, ": the run has only ",
         options.steps, " step", options.steps == 1 ? "" : "s");
  return options;
}

std::string usageText(const char *programName) {
  return std::string("usage: ") + (programName ? programName : "rank") +
         " [options]   (normally started through out/launch)\n"
         "  --steps N          training steps (default 1)\n"
         "  --data DIR         DIR/<input name>.npy for each data input; bytes of\n"
         "                     the name outside [A-Za-z0-9_.-], and a leading\n"
         "                     '.', are written %XX\n"
         "  --synthetic        deterministic pseudo-random input data\n"
         "  --weights FILE     initial parameters (safetensors, by name; "
         "{rank} -> rank number;\n"
         "                     default: rank<k>.safetensors next to the "
         "executable)\n"
         "  --lr X             SGD learning rate\n"
         "  --dump-grads FILE  write loss and gradients of step 1 "
         "(safetensors)\n"
         "  --save FILE        write the trained parameters (safetensors);\n"
         "                     {rank} in FILE: each rank writes its own\n"
         "  --outputs DIR      inference programs: write each graph output "
         "to\n"
         "                     DIR/<output name>.npy (named like --data "
         "files)\n"
         "  --timers           print per-rank times of each step (compute, "
         "messages,\n"
         "                     optimizer, other; sgemm) at exit\n"
         "  --memory           print per-rank arena size and measured peak "
         "memory at exit\n"
         "  --trace FILE       write the measured timeline of the last step "
         "(Chrome/Perfetto\n"
         "                     JSON, one thread per rank)\n"
         "  --trace-step N     trace step N (1-based) instead of the last\n"
         "  --threads N        threads of each matmul in a rank "
         "(default 1, 1..64)\n"
         "  --blas             print per-rank BLAS, kernels, threads and "
         "sgemm GFLOP/s at exit\n"
         "  --gemms            print per-rank sgemm time and GFLOP/s of each "
         "product\n"
         "                     (shape, transposes, beta, kernel path) at "
         "exit, steps after\n"
         "                     the first\n"
         "  --no-packed-weights\n"
         "                     let the BLAS pack a weight at every call "
         "(default: once per\n"
         "                     step, where the CPU has a packed-weight "
         "kernel)\n"
         "  --pin-ranks auto|off\n"
         "                     auto (default): ranks out/launch started, "
         "more than the\n"
         "                     CPUs, each run on one CPU, consecutive ranks "
         "sharing one\n"
         "  --transport mpi|socket\n"
         "                     how the ranks talk (default: socket when "
         "out/launch started\n"
         "                     them, mpi under mpirun/srun)\n"
         "  --quiet            no per-step lines\n";
}

std::string findTransportOption(int argc, char **argv) {
  std::string found;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--transport" && i + 1 < argc)
      found = argv[++i];
    else if (arg.rfind("--transport=", 0) == 0)
      found = arg.substr(12);
  }
  return found;
}

std::string substituteRank(const std::string &pattern, int rank) {
  std::string result = pattern;
  const std::string key = "{rank}";
  for (size_t pos = result.find(key); pos != std::string::npos;
       pos = result.find(key, pos)) {
    std::string number = std::to_string(rank);
    result.replace(pos, key.size(), number);
    pos += number.size();
  }
  return result;
}

} // namespace pipecc::rt
