// The lower and codegen phases: per-rank modules, objects, executables, and
// the files that travel with them (weights, manifest, launcher).
#include "pipecc/Compiler/Codegen.h"

#include "pipecc/Compiler/MemoryPlanning.h"
#include "pipecc/Compiler/PassRunning.h"
#include "pipecc/Conversion/Passes.h"
#include "pipecc/Conversion/StageAbi.h"
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Runtime/LaunchScript.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace pipecc;
using namespace pipecc::codegen;

ParameterValues codegen::collectParameterValues(ModuleOp graphModule) {
  ParameterValues values;
  graphModule.walk([&](graph::ParamOp param) {
    if (auto init = param.getInitAttr())
      values.insert({param.getParamName(), init});
  });
  return values;
}

static pipeline::PipelineOp findPipeline(ModuleOp module) {
  auto pipelines = module.getOps<pipeline::PipelineOp>();
  if (pipelines.empty()) {
    module.emitError("no pipeline.pipeline to generate code for; run the "
                     "schedule phase first");
    return nullptr;
  }
  return *pipelines.begin();
}

LogicalResult codegen::lowerRankModules(
    ModuleOp pipelineModule, const RankSettings &settings,
    SmallVectorImpl<OwningOpRef<ModuleOp>> &out) {
  pipeline::PipelineOp pipe = findPipeline(pipelineModule);
  if (!pipe)
    return failure();
  auto parameters =
      pipelineModule->getAttrOfType<ArrayAttr>(attrs::kParameters);
  if (!parameters)
    return pipelineModule.emitError("the module has no stage functions; run "
                                    "the partition phase first");
  const target::TargetBackend *backend =
      target::lookupTarget(settings.target.name);
  if (!backend)
    return pipelineModule.emitError("unknown target '")
           << settings.target.name << "'; targets are "
           << target::targetNameList();

  target::HostProgramOptions host;
  host.microbatchSize = settings.microbatchSize;
  host.learningRate = settings.learningRate;
  host.inference = settings.inference;
  // A counted-mean loss changes every rank's gradient scale, not only the
  // scale of the rank computing it.
  for (auto func : pipelineModule.getOps<func::FuncOp>())
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (func.getResultAttr(i, attrs::kLossCount))
        host.countedMeanLoss = true;

  MLIRContext *ctx = pipelineModule.getContext();
  for (auto program : pipe.getBody().getOps<pipeline::ProgramOp>()) {
    OwningOpRef<ModuleOp> rank = ModuleOp::create(pipelineModule.getLoc());
    (*rank)->setAttr(attrs::kRank, IntegerAttr::get(IntegerType::get(ctx, 64),
                                                    program.getRank()));
    (*rank)->setAttr(attrs::kParameters, parameters);
    OpBuilder builder = OpBuilder::atBlockEnd(rank->getBody());
    // The functions the rank's program calls, whichever virtual stages.
    FailureOr<SmallVector<Operation *>> stageFunctions =
        stageFunctionsOf(program);
    if (failed(stageFunctions))
      return failure();
    for (Operation &op : pipelineModule.getBody()->getOperations())
      if (llvm::is_contained(*stageFunctions, &op))
        builder.clone(op);
    // The whole schedule's messages: every rank numbers them alike. Other
    // ranks' computes call functions this module does not hold.
    auto rankPipe = llvm::cast<pipeline::PipelineOp>(builder.clone(*pipe));
    for (auto other : rankPipe.getBody().getOps<pipeline::ProgramOp>())
      if (other.getRank() != program.getRank())
        for (Operation &op :
             llvm::make_early_inc_range(other.getBody().front()))
          if (llvm::isa<pipeline::ForwardOp, pipeline::BackwardInputOp,
                        pipeline::BackwardWeightOp, pipeline::BackwardOp>(op))
            op.erase();
    // The static memory plan of the rank's buffer table, for the host
    // program (slots, offsets, arena size).
    FailureOr<RankMemoryPlan> memoryPlan =
        planRankMemory(program, *stageFunctions, parameters,
                       pipe.getMicrobatches(),
                       memoryPlanSettingsFor(settings));
    if (failed(memoryPlan))
      return failure();
    attachMemoryPlan(*rank, *memoryPlan);

    // The command line's pass-manager options (--mlir-timing,
    // --mlir-print-ir-after-all, ...) cover the lowering too.
    PassManager pm(ctx);
    pm.addPass(createRecordStageAbi());
    backend->buildStageLoweringPipeline(pm, settings.target);
    backend->buildHostLoweringPipeline(pm, host);
    if (failed(runWithCommandLineOptions(pm, *rank)))
      return program.emitError("lowering rank ")
             << program.getRank() << " for the " << backend->getName()
             << " target failed";
    if (failed(verify(*rank)))
      return failure();
    out.push_back(std::move(rank));
  }
  return success();
}

/// Writes the tensors of `names` as one safetensors file (f32 only).
static LogicalResult writeWeights(ModuleOp module, StringRef path,
                                  ArrayRef<StringRef> names,
                                  const ParameterValues &values) {
  llvm::json::Object header;
  std::string data;
  for (StringRef name : names) {
    auto it = values.find(name);
    if (it == values.end())
      return module.emitError("parameter '")
             << name << "' has no initial value to write";
    ElementsAttr elements = it->second;
    auto type = llvm::cast<ShapedType>(elements.getType());
    if (!type.getElementType().isF32())
      return module.emitError("parameter '")
             << name << "' is not f32; the CPU runtime holds f32 parameters";
    size_t begin = data.size();
    if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(elements)) {
      // External data the importer mapped: little-endian float32 bytes.
      AsmResourceBlob *blob = resource.getRawHandle().getBlob();
      if (!blob || blob->getData().size() !=
                       static_cast<size_t>(type.getNumElements()) * 4)
        return module.emitError("cannot read the initial value of '")
               << name << "'";
      data.append(blob->getData().begin(), blob->getData().end());
    } else {
      auto floats = elements.tryGetValues<float>();
      if (!floats)
        return module.emitError("cannot read the initial value of '")
               << name << "'";
      for (float v : *floats)
        data.append(reinterpret_cast<const char *>(&v), sizeof(float));
    }
    llvm::json::Array shape;
    for (int64_t d : type.getShape())
      shape.push_back(d);
    header[name] = llvm::json::Object{
        {"dtype", "F32"},
        {"shape", std::move(shape)},
        {"data_offsets",
         llvm::json::Array{static_cast<int64_t>(begin),
                           static_cast<int64_t>(data.size())}}};
  }
  std::string json;
  llvm::raw_string_ostream(json) << llvm::json::Value(std::move(header));
  while (json.size() % 8)
    json.push_back(' ');
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::CD_CreateNew);
  if (ec)
    return module.emitError("cannot write '") << path << "': "
                                              << ec.message();
  uint64_t length = json.size();
  char lengthBytes[8];
  for (int i = 0; i < 8; ++i)
    lengthBytes[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  os.write(lengthBytes, 8);
  os << json << data;
  os.close();
  // A full disk or a file-size limit shows here, not in the destructor.
  if (os.has_error()) {
    std::error_code writeError = os.error();
    os.clear_error();
    return module.emitError("cannot write '")
           << path << "': " << writeError.message();
  }
  return success();
}

static llvm::json::Value toJSON(Attribute attr) {
  if (auto dict = llvm::dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object object;
    for (NamedAttribute entry : dict)
      object[entry.getName().strref()] = toJSON(entry.getValue());
    return object;
  }
  if (auto array = llvm::dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array list;
    for (Attribute element : array)
      list.push_back(toJSON(element));
    return list;
  }
  if (auto str = llvm::dyn_cast<StringAttr>(attr))
    return str.str();
  if (auto b = llvm::dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto f = llvm::dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto i = llvm::dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto ints = llvm::dyn_cast<DenseI64ArrayAttr>(attr)) {
    llvm::json::Array list;
    for (int64_t v : ints.asArrayRef())
      list.push_back(v);
    return list;
  }
  if (auto floats = llvm::dyn_cast<DenseF64ArrayAttr>(attr)) {
    llvm::json::Array list;
    for (double v : floats.asArrayRef())
      list.push_back(v);
    return list;
  }
  std::string text;
  llvm::raw_string_ostream(text) << attr;
  return text;
}

LogicalResult codegen::emitPipeline(
    ModuleOp pipelineModule, ArrayRef<OwningOpRef<ModuleOp>> rankModules,
    const ParameterValues &initialValues, const RankSettings &settings,
    OutputDirectory &outputDir) {
  pipeline::PipelineOp pipe = findPipeline(pipelineModule);
  if (!pipe)
    return failure();
  auto parameters =
      pipelineModule->getAttrOfType<ArrayAttr>(attrs::kParameters);

  const target::TargetBackend *backend =
      target::lookupTarget(settings.target.name);
  if (!backend)
    return pipelineModule.emitError("unknown target '")
           << settings.target.name << "'";
  for (const OwningOpRef<ModuleOp> &rankModule : rankModules) {
    int64_t rank =
        (*rankModule)->getAttrOfType<IntegerAttr>(attrs::kRank).getInt();
    std::string base = "rank" + std::to_string(rank);
    std::string object = outputDir.stagingPath(base + ".o");
    if (failed(backend->serializeObject(*rankModule, object, settings.target)))
      return failure();
    std::string error;
    bool linked =
        backend->linkExecutable({object}, outputDir.stagingPath(base), error);
    llvm::sys::fs::remove(object);
    if (!linked)
      return pipelineModule.emitError(error);

    SmallVector<StringRef> names;
    for (Attribute attr : parameters) {
      auto dict = llvm::cast<DictionaryAttr>(attr);
      // A parameter several virtual stages read (tied weights) starts out
      // the same on each rank holding one of them.
      if (llvm::any_of(dict.getAs<DenseI64ArrayAttr>("stages").asArrayRef(),
                       [&](int64_t stage) {
                         return stage >= 0 &&
                                stage < pipe.getNumVirtualStages() &&
                                pipe.getRankOf(stage) ==
                                    static_cast<int64_t>(rank);
                       }))
        names.push_back(dict.getAs<StringAttr>("name").getValue());
    }
    if (failed(writeWeights(pipelineModule,
                            outputDir.stagingPath(base + ".safetensors"),
                            names, initialValues)))
      return failure();
  }

  // The manifest: every number comes from the partition and the simulator.
  llvm::json::Object manifest{
      // The pipeline depth (--stages): the number of ranks.
      {"stages", static_cast<int64_t>(pipe.getRanks())},
      {"ranks", static_cast<int64_t>(rankModules.size())},
      {"chunks", static_cast<int64_t>(pipe.getChunks())},
      {"placement", llvm::json::Array(pipe.getPlacement())},
      {"microbatches", static_cast<int64_t>(pipe.getMicrobatches())},
      {"microbatch_size", settings.microbatchSize},
      {"schedule", pipe.getSchedule().str()},
      {"target", settings.target.name},
      // --target-cpu: what the rank code is compiled for and the features
      // each executable checks before it runs.
      {"target_cpu",
       llvm::json::Object{
           {"option", settings.target.cpu.option},
           {"cpu", settings.target.cpu.cpu},
           {"required_features",
            llvm::json::Array(settings.target.cpu.required)},
           {"vector_bits",
            static_cast<int64_t>(settings.target.cpu.vectorBits)}}},
      {"inference", settings.inference},
      {"precision", settings.precision},
      // The float32 the ranks compute with, not the double it came from.
      {"learning_rate",
       static_cast<double>(static_cast<float>(settings.learningRate))},
  };
  if (auto partition =
          pipelineModule->getAttrOfType<DictionaryAttr>(attrs::kPartition))
    manifest["partition"] = toJSON(partition);
  // The scheduling library's simulation the schedule phase recorded.
  llvm::json::Object prediction;
  if (std::optional<APFloat> step = pipe.getPredictedStepS())
    prediction["predicted_step_s"] = step->convertToDouble();
  if (std::optional<APFloat> bubble = pipe.getBubble())
    prediction["bubble"] = bubble->convertToDouble();
  if (std::optional<ArrayRef<double>> busy = pipe.getRankBusyS())
    prediction["rank_busy_s"] = llvm::json::Array(*busy);
  if (std::optional<ArrayRef<int64_t>> peak = pipe.getPeakLiveMicrobatches())
    prediction["peak_live_microbatches"] = llvm::json::Array(*peak);
  manifest["prediction"] = std::move(prediction);
  // Whether each micro-batch's backward runs as B then W: the schedule
  // needs it, --split-backward true or --weight-gradient-group asked for
  // it, or --split-backward auto found the step shorter for it.
  manifest["split_backward"] =
      pipe.walk([](pipeline::BackwardInputOp) {
            return WalkResult::interrupt();
          }).wasInterrupted();
  manifest["parameters"] = toJSON(parameters);
  // The static memory plan of every rank (slots, arena offsets, totals).
  MemoryPlanSettings memorySettings = memoryPlanSettingsFor(settings);
  FailureOr<std::vector<RankMemoryPlan>> memoryPlan =
      planPipelineMemory(pipelineModule, memorySettings);
  if (failed(memoryPlan))
    return failure();
  // The stage workspace each rank's lowering planned.
  for (const OwningOpRef<ModuleOp> &rankModule : rankModules) {
    int64_t rank =
        (*rankModule)->getAttrOfType<IntegerAttr>(attrs::kRank).getInt();
    auto bytes =
        (*rankModule)->getAttrOfType<IntegerAttr>(attrs::kWorkspaceBytes);
    for (RankMemoryPlan &plan : *memoryPlan)
      if (plan.rank == rank && bytes)
        plan.stageWorkspaceBytes = bytes.getInt();
  }
  manifest["memory_plan"] = memoryPlanToJSON(*memoryPlan, memorySettings);
  std::string error;
  if (!outputDir.writeFile("pipeline.json",
                           [&](llvm::raw_ostream &os) {
                             os << llvm::formatv(
                                 "{0:2}", llvm::json::Value(
                                              std::move(manifest)))
                                << "\n";
                           },
                           error) ||
      !outputDir.writeFile("launch",
                           [&](llvm::raw_ostream &os) {
                             os << rt::renderLaunchScript(
                                 static_cast<int>(rankModules.size()));
                           },
                           error))
    return pipelineModule.emitError(error);
  if (std::error_code ec = llvm::sys::fs::setPermissions(
          outputDir.stagingPath("launch"),
          llvm::sys::fs::all_read | llvm::sys::fs::all_exe |
              llvm::sys::fs::owner_write))
    return pipelineModule.emitError("cannot make 'launch' executable: ")
           << ec.message();
  return success();
}
