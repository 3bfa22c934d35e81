// The partition pass: turns the differentiated graph into a partitioning
// problem priced by the cost model, runs the chosen algorithm from the
// PipeccPartition library, and records the answer on the IR.
#include "PassUtils.h"
#include "pipecc/Analysis/BackwardSplit.h"
#include "pipecc/CostModel/DeviceProfile.h"
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Partition/Algorithms.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Support/Escape.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <limits>

namespace pipecc {
#define GEN_PASS_DEF_PARTITION
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;
using namespace pipecc::graph;

namespace {

int64_t bytesOf(Type type) {
  auto shaped = llvm::cast<ShapedType>(type);
  return shaped.getNumElements() *
         ((shaped.getElementTypeBitWidth() + 7) / 8);
}

/// The user-facing name of an op: its ONNX node name, else its op name.
std::string nodeName(Operation *op) {
  if (auto name = llvm::dyn_cast<NameLoc>(op->getLoc()))
    return name.getName().str();
  return op->getName().getStringRef().str();
}

/// Where a node sits and what it imported as, "node #3 of the model
/// (graph.relu)": the position the ONNX importer records in the location,
/// else the node's place among the stage operations.
std::string describeNode(ArrayRef<Operation *> ops, int position) {
  std::string text = "node ";
  FusedLoc fused;
  if (auto name = llvm::dyn_cast<NameLoc>(ops.front()->getLoc()))
    fused = llvm::dyn_cast<FusedLoc>(name.getChildLoc());
  IntegerAttr index =
      fused ? llvm::dyn_cast_or_null<IntegerAttr>(fused.getMetadata())
            : IntegerAttr();
  if (index)
    text += "#" + std::to_string(index.getInt()) + " of the model";
  else
    text += "#" + std::to_string(position) + " of the stage operations";
  text += " (";
  for (auto [i, op] : llvm::enumerate(ops))
    text += (i ? ", " : "") + op->getName().getStringRef().str();
  return text + ")";
}

/// Forward ops that run on a stage; parameters and constants are copied to
/// every stage that reads them instead.
bool isStageOp(Operation *op) {
  return op->hasAttr(attrs::kOpId) && !llvm::isa<ParamOp, ConstantOp>(op);
}

struct PartitionPass : pipecc::impl::PartitionBase<PartitionPass> {
  using PartitionBase::PartitionBase;

  scheduling::PlacementKind placementKindChosen =
      scheduling::PlacementKind::Linear;
  std::optional<BackwardSplit> backwardSplit;

  /// The placement the cuts are priced for: the option, else what the
  /// schedule's generator uses for `chunks`, else linear (one chunk only).
  FailureOr<scheduling::PlacementKind> placementKind(ModuleOp module) {
    using scheduling::PlacementKind;
    if (!placement.empty()) {
      for (PlacementKind kind : {PlacementKind::Linear,
                                 PlacementKind::Interleaved,
                                 PlacementKind::VShape})
        if (placement == scheduling::placementName(kind)) {
          if (kind == PlacementKind::Linear && chunks != 1)
            return module.emitError("pipecc-partition: placement=linear "
                                    "needs chunks=1, got chunks=")
                   << static_cast<int64_t>(chunks);
          if (kind == PlacementKind::VShape && chunks != 2)
            return module.emitError("pipecc-partition: placement=v needs "
                                    "chunks=2, got chunks=")
                   << static_cast<int64_t>(chunks);
          return kind;
        }
      return module.emitError("pipecc-partition: unknown placement '")
             << placement << "'; expected linear, interleaved or v";
    }
    if (!schedule.empty()) {
      const scheduling::ScheduleGenerator *generator =
          scheduling::lookupGenerator(schedule);
      if (!generator)
        return module.emitError("pipecc-partition: unknown schedule '")
               << schedule << "'";
      scheduling::Result<PlacementKind> kind =
          generator->placementFor(static_cast<int>(chunks));
      if (!kind.ok())
        return module.emitError("pipecc-partition: ") << kind.message();
      return *kind;
    }
    if (chunks != 1)
      return module.emitError("pipecc-partition: chunks=")
             << static_cast<int64_t>(chunks)
             << " needs a placement (linear, interleaved or v) or a "
                "schedule to take it from";
    return PlacementKind::Linear;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp func = getModelFunction(module);
    if (!func)
      return signalPassFailure();
    std::string profileError;
    const cost::DeviceProfile *profile =
        cost::loadDeviceProfile(device, profileError);
    if (!profile) {
      module.emitError(profileError);
      return signalPassFailure();
    }
    if (stages < 1 || stages > 4096) {
      module.emitError("--stages must be in [1, 4096], got ")
          << static_cast<int64_t>(stages);
      return signalPassFailure();
    }
    if (chunks < 1 || chunks > 64) {
      module.emitError("pipecc-partition: chunks must be in [1, 64], got ")
          << static_cast<int64_t>(chunks);
      return signalPassFailure();
    }
    FailureOr<scheduling::PlacementKind> kind = placementKind(module);
    if (failed(kind))
      return signalPassFailure();
    placementKindChosen = *kind;
    const int64_t virtualStages = stages * chunks;

    // The nodes of the problem: ONNX nodes in program order. The ops one
    // node imported as (a Gemm's matmul and add) share its location and
    // stay on one stage, so cuts fall between nodes the user can name. The
    // location holds the node's position too: nodes sharing a name stay
    // apart.
    Block &body = func.front();
    SmallVector<SmallVector<Operation *, 2>> nodes;
    DenseMap<Operation *, int> nodeOf;
    std::optional<Location> previousLoc;
    for (Operation &op : body.without_terminator()) {
      if (!isStageOp(&op))
        continue;
      bool named = llvm::isa<NameLoc>(op.getLoc());
      if (nodes.empty() || !named || op.getLoc() != previousLoc)
        nodes.emplace_back();
      nodes.back().push_back(&op);
      nodeOf[&op] = nodes.size() - 1;
      previousLoc = named ? std::optional<Location>(op.getLoc()) : std::nullopt;
    }
    DenseMap<int64_t, int> nodeOfOpId;
    for (auto [op, node] : nodeOf)
      nodeOfOpId[op->getAttrOfType<IntegerAttr>(attrs::kOpId).getInt()] = node;
    if (nodes.empty()) {
      func.emitError("the model has no operations to partition; run "
                     "autodiff first");
      return signalPassFailure();
    }
    if (static_cast<int64_t>(nodes.size()) < virtualStages) {
      func.emitError("cannot cut ")
          << nodes.size() << " nodes into " << virtualStages
          << (chunks > 1 ? " virtual stages" : " stages");
      return signalPassFailure();
    }

    partition::Problem problem;
    problem.stages = virtualStages;
    if (chunks > 1 || placementKindChosen != scheduling::PlacementKind::Linear)
      for (auto [rank, chunk] :
           scheduling::ScheduleProblem::withPlacement(
               placementKindChosen, stages, chunks, 1, true)
               .placement)
        problem.placement.push_back(rank);
    problem.link = {profile->name, profile->linkBytesPerSecond,
                    profile->linkLatencySeconds};
    problem.ops.resize(nodes.size());
    for (auto [index, ops] : llvm::enumerate(nodes)) {
      problem.ops[index].name = nodeName(ops.front());
      for (Operation *op : ops)
        problem.ops[index].forwardSeconds +=
            cost::estimateSeconds(op, *profile, stages, microbatches);
    }

    // Backward ops cost their forward node; BackwardSplit says how far back
    // each one's result must go, which makes it B or W once the cuts are
    // known (the rule split-stages applies to the same analysis). A
    // parameter's gradient accumulation belongs to its only reader; one
    // with readers on several nodes is summed per holding stage by
    // split-stages, outside the problem.
    DenseMap<Operation *, int> paramNode;
    for (auto param : body.getOps<ParamOp>()) {
      std::optional<int> only;
      bool several = false;
      for (Operation *user : param->getUsers())
        if (auto it = nodeOf.find(user); it != nodeOf.end()) {
          several = several || (only && *only != it->second);
          only = it->second;
        }
      if (only && !several)
        paramNode[param] = *only;
    }
    auto positionOf = [&](Operation *op) -> std::optional<int> {
      if (auto it = nodeOf.find(op); it != nodeOf.end())
        return it->second;
      if (auto it = paramNode.find(op); it != paramNode.end())
        return it->second;
      return std::nullopt;
    };
    backwardSplit.emplace(func, positionOf);
    // Activations are kept by the stage whose backward reads them (a value
    // received from an earlier stage is kept where it is read).
    DenseSet<std::pair<Value, int>> saved;
    for (Operation &op : body.without_terminator()) {
      std::optional<int> node = backwardSplit->positionOf(&op);
      if (!node)
        continue;
      double seconds =
          cost::estimateSeconds(&op, *profile, stages, microbatches);
      auto &opCost = problem.ops[*node];
      opCost.backward.push_back({backwardSplit->reach(&op), seconds});
      for (Value operand : op.getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && nodeOf.count(def) && saved.insert({operand, *node}).second)
          opCost.activationBytes += bytesOf(operand.getType());
    }

    // Parameter bytes go to the node reading the parameter; one read by
    // several nodes (tied weights) is a shared parameter, which costs each
    // stage holding a reader its bytes and, if the readers span stages, an
    // all-reduce. Tensors flowing between nodes become the problem's edges.
    problem.microbatches = static_cast<int>(
        std::clamp<int64_t>(microbatches, 1, std::numeric_limits<int>::max()));
    for (Operation &op : body.without_terminator()) {
      if (auto param = llvm::dyn_cast<ParamOp>(op)) {
        std::vector<int> readers;
        for (Operation *user : param->getUsers())
          if (auto it = nodeOf.find(user); it != nodeOf.end())
            readers.push_back(it->second);
        llvm::sort(readers);
        readers.erase(std::unique(readers.begin(), readers.end()),
                      readers.end());
        if (readers.size() == 1)
          problem.ops[readers.front()].parameterBytes +=
              bytesOf(param.getType());
        else if (readers.size() > 1)
          problem.sharedParameters.push_back(
              {std::move(readers), bytesOf(param.getType())});
      }
    }
    for (auto [index, ops] : llvm::enumerate(nodes))
      for (Operation *op : ops)
        for (Value result : op->getResults()) {
          partition::Tensor tensor{static_cast<int>(index), {},
                                   bytesOf(result.getType())};
          for (Operation *user : result.getUsers())
            if (auto it = nodeOf.find(user);
                it != nodeOf.end() && it->second != static_cast<int>(index) &&
                !llvm::is_contained(tensor.consumers, it->second))
              tensor.consumers.push_back(it->second);
          if (!tensor.consumers.empty())
            problem.tensors.push_back(std::move(tensor));
        }

    partition::Result<partition::Partition> result =
        solve(problem, nodes, func);
    if (!result.ok()) {
      if (!result.message().empty())
        func.emitError("cannot partition: ") << result.message();
      return signalPassFailure();
    }
    record(module, nodes, problem, *result, *profile);
  }

  partition::Result<partition::Partition>
  solve(const partition::Problem &problem,
        ArrayRef<SmallVector<Operation *, 2>> nodes, func::FuncOp func) {
    if (!cutAfter.empty()) {
      // A node name may cover several ops (a Gemm imports as a matmul and an
      // add); a cut after it falls after its last op.
      std::vector<int> cuts;
      llvm::StringSet<> seen;
      for (const std::string &name : cutAfter)
        if (!seen.insert(name).second) {
          func.emitError("--cut-after names node ")
              << support::quote(name) << " twice";
          return partition::Diagnostic{""};
        }
      for (const std::string &name : cutAfter) {
        SmallVector<int> matches;
        for (auto [index, op] : llvm::enumerate(problem.ops))
          if (op.name == name)
            matches.push_back(index);
        if (matches.empty()) {
          func.emitError("--cut-after names node ")
              << support::quote(name)
              << ", which is not a stage operation of the model"
              << closeMatches(problem, name);
          return partition::Diagnostic{""};
        }
        if (matches.size() > 1) {
          // A cut after one of them is a guess: the user must rename.
          std::string candidates;
          for (auto [i, index] : llvm::enumerate(matches))
            candidates += (i ? ", " : "") + describeNode(nodes[index], index);
          func.emitError("--cut-after names node ")
              << support::quote(name) << ", but " << matches.size()
              << " nodes have that name: " << candidates
              << "; give the nodes distinct names in the model";
          return partition::Diagnostic{""};
        }
        cuts.push_back(matches.front());
      }
      return partition::manual(problem, cuts);
    }
    if (strategy == "dp")
      return partition::dynamicProgramming(problem);
    if (strategy == "uniform")
      return partition::uniform(problem);
    func.emitError("unknown partition strategy '")
        << strategy << "'; expected dp or uniform";
    return partition::Diagnostic{""};
  }

  /// "; did you mean 'a' or 'b'?" for the node names closest to `name`, or
  /// nothing when no name is close.
  static std::string closeMatches(const partition::Problem &problem,
                                  StringRef name) {
    unsigned limit = std::max<unsigned>(2, name.size() / 3);
    SmallVector<std::pair<unsigned, StringRef>> close;
    llvm::StringSet<> seen;
    for (const partition::OpCost &op : problem.ops) {
      unsigned distance =
          name.edit_distance(op.name, /*AllowReplacements=*/true, limit + 1);
      if (distance <= limit && seen.insert(op.name).second)
        close.push_back({distance, op.name});
    }
    if (close.empty())
      return "";
    llvm::stable_sort(close,
                      [](auto &a, auto &b) { return a.first < b.first; });
    if (close.size() > 3)
      close.truncate(3);
    std::string text = "; did you mean ";
    for (auto [i, entry] : llvm::enumerate(close))
      text += std::string(i == 0                  ? ""
                          : i + 1 == close.size() ? " or "
                                                  : ", ") +
              support::quote(entry.second);
    return text + "?";
  }

  void record(ModuleOp module, ArrayRef<SmallVector<Operation *, 2>> nodes,
              const partition::Problem &problem,
              const partition::Partition &partition,
              const cost::DeviceProfile &profile) {
    Builder b(&getContext());
    int stage = 0;
    for (auto [index, ops] : llvm::enumerate(nodes)) {
      for (Operation *op : ops)
        op->setAttr(attrs::kStage, b.getI64IntegerAttr(stage));
      if (stage < static_cast<int>(partition.cutsAfter.size()) &&
          partition.cutsAfter[stage] == static_cast<int>(index))
        ++stage;
    }
    SmallVector<Attribute> cuts, stageCosts;
    for (int cut : partition.cutsAfter)
      cuts.push_back(b.getStringAttr(problem.ops[cut].name));
    auto stageStartOf = [&](int node) {
      for (const partition::StageCost &s : partition.stages)
        if (node >= s.firstOp && node <= s.lastOp)
          return s.firstOp;
      return 0;
    };
    for (const partition::StageCost &s : partition.stages)
      stageCosts.push_back(b.getDictionaryAttr({
          b.getNamedAttr("rank", b.getI64IntegerAttr(s.rank)),
          b.getNamedAttr("stash_bytes",
                         b.getI64IntegerAttr(backwardSplit->stashBytes(
                             s.firstOp, s.lastOp, stageStartOf))),
          b.getNamedAttr("first", b.getStringAttr(problem.ops[s.firstOp].name)),
          b.getNamedAttr("last", b.getStringAttr(problem.ops[s.lastOp].name)),
          // Each stage function call costs the profile's call overhead.
          b.getNamedAttr("forward_s",
                         b.getF64FloatAttr(s.forwardSeconds +
                                           profile.stageCallSeconds)),
          b.getNamedAttr("backward_input_s",
                         b.getF64FloatAttr(s.backwardInputSeconds +
                                           profile.stageCallSeconds)),
          // W (or the fused backward) adds its weight gradients into the
          // step's accumulators itself (pipecc-accumulate-gradients: beta =
          // 1 in the GEMM), not in a pass of the runtime's.
          b.getNamedAttr("backward_weight_s",
                         b.getF64FloatAttr(s.backwardWeightSeconds +
                                           profile.stageCallSeconds)),
          b.getNamedAttr("communication_s",
                         b.getF64FloatAttr(s.communicationSeconds)),
          b.getNamedAttr("total_s", b.getF64FloatAttr(s.totalSeconds)),
          b.getNamedAttr("activation_bytes",
                         b.getI64IntegerAttr(s.activationBytes)),
          b.getNamedAttr("parameter_bytes",
                         b.getI64IntegerAttr(s.parameterBytes)),
          b.getNamedAttr("bytes_in", b.getI64IntegerAttr(s.bytesIn)),
          b.getNamedAttr("bytes_out", b.getI64IntegerAttr(s.bytesOut)),
      }));
    std::string how = cutAfter.empty() ? strategy.getValue() : "manual";
    module->setAttr(
        attrs::kPartition,
        b.getDictionaryAttr({
            b.getNamedAttr("strategy", b.getStringAttr(how)),
            b.getNamedAttr("device", b.getStringAttr(profile.name)),
            b.getNamedAttr("stages", b.getI64IntegerAttr(stages)),
            b.getNamedAttr("chunks", b.getI64IntegerAttr(chunks)),
            b.getNamedAttr("placement",
                           b.getStringAttr(scheduling::placementName(
                               placementKindChosen))),
            b.getNamedAttr("cuts_after", b.getArrayAttr(cuts)),
            b.getNamedAttr("bottleneck_s",
                           b.getF64FloatAttr(partition.bottleneck)),
            b.getNamedAttr("stage_costs", b.getArrayAttr(stageCosts)),
        }));
  }
};

} // namespace
