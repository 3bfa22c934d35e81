// pipecc: compiles an ONNX model into per-rank pipeline-parallel programs.
// The driver's logic lives in the PipeccCompiler library; this file only
// turns the command line into DriverOptions.
#include "pipecc/Compiler/Driver.h"
#include "pipecc/Compiler/FailureHandling.h"
#include "pipecc/Compiler/InitAll.h"
#include "pipecc/Compiler/ProfileCommand.h"
#include "pipecc/Compiler/ScheduleCommand.h"
#include "pipecc/Runtime/Numbers.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <memory>
#include <optional>
#include <tuple>

using namespace llvm;

static cl::OptionCategory pipeccCategory("pipecc options");

static cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::cat(pipeccCategory));
static cl::opt<std::string> outputDir("o", cl::desc("Output folder"),
                                      cl::value_desc("dir"),
                                      cl::cat(pipeccCategory));
static cl::opt<bool>
    force("force",
          cl::desc("Replace the -o folder even if it holds files pipecc did "
                   "not write (never one holding the model)"),
          cl::cat(pipeccCategory));

static std::string phaseList() {
  std::string list;
  for (pipecc::Phase phase : pipecc::allPhases())
    list += (list.empty() ? "" : ", ") + pipecc::phaseName(phase).str();
  return list;
}

static cl::opt<std::string>
    emitPhase("emit",
              cl::desc("Print the IR after this phase to stdout; timeline: "
                       "the predicted timeline (trace JSON to stdout, or "
                       "timeline.json and timeline.svg in the -o folder)"),
              cl::value_desc("phase"), cl::cat(pipeccCategory));
static cl::opt<std::string>
    compileTo("compile-to", cl::desc("Stop after this phase"),
              cl::value_desc("phase"), cl::cat(pipeccCategory));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Fix the free dimensions of a graph input, e.g. "
                         "x=16x64 (repeatable)"),
                cl::value_desc("name=dims"), cl::cat(pipeccCategory));
static cl::opt<bool>
    inference("inference",
              cl::desc("Compile the model forward only, for one rank: no "
                       "autodiff; out/launch --outputs DIR writes every "
                       "graph output"),
              cl::cat(pipeccCategory));
static cl::opt<bool> summary("summary",
                             cl::desc("Print a summary of the imported model"),
                             cl::cat(pipeccCategory));
static cl::opt<std::string> memoryPlan(
    "memory-plan", cl::ValueOptional,
    cl::desc("Print every rank's static memory plan after the schedule "
             "phase: of the program as compiled (default), or assuming fp32 "
             "or bf16 activations"),
    cl::value_desc("fp32|bf16"), cl::cat(pipeccCategory));
// Numbers are read as text and parsed by the runtime's parser
// (pipecc/Runtime/Numbers.h), so that pipecc and the rank executables accept
// the same texts and a bad one is one `pipecc: error:` line.
static cl::opt<std::string>
    optLevel("O",
             cl::desc("Optimisation level of the rank executables: -O0 to "
                      "-O3 (default -O3)"),
             cl::Prefix, cl::init("3"), cl::cat(pipeccCategory));
static cl::opt<std::string>
    target("target",
           cl::desc("What the rank executables run on: cpu (default) or "
                    "cuda"),
           cl::init("cpu"), cl::cat(pipeccCategory));
static cl::opt<std::string>
    gpuArch("gpu-arch",
            cl::desc("GPU architecture of --target cuda: sm_75, sm_80, "
                     "sm_86, sm_87, sm_89, sm_90 (default) or sm_90a"),
            cl::init("sm_90"), cl::cat(pipeccCategory));
static cl::opt<std::string>
    targetCPU("target-cpu",
              cl::desc("CPU model the rank code is compiled for: native "
                       "(this machine's, its vector instructions included; "
                       "the default of --target cpu), generic (any CPU of "
                       "the architecture; the default of --target cuda) or "
                       "an LLVM CPU name (x86-64-v3, znver3, ...)"),
              cl::init(""), cl::cat(pipeccCategory));
static cl::opt<std::string>
    precision("precision",
              cl::desc("Arithmetic of the stage functions: fp32 (default) "
                       "or bf16 (bf16 compute, f32 accumulation, f32 master "
                       "weights and gradients)"),
              cl::init("fp32"), cl::cat(pipeccCategory));
static cl::opt<std::string> elideLimit(
    "elide-elements-larger-than",
    cl::desc("Print constants with more elements as dense_resource "
             "placeholders (default 16)"),
    cl::value_desc("N"), cl::init("16"), cl::cat(pipeccCategory));

static cl::OptionCategory trainingCategory("pipecc training options");
static cl::opt<std::string> stages("stages",
                                   cl::desc("Pipeline stages (ranks)"),
                                   cl::value_desc("N"), cl::init("1"),
                                   cl::cat(trainingCategory));
static cl::opt<std::string> microbatches(
    "microbatches", cl::desc("Micro-batches each step splits its batch into"),
    cl::value_desc("M"), cl::init("1"), cl::cat(trainingCategory));
static cl::opt<std::string>
    chunks("chunks",
           cl::desc("Virtual stages per rank, for interleaved and V "
                    "schedules (default 1)"),
           cl::value_desc("v"), cl::init("1"), cl::cat(trainingCategory));
static cl::opt<std::string> weightGradientGroup(
    "weight-gradient-group",
    cl::desc("Run the weight gradients of this many consecutive "
             "micro-batches as one call, one product over their rows "
             "joined, where the predicted step is no longer for it (1: one "
             "call each; default 1)"),
    cl::value_desc("N"), cl::init("1"), cl::cat(trainingCategory));
static cl::opt<std::string> splitBackwardChoice(
    "split-backward",
    cl::desc("Run each micro-batch's backward as two calls, input gradient "
             "(B) then weight gradient (W): auto (default: where the "
             "schedule needs it, or where the predicted step is shorter for "
             "it, since the input gradient then leaves before W), true or "
             "false"),
    cl::value_desc("auto|true|false"), cl::init("auto"),
    cl::cat(trainingCategory));
static cl::opt<std::string>
    schedule("schedule",
             cl::desc("Pipeline schedule: gpipe, 1f1b, interleaved-1f1b "
                      "(--chunks v), zb-h1, zb-h2, zb-v (--chunks 2) or "
                      "auto (a search over orderings)"),
             cl::init("1f1b"), cl::cat(trainingCategory));
static cl::opt<std::string>
    partitionStrategy("partition",
              cl::desc("How to cut stages: dp (minimise the slowest stage, "
                       "default) or uniform"),
              cl::init("dp"), cl::cat(trainingCategory));
static cl::list<std::string>
    cutAfter("cut-after", cl::CommaSeparated,
             cl::desc("ONNX node names that end a stage (overrides "
                      "--partition)"),
             cl::value_desc("node,..."), cl::cat(trainingCategory));
static cl::opt<std::string>
    device("device", cl::desc("Device profile of the cost model: host-cpu, "
                              "a100, h100, h200, or a profile file.json "
                              "from `pipecc profile`"),
           cl::init("host-cpu"), cl::cat(trainingCategory));
static cl::opt<std::string>
    loss("loss",
         cl::desc("Attach a loss to a model that outputs predictions: "
                  "cross-entropy or mse"),
         cl::cat(trainingCategory));
static cl::opt<std::string>
    labelInput("label-input", cl::desc("Name of the label input --loss adds"),
               cl::init("labels"), cl::cat(trainingCategory));
static cl::opt<std::string>
    lossOutput("loss-output",
               cl::desc("The model output to differentiate, when it has "
                        "several scalar outputs"),
               cl::cat(trainingCategory));
static cl::list<std::string>
    freeze("freeze", cl::CommaSeparated,
           cl::desc("Initializers that are buffers, not parameters: they are "
                    "never trained (e.g. a rotary embedding's inv_freq)"),
           cl::value_desc("name,..."), cl::cat(trainingCategory));
static cl::opt<std::string>
    learningRate("lr",
                 cl::desc("Default SGD learning rate (a positive normal "
                          "float32, default 0.1)"),
                 cl::value_desc("X"), cl::init("0.1"),
                 cl::cat(trainingCategory));

// `pipecc schedule`: a library schedule simulated without a model.
static cl::SubCommand
    scheduleCommand("schedule",
                    "Simulate a pipeline schedule without a model: each "
                    "rank's program, makespan, bubble, peak memory, timeline");
static cl::opt<std::string>
    scheduleRanks("stages", cl::desc("Pipeline depth: ranks P (default 4)"),
                  cl::value_desc("P"), cl::init("4"), cl::sub(scheduleCommand));
static cl::opt<std::string> scheduleMicrobatches(
    "microbatches", cl::desc("Micro-batches M per step (default 8)"),
    cl::value_desc("M"), cl::init("8"), cl::sub(scheduleCommand));
static cl::opt<std::string>
    scheduleChunks("chunks",
                   cl::desc("Virtual stages v per rank (default 1)"),
                   cl::value_desc("v"), cl::init("1"),
                   cl::sub(scheduleCommand));
static cl::opt<std::string>
    scheduleName("schedule", cl::desc("Schedule generator (default 1f1b)"),
                 cl::value_desc("name"), cl::init("1f1b"),
                 cl::sub(scheduleCommand));
static cl::opt<std::string> forwardCost(
    "forward",
    cl::desc("Seconds of F per micro-batch: one value or one per virtual "
             "stage, comma-separated (default 1)"),
    cl::value_desc("s[,s...]"), cl::init("1"), cl::sub(scheduleCommand));
static cl::opt<std::string> backwardInputCost(
    "backward-input",
    cl::desc("Seconds of B (backward to the input) per micro-batch "
             "(default 1)"),
    cl::value_desc("s[,s...]"), cl::init("1"), cl::sub(scheduleCommand));
static cl::opt<std::string> backwardWeightCost(
    "backward-weight",
    cl::desc("Seconds of W (backward to the weights) per micro-batch "
             "(default 1); a fused backward takes B + W"),
    cl::value_desc("s[,s...]"), cl::init("1"), cl::sub(scheduleCommand));
static cl::opt<std::string> messageCost(
    "comm",
    cl::desc("Seconds per message: one value or one per boundary between "
             "virtual stages (default 0)"),
    cl::value_desc("s[,s...]"), cl::init("0"), cl::sub(scheduleCommand));
static cl::opt<std::string> scheduleDevice(
    "device",
    cl::desc("Device profile (a file.json from `pipecc profile`): the "
             "ranks share its cores"),
    cl::value_desc("file.json"), cl::sub(scheduleCommand));
static cl::opt<std::string> memoryLimit(
    "memory-limit",
    cl::desc("Most activations a rank may hold, in micro-batches of its "
             "virtual stages"),
    cl::value_desc("N"), cl::sub(scheduleCommand));
static cl::opt<bool>
    splitBackward("split-backward",
                  cl::desc("Schedule B and W apart even when the schedule "
                           "does not need it"),
                  cl::sub(scheduleCommand));
static cl::opt<bool>
    showMessages("messages",
                 cl::desc("Print the sends (>peer:tensor@m) and receives "
                          "(<peer:tensor@m) in each rank's program"),
                 cl::sub(scheduleCommand));
static cl::opt<bool>
    listSchedules("list",
                  cl::desc("Print the known schedule names, one a line"),
                  cl::sub(scheduleCommand));
static cl::opt<std::string>
    tracePath("trace",
              cl::desc("Write the timeline as Chrome/Perfetto trace JSON"),
              cl::value_desc("file.json"), cl::sub(scheduleCommand));
static cl::opt<std::string>
    svgPath("svg", cl::desc("Write the timeline as an SVG Gantt chart"),
            cl::value_desc("file.svg"), cl::sub(scheduleCommand));
static cl::opt<std::string> scheduleOutput(
    "o", cl::desc("Output folder for timeline.json and timeline.svg"),
    cl::value_desc("dir"), cl::sub(scheduleCommand));
static cl::opt<bool>
    scheduleForce("force",
                  cl::desc("Replace output files (and an -o folder) even if "
                           "pipecc did not write them"),
                  cl::sub(scheduleCommand));

// `pipecc timeline`: traces (predicted or measured) rendered as SVG.
static cl::SubCommand
    timelineCommand("timeline",
                    "Render one trace, or two on one time scale, as an SVG "
                    "Gantt chart");
static cl::list<std::string> timelineInputs(cl::Positional,
                                            cl::desc("<trace.json>..."),
                                            cl::sub(timelineCommand));
static cl::opt<std::string>
    timelineOutput("o", cl::desc("SVG file to write (default: stdout)"),
                   cl::value_desc("file.svg"), cl::sub(timelineCommand));
static cl::opt<bool>
    timelineForce("force",
                  cl::desc("Replace the -o file even if pipecc did not write "
                           "it"),
                  cl::sub(timelineCommand));

// `pipecc profile`: measures this machine for the cost model.
static cl::SubCommand
    profileCommand("profile",
                   "Measure this machine (matmul rates, element-wise "
                   "bandwidth, call overheads, messages between ranks, "
                   "cores) and write a device profile for --device");
static cl::opt<std::string>
    profileOutput("o", cl::desc("Profile file to write (default: stdout)"),
                  cl::value_desc("file.json"), cl::sub(profileCommand));
static cl::opt<std::string>
    profileRanks("ranks",
                 cl::desc("Processes of the message measurement, in pairs "
                          "(even, default 2)"),
                 cl::value_desc("N"), cl::init("2"), cl::sub(profileCommand));
static cl::opt<bool>
    profileQuick("quick",
                 cl::desc("A small grid and few repeats (seconds; for "
                          "tests, not for predictions)"),
                 cl::sub(profileCommand));
static cl::opt<bool>
    profileForce("force",
                 cl::desc("Replace the -o file even if pipecc did not write "
                          "it"),
                 cl::sub(profileCommand));

static int fail(const Twine &message) {
  pipecc::reportError(message);
  return 1;
}

/// Ends a subcommand: its status, or an error if stdout could not be
/// written.
static int finish(int status) {
  errs().clear_error();
  outs().flush();
  if (outs().has_error()) {
    std::error_code ec = outs().error();
    outs().clear_error();
    return status ? status
                  : fail("cannot write to standard output: " + ec.message());
  }
  return status;
}

static int runSchedule() {
  if (listSchedules) {
    for (const std::string &name : pipecc::scheduleNames())
      outs() << name << "\n";
    return finish(0);
  }
  pipecc::ScheduleCommandOptions options;
  std::string error;
  for (auto [flag, text, target] :
       {std::tuple{"--stages", &scheduleRanks, &options.ranks},
        std::tuple{"--microbatches", &scheduleMicrobatches,
                   &options.microbatches},
        std::tuple{"--chunks", &scheduleChunks, &options.chunks}}) {
    // Bounded so that a typo cannot ask for a simulation of billions of
    // actions.
    std::optional<int64_t> value =
        pipecc::rt::parseIntegerOption(flag, *text, 1, 4096, error);
    if (!value)
      return fail(error);
    *target = *value;
  }
  if (options.ranks * options.chunks * options.microbatches > 1000000)
    return fail("--stages x --chunks x --microbatches is over 1000000 "
                "actions; give a smaller problem");
  for (auto [flag, text, target] :
       {std::tuple{"--forward", &forwardCost, &options.forward},
        std::tuple{"--backward-input", &backwardInputCost,
                   &options.backwardInput},
        std::tuple{"--backward-weight", &backwardWeightCost,
                   &options.backwardWeight},
        std::tuple{"--comm", &messageCost, &options.messageSeconds}}) {
    std::optional<std::vector<double>> values =
        pipecc::parseSecondsList(flag, *text, error);
    if (!values)
      return fail(error);
    *target = std::move(*values);
  }
  if (memoryLimit.getNumOccurrences()) {
    std::optional<double> limit = pipecc::rt::parseNonNegativeRealOption(
        "--memory-limit", memoryLimit, error);
    if (!limit)
      return fail(error + " (a number of micro-batches of activations)");
    options.memoryLimit = *limit;
  }
  options.schedule = scheduleName;
  options.device = scheduleDevice;
  options.splitBackward = splitBackward;
  options.showMessages = showMessages;
  options.tracePath = tracePath;
  options.svgPath = svgPath;
  options.outputDir = scheduleOutput;
  options.force = scheduleForce;
  return finish(pipecc::runScheduleCommand(options, outs()));
}

int main(int argc, char **argv) {
  pipecc::noteInheritedSignalDispositions(); // before InitLLVM's handlers
  InitLLVM initLLVM(argc, argv);
  // Before anything starts a thread: signals, fatal errors and full disks
  // end as one `pipecc: error:` line with the staging folder removed.
  pipecc::installFailureHandlers();
  // Phases run registered passes, so pipecc-opt can replay any of them.
  pipecc::registerAllPipeccPasses();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  // --help lists pipecc's options and MLIR's IR-printing and pass-manager
  // ones; LLVM's hundreds of back-end flags stay behind --help-hidden.
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.second;
    StringRef name = entry.first();
    bool ours = llvm::is_contained(option->Categories, &pipeccCategory) ||
                llvm::is_contained(option->Categories, &trainingCategory);
    if (!ours && !name.starts_with("mlir-") && name != "help" &&
        name != "version")
      option->setHiddenFlag(cl::ReallyHidden);
  }
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "pipecc " PIPECC_VERSION " (LLVM/MLIR " LLVM_VERSION_STRING ")\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "pipecc: ahead-of-time compiler for pipeline-parallel training\n\n"
      "  pipecc model.onnx --emit=graph          print the imported graph\n"
      "  pipecc model.onnx --stages 4 --microbatches 8 --schedule 1f1b "
      "-o out/\n"
      "                                          compile per-rank executables\n"
      "  out/launch --steps 10 --data DIR        train (DIR/<input>.npy)\n"
      "  pipecc schedule --stages 4 --microbatches 8 --schedule zb-h1\n"
      "                                          compare schedules, no model\n"
      "  pipecc timeline a.json [b.json] -o t.svg  render traces\n"
      "  pipecc profile -o host.json             measure this machine for\n"
      "                                          --device host.json\n\n"
      "Phases, in order: " + phaseList() + "\n");

  // LLVM lets a subcommand's command line set the top level's options too;
  // taking them silently would hide a mistaken command line.
  for (cl::SubCommand *sub :
       {&scheduleCommand, &timelineCommand, &profileCommand}) {
    if (!*sub)
      continue;
    for (auto &entry : cl::getRegisteredOptions(cl::SubCommand::getTopLevel()))
      if (entry.second->getNumOccurrences() &&
          !llvm::is_contained(entry.second->Subs, sub))
        return fail("--" + entry.first() + " is not an option of pipecc " +
                    sub->getName() + " (pipecc " + sub->getName() +
                    " --help lists them)");
  }
  if (scheduleCommand)
    return runSchedule();
  if (profileCommand) {
    pipecc::ProfileCommandOptions options;
    std::string error;
    std::optional<int64_t> ranks =
        pipecc::rt::parseIntegerOption("--ranks", profileRanks, 2, 64, error);
    if (!ranks)
      return fail(error);
    if (*ranks % 2)
      return fail("--ranks " + profileRanks +
                  ": expected an even number (ranks ping-pong in pairs)");
    options.ranks = static_cast<int>(*ranks);
    options.outputPath = profileOutput;
    options.force = profileForce;
    options.quick = profileQuick;
    return finish(pipecc::runProfileCommand(options, outs()));
  }
  if (timelineCommand)
    return finish(pipecc::runTimelineCommand(
        std::vector<std::string>(timelineInputs.begin(), timelineInputs.end()),
        timelineOutput, timelineForce, outs()));

  if (inputPath.empty())
    return fail("no input model given; usage: pipecc model.onnx [-o out/] "
                "[--emit=<phase>]");

  pipecc::DriverOptions options;
  options.inputPath = inputPath;
  options.outputDir = outputDir;
  options.force = force;
  options.printSummary = summary;
  if (memoryPlan.getNumOccurrences())
    options.memoryPlan = memoryPlan.getValue();
  std::string numberError;
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  for (auto [flag, text, target, min, max] :
       {std::tuple{"--elide-elements-larger-than", &elideLimit,
                   &options.elideElementsLimit, int64_t{0},
                   std::numeric_limits<int64_t>::max()},
        // The runtime holds both as int32.
        std::tuple{"--stages", &stages, &options.stages, int64_t{1},
                   kInt32Max},
        std::tuple{"--microbatches", &microbatches, &options.microbatches,
                   int64_t{1}, kInt32Max},
        std::tuple{"--chunks", &chunks, &options.chunks, int64_t{1},
                   kInt32Max},
        std::tuple{"--weight-gradient-group", &weightGradientGroup,
                   &options.weightGradientGroup, int64_t{1}, kInt32Max}}) {
    std::optional<int64_t> value =
        pipecc::rt::parseIntegerOption(flag, *text, min, max, numberError);
    if (!value)
      return fail(numberError);
    *target = *value;
  }
  std::optional<int64_t> level =
      pipecc::rt::parseIntegerOption("-O", optLevel, 0, 3, numberError);
  if (!level)
    return fail(numberError);
  options.optLevel = static_cast<unsigned>(*level);
  // Recorded and compiled in as the float32 the ranks compute with.
  std::optional<float> lr =
      pipecc::rt::parseLearningRateOption("--lr", learningRate, numberError);
  if (!lr)
    return fail(numberError);
  options.target = target;
  options.gpuArch = gpuArch;
  // Empty means the target's default, so an empty value given is refused
  // rather than taken for it.
  if (targetCPU.getNumOccurrences() && targetCPU.empty())
    return fail("--target-cpu: empty; expected native, generic or an LLVM "
                "CPU name");
  options.targetCPU = targetCPU;
  if (precision != "fp32" && precision != "bf16")
    return fail("--precision " + precision + ": expected fp32 or bf16");
  options.precision = precision;
  options.schedule = schedule;
  if (splitBackwardChoice != "auto" && splitBackwardChoice != "true" &&
      splitBackwardChoice != "false")
    return fail("--split-backward " + splitBackwardChoice +
                ": expected auto, true or false");
  options.splitBackward = splitBackwardChoice;
  options.partition = partitionStrategy;
  options.cutAfter.assign(cutAfter.begin(), cutAfter.end());
  options.device = device;
  options.loss = loss;
  options.labelInput = labelInput;
  options.lossOutput = lossOutput;
  options.learningRate = *lr;
  if (!loss.empty() && loss != "cross-entropy" && loss != "mse")
    return fail("--loss " + loss + ": expected cross-entropy or mse");
  // The label input names its data file (<name>.npy): a plain file name.
  if (!loss.empty() &&
      (labelInput.empty() || labelInput == "." || labelInput == ".." ||
       labelInput.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                    "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                    "0123456789_.-") != std::string::npos))
    return fail("--label-input '" + labelInput +
                "': expected a name of letters, digits, '_', '.' and '-'");
  // --emit=timeline is no phase: it asks for the schedule's predicted
  // timeline (trace JSON and SVG).
  options.emitTimeline = emitPhase == "timeline";
  for (auto [flag, text, target] :
       {std::tuple{"--emit", &emitPhase, &options.emit},
        std::tuple{"--compile-to", &compileTo, &options.compileTo}}) {
    if (text->empty() || (text == &emitPhase && options.emitTimeline))
      continue;
    *target = pipecc::parsePhase(*text);
    if (!*target)
      return fail(Twine("unknown phase '") + *text + "' for " + flag +
                  "; phases are " + phaseList() +
                  (text == &emitPhase ? " (or timeline)" : ""));
  }
  for (const std::string &spec : inputShapes) {
    std::string error;
    if (failed(pipecc::frontend::parseInputShape(spec, options.import, error)))
      return fail("--input-shape " + spec + ": " + error);
  }
  options.import.frozen.assign(freeze.begin(), freeze.end());
  options.inference = inference;
  if (inference) {
    // Training options have no meaning in a forward-only program; taking
    // them silently would hide a mistaken command line.
    cl::Option *trainingOptions[] = {&schedule,  &partitionStrategy,
                                     static_cast<cl::Option *>(std::addressof(cutAfter)),
                                     static_cast<cl::Option *>(std::addressof(freeze)),
                                     &loss,
                                     &labelInput, &lossOutput,
                                     &learningRate};
    for (cl::Option *option : trainingOptions)
      if (option->getNumOccurrences())
        return fail("--" + option->ArgStr +
                    " is a training option; --inference compiles a "
                    "forward-only program");
  }
  if (!options.emit && !options.emitTimeline && !options.printSummary &&
      !options.memoryPlan && options.outputDir.empty())
    return fail("nothing to do: give -o <dir>, --emit=<phase>, --emit=timeline, "
                "--summary or --memory-plan");
  int status = pipecc::runDriver(options, outs());
  // An unwritable stderr loses the messages, not the result: the exit
  // status says it, rather than LLVM ERROR from errs()'s destructor.
  errs().clear_error();
  // A write error still buffered must not reach outs()'s destructor, which
  // reports it as LLVM ERROR.
  outs().flush();
  if (outs().has_error()) {
    std::error_code ec = outs().error();
    outs().clear_error();
    return status ? status
                  : fail("cannot write to standard output: " + ec.message());
  }
  return status;
}
