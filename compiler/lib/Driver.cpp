#include "pipecc/Compiler/Driver.h"

#include "pipecc/Compiler/Codegen.h"
#include "pipecc/Compiler/FailureHandling.h"
#include "pipecc/Compiler/InitAll.h"
#include "pipecc/Compiler/MemoryPlanning.h"
#include "pipecc/Compiler/ModelSummary.h"
#include "pipecc/Compiler/OutputDirectory.h"
#include "pipecc/Compiler/PassRunning.h"
#include "pipecc/Compiler/TargetBackend.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Conversion/StageAbi.h"
#include "pipecc/Passes/Passes.h"
#include "pipecc/Passes/PipelineTimeline.h"
#include "pipecc/Support/Escape.h"
#include "pipecc/Scheduling/Generators.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace pipecc;

namespace {

/// Prints each diagnostic as one line, `pipecc: error: <message>`, adding the
/// ONNX node a location names when the message does not already. Messages
/// quote text from the model; whatever escaped the frontend's escaping, a
/// newline or a terminal control character cannot start a line of its own.
class DriverDiagnostics {
public:
  explicit DriverDiagnostics(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diag) { return print(diag); }) {}

private:
  LogicalResult print(Diagnostic &diag) {
    StringRef severity = "error";
    switch (diag.getSeverity()) {
    case DiagnosticSeverity::Error:
      break;
    case DiagnosticSeverity::Warning:
      severity = "warning";
      break;
    case DiagnosticSeverity::Note:
      severity = "note";
      break;
    case DiagnosticSeverity::Remark:
      severity = "remark";
      break;
    }
    std::string message = support::toOneLine(diag.str());
    std::string where = describe(diag.getLocation());
    // See reportError: a signal's cleanup speaks first, and alone.
    auto hold = holdFailureCleanup();
    llvm::errs() << "pipecc: " << severity << ": ";
    if (!where.empty() && message.find(where) == std::string::npos)
      llvm::errs() << where << ": ";
    llvm::errs() << message << "\n";
    for (Diagnostic &note : diag.getNotes())
      llvm::errs() << "pipecc: note: " << support::toOneLine(note.str())
                   << "\n";
    return success();
  }

  /// "node '<name>'" for a named location, else nothing: file positions in
  /// an ONNX file mean nothing to a user.
  static std::string describe(Location loc) {
    if (auto name = llvm::dyn_cast<NameLoc>(loc))
      return "node " + support::quote(name.getName().strref());
    if (auto fused = llvm::dyn_cast<FusedLoc>(loc))
      for (Location inner : fused.getLocations())
        if (std::string found = describe(inner); !found.empty())
          return found;
    return "";
  }

  ScopedDiagnosticHandler handler;
};

bool reaches(Phase last, Phase phase) {
  return static_cast<int>(phase) <= static_cast<int>(last);
}

/// Runs one phase's passes with the command line's pass-manager options
/// (--mlir-print-ir-after-all, --mlir-timing, ...).
LogicalResult runPasses(ModuleOp module,
                        llvm::function_ref<LogicalResult(OpPassManager &)>
                            build) {
  PassManager pm(module.getContext());
  if (failed(build(pm)) || failed(runWithCommandLineOptions(pm, module)))
    return failure();
  return verify(module);
}

/// The phases' pass pipelines. Each is a list of registered passes, so
/// `pipecc-opt` runs the same thing from the same text.
std::string graphPipeline() {
  return "canonicalize,cse,func.func(pipecc-fuse-norms)";
}

std::string autodiffPipeline(const DriverOptions &options) {
  std::string text;
  if (!options.loss.empty())
    text += "pipecc-attach-loss{kind=" + options.loss +
            " label-input=" + options.labelInput + "},";
  text += "pipecc-autodiff";
  if (!options.lossOutput.empty())
    text += "{loss-output=" + options.lossOutput + "}";
  text += ",pipecc-rematerialize";
  return text;
}

/// Mixed precision, on the stage functions once they exist.
std::string precisionPipeline(const DriverOptions &options) {
  return "pipecc-lower-precision{precision=" + options.precision + "}";
}

std::string schedulePipeline(const DriverOptions &options) {
  std::string group = std::to_string(options.weightGradientGroup);
  return "pipecc-schedule{schedule=" + options.schedule +
         " microbatches=" + std::to_string(options.microbatches) +
         " chunks=" + std::to_string(options.chunks) +
         " weight-gradient-group=" + group +
         " split-backward=" + options.splitBackward +
         "},pipecc-group-weight-gradients{size=" + group +
         "},pipecc-verify-pipeline";
}

/// The micro-batch shape of every data input: the model's batch dimension
/// (dimension 0) divided by the number of micro-batches.
LogicalResult microbatchShapes(ModuleOp module, int64_t microbatches,
                               frontend::ImportOptions &import) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return module.emitError("the imported model has no @main");
  std::optional<int64_t> modelBatch;
  StringRef firstInput;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    auto type = llvm::cast<RankedTensorType>(main.getArgument(i).getType());
    auto name = main.getArgAttrOfType<StringAttr>(i, "graph.input");
    if (!name || type.getRank() == 0)
      return module.emitError("input '")
             << (name ? name.getValue() : "?")
             << "' has no batch dimension; with --microbatches every graph "
                "input is split along dimension 0";
    int64_t batch = type.getDimSize(0);
    if (!modelBatch) {
      modelBatch = batch;
      firstInput = name.getValue();
    } else if (batch != *modelBatch) {
      return module.emitError("inputs '")
             << firstInput << "' and '" << name.getValue()
             << "' have different sizes of dimension 0 (" << *modelBatch
             << " and " << batch
             << "); with --microbatches every graph input is split along "
                "dimension 0, its batch dimension";
    }
    if (batch % microbatches != 0)
      return module.emitError("input '")
             << name.getValue() << "' has batch size " << batch
             << ", which --microbatches " << microbatches
             << " does not divide";
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = batch / microbatches;
    import.inputShapes[name.getValue()] = shape;
  }
  return success();
}

int64_t firstBatchDim(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  for (Type type : main.getArgumentTypes())
    if (auto tensor = llvm::dyn_cast<RankedTensorType>(type);
        tensor && tensor.getRank() > 0)
      return tensor.getDimSize(0);
  return 0;
}

} // namespace

int pipecc::runDriver(const DriverOptions &options,
                      llvm::raw_fd_ostream &out) {
  DialectRegistry registry;
  registerAllPipeccDialects(registry);
  target::registerAllTargetDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name ops by location; printing the op (a whole module for
  // module-level errors) would bury the one-line message.
  context.printOpOnDiagnostic(false);
  DriverDiagnostics diagnostics(context);
  auto fail = [&](const Twine &message) {
    emitError(UnknownLoc::get(&context)) << message;
    return 1;
  };

  Phase last = options.compileTo.value_or(
      options.outputDir.empty() ? Phase::Graph : Phase::Codegen);
  if (options.emit && !reaches(last, *options.emit))
    last = *options.emit;
  // The memory plan needs the schedule.
  if (options.memoryPlan && !reaches(last, Phase::Schedule)) {
    if (options.compileTo)
      return fail("--memory-plan needs the schedule phase; --compile-to=" +
                  phaseName(*options.compileTo) + " stops before it");
    last = Phase::Schedule;
  }
  // So does the timeline.
  if (options.emitTimeline && !reaches(last, Phase::Schedule)) {
    if (options.compileTo)
      return fail("--emit=timeline needs the schedule phase; --compile-to=" +
                  phaseName(*options.compileTo) + " stops before it");
    last = Phase::Schedule;
  }
  for (Phase phase : allPhases())
    if (reaches(last, phase) && !isPhaseImplemented(phase))
      return fail("phase '" + phaseName(phase) +
                  "' is not implemented in this version of pipecc");
  if (options.emit == Phase::Codegen)
    return fail("code generation writes object code, not IR; --emit=lower "
                "prints the last IR of every rank");
  if (options.microbatches < 1)
    return fail("--microbatches must be at least 1");
  if (!(options.learningRate > 0) || !std::isfinite(options.learningRate))
    return fail("--lr must be a positive number");
  if (options.stages < 1)
    return fail("--stages must be at least 1");
  if (options.chunks < 1)
    return fail("--chunks must be at least 1");
  // The schedule says up front whether it can use v chunks per rank.
  if (const scheduling::ScheduleGenerator *generator =
          scheduling::lookupGenerator(options.schedule)) {
    scheduling::Result<scheduling::PlacementKind> placement =
        generator->placementFor(static_cast<int>(options.chunks));
    if (!placement)
      return fail("--chunks " + Twine(options.chunks) + " with --schedule " +
                  options.schedule + ": " + placement.message());
  }
  if (options.inference) {
    if (options.stages != 1)
      return fail("--inference compiles for one rank; --stages " +
                  Twine(options.stages) + " is not supported");
    if (options.microbatches != 1)
      return fail("--inference runs the whole batch at once; --microbatches " +
                  Twine(options.microbatches) + " is not supported");
    if (options.chunks != 1)
      return fail("--inference compiles one stage; --chunks " +
                  Twine(options.chunks) + " is not supported");
    if (options.emit == Phase::Autodiff ||
        options.compileTo == Phase::Autodiff)
      return fail("--inference skips the autodiff phase; there is nothing "
                  "to print or stop after");
  }
  std::optional<codegen::MemoryPlanSettings> memorySettings;
  if (options.memoryPlan) {
    // Without a value: the program as compiled (--precision included).
    if (options.memoryPlan->empty()) {
      codegen::RankSettings compiled;
      compiled.precision = options.precision;
      memorySettings = codegen::memoryPlanSettingsFor(compiled);
    } else {
      memorySettings = codegen::memoryPlanSettingsFor(*options.memoryPlan);
    }
    if (!memorySettings)
      return fail("--memory-plan=" + *options.memoryPlan +
                  ": expected fp32 or bf16");
  }
  if (options.optLevel > 3)
    return fail("-O" + Twine(options.optLevel) +
                ": the optimisation level must be 0, 1, 2 or 3");
  const target::TargetBackend *backend = target::lookupTarget(options.target);
  if (!backend)
    return fail("--target " + options.target + ": expected one of " +
                target::targetNameList());
  // Checked whatever the target, so that a mistyped value never waits for
  // the day it is used.
  if (std::optional<std::string> error = target::checkGpuArch(options.gpuArch))
    return fail(*error);
  target::TargetOptions targetOptions;
  targetOptions.name = options.target;
  targetOptions.gpuArch = options.gpuArch;
  if (std::optional<std::string> error = backend->verifyOptions(targetOptions))
    return fail(*error);
  std::string cpuError;
  std::optional<codegen::TargetCPU> cpu =
      codegen::resolveTargetCPU(options.targetCPU.empty()
                                    ? backend->getDefaultTargetCPU().str()
                                    : options.targetCPU,
                                cpuError);
  if (!cpu)
    return fail(cpuError);

  // Claim the output folder first, so a bad -o fails before any work.
  std::optional<OutputDirectory> outputDir;
  if (!options.outputDir.empty()) {
    std::string error;
    OutputDirectory::Options folderOptions;
    folderOptions.force = options.force;
    folderOptions.inputPath = options.inputPath;
    std::optional<OutputDirectory> created =
        OutputDirectory::create(options.outputDir, folderOptions, error);
    if (!created)
      return fail(error);
    outputDir.emplace(std::move(*created));
  }

  OpPrintingFlags flags;
  flags.elideLargeElementsAttrs(options.elideElementsLimit);
  // Parameters mapped from external data print as dense_resource; their
  // bytes (gigabytes for a large model) are elided alike.
  flags.elideLargeResourceString(options.elideElementsLimit);
  // Printing is checked where it happens: an unwritable stdout (a full
  // disk, /dev/full) is an error like any other, and raw_ostream must not
  // meet it first (its destructor would end the process with LLVM ERROR).
  auto outputFailed = [&]() {
    out.flush();
    if (!out.has_error())
      return false;
    std::error_code ec = out.error();
    out.clear_error();
    fail("cannot write to standard output: " + ec.message());
    return true;
  };
  auto emitIfAsked = [&](Phase phase, Operation *op) {
    if (options.emit == phase) {
      op->print(out, flags);
      out << "\n";
    }
    return !outputFailed();
  };

  // Graph: the model as the user gave it (full batch).
  OwningOpRef<ModuleOp> module =
      frontend::importONNXFile(options.inputPath, options.import, &context);
  if (!module)
    return 1;
  auto cleanup = [&](OpPassManager &pm) {
    return parsePassPipeline(graphPipeline(), pm);
  };
  if (failed(runPasses(*module, cleanup)))
    return 1;
  if (!emitIfAsked(Phase::Graph, *module))
    return 1;
  if (options.printSummary) {
    printModelSummary(*module, out);
    if (outputFailed())
      return 1;
  }
  std::string error;
  if (outputDir && !outputDir->writeFile(
                       "graph.mlir",
                       [&](llvm::raw_ostream &os) { module->print(os, flags); },
                       error))
    return fail(error);

  if (reaches(last, Phase::Autodiff)) {
    // Training compiles one micro-batch: re-import at micro-batch shapes
    // (ONNX shape inference re-derives every shape from the inputs).
    if (options.microbatches > 1) {
      frontend::ImportOptions import = options.import;
      if (failed(microbatchShapes(*module, options.microbatches, import)))
        return 1;
      module = frontend::importONNXFile(options.inputPath, import, &context);
      if (!module || failed(runPasses(*module, cleanup)))
        return 1;
    }
  }
  codegen::ParameterValues initialValues =
      codegen::collectParameterValues(*module);
  codegen::RankSettings settings;
  settings.microbatchSize = firstBatchDim(*module);
  settings.learningRate = options.learningRate;
  settings.target.name = options.target;
  settings.target.gpuArch = options.gpuArch;
  settings.target.optLevel = options.optLevel;
  settings.target.cpu = *cpu;
  settings.target.device = options.device;
  settings.target.ranks = std::max<int64_t>(options.stages, 1);
  settings.inference = options.inference;
  settings.precision = options.precision;

  if (reaches(last, Phase::Autodiff) && !options.inference) {
    if (failed(runPasses(*module, [&](OpPassManager &pm) {
          return parsePassPipeline(autodiffPipeline(options), pm);
        })))
      return 1;
    if (!emitIfAsked(Phase::Autodiff, *module))
      return 1;
  }
  if (reaches(last, Phase::Partition) && options.inference) {
    if (failed(runPasses(*module, [&](OpPassManager &pm) {
          return parsePassPipeline(
              "pipecc-place-inference,pipecc-split-stages{inference=true}," +
                  precisionPipeline(options),
              pm);
        })))
      return 1;
    if (!emitIfAsked(Phase::Partition, *module))
      return 1;
  } else if (reaches(last, Phase::Partition)) {
    if (failed(runPasses(*module, [&](OpPassManager &pm) {
          PartitionOptions partition;
          partition.stages = options.stages;
          partition.strategy = options.partition;
          partition.device = options.device;
          partition.cutAfter = options.cutAfter;
          partition.microbatches = options.microbatches;
          // v virtual stages per rank, placed as the schedule places them.
          partition.chunks = options.chunks;
          partition.schedule = options.schedule;
          pm.addPass(createPartition(partition));
          pm.addPass(createSplitStages());
          return parsePassPipeline(precisionPipeline(options), pm);
        })))
      return 1;
    if (!emitIfAsked(Phase::Partition, *module))
      return 1;
  }
  if (reaches(last, Phase::Schedule)) {
    if (failed(runPasses(*module, [&](OpPassManager &pm) {
          if (options.inference)
            return parsePassPipeline("pipecc-schedule-inference", pm);
          return parsePassPipeline(schedulePipeline(options), pm);
        })))
      return 1;
    if (!emitIfAsked(Phase::Schedule, *module))
      return 1;
    if (options.emitTimeline) {
      auto pipes = module->getOps<pipeline::PipelineOp>();
      FailureOr<timeline::Timeline> predicted =
          predictPipelineTimeline(*pipes.begin());
      if (failed(predicted))
        return 1;
      auto writeJson = [&](llvm::raw_ostream &os) {
        timeline::writeTraceJson(*predicted, os);
      };
      if (!outputDir) {
        writeJson(out);
        if (outputFailed())
          return 1;
      } else if (!outputDir->writeFile("timeline.json", writeJson, error) ||
                 !outputDir->writeFile(
                     "timeline.svg",
                     [&](llvm::raw_ostream &os) {
                       const timeline::Timeline *one[] = {&*predicted};
                       timeline::writeSvg(one, os);
                     },
                     error)) {
        return fail(error);
      }
    }
    if (memorySettings) {
      FailureOr<std::vector<codegen::RankMemoryPlan>> plan =
          codegen::planPipelineMemory(*module, *memorySettings);
      if (failed(plan))
        return 1;
      auto pipes = module->getOps<pipeline::PipelineOp>();
      codegen::printMemoryPlan(*plan, *memorySettings,
                               (*pipes.begin()).getSchedule(),
                               (*pipes.begin()).getMicrobatches(), out);
      if (outputFailed())
        return 1;
    }
  }
  SmallVector<OwningOpRef<ModuleOp>> rankModules;
  if (reaches(last, Phase::Lower)) {
    if (failed(codegen::lowerRankModules(*module, settings, rankModules)))
      return 1;
    for (OwningOpRef<ModuleOp> &rank : rankModules)
      if (!emitIfAsked(Phase::Lower, *rank))
        return 1;
  }
  if (reaches(last, Phase::Codegen)) {
    if (!outputDir)
      return fail("code generation writes executables: give -o <dir>");
    if (failed(codegen::emitPipeline(*module, rankModules, initialValues,
                                     settings, *outputDir)))
      return 1;
  } else if (outputDir && last == Phase::Lower) {
    for (OwningOpRef<ModuleOp> &rank : rankModules) {
      int64_t index =
          (*rank)->getAttrOfType<IntegerAttr>(attrs::kRank).getInt();
      if (!outputDir->writeFile(
              "rank" + std::to_string(index) + ".lower.mlir",
              [&](llvm::raw_ostream &os) { rank->print(os, flags); }, error))
        return fail(error);
    }
  } else if (outputDir && last != Phase::Graph) {
    if (!outputDir->writeFile(
            (phaseName(last) + ".mlir").str(),
            [&](llvm::raw_ostream &os) { module->print(os, flags); }, error))
      return fail(error);
  }
  if (outputDir) {
    if (!outputDir->commit(error))
      return fail(error);
  }
  return 0;
}
