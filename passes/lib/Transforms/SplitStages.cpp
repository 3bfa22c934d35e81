// Outlines the differentiated, partitioned @main into per-stage forward, B
// and W functions that exchange named tensors. Which op runs where was
// decided before (pipeline.stage, graph.grad_of); this pass is mechanism.
#include "PassUtils.h"
#include "pipecc/Analysis/BackwardSplit.h"
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Dialect/Pipeline/PipelineAttrs.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

#include <functional>

namespace pipecc {
#define GEN_PASS_DEF_SPLITSTAGES
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;
using namespace pipecc::graph;

namespace {

enum Phase { Forward = 0, BackwardInput = 1, BackwardWeight = 2 };
const char *const kPhaseNames[] = {"forward", "backward_input",
                                   "backward_weight"};

/// Where an op runs: a stage and one of its three functions.
struct Group {
  int stage;
  Phase phase;
  bool operator==(const Group &o) const {
    return stage == o.stage && phase == o.phase;
  }
};

/// Parameters and constants belong to no stage: each function that reads a
/// parameter takes it as an argument, and constants are copied.
bool isFloating(Operation *op) { return llvm::isa<ParamOp, ConstantOp>(op); }

struct SplitStagesPass : pipecc::impl::SplitStagesBase<SplitStagesPass> {
  using SplitStagesBase::SplitStagesBase;

  void runOnOperation() override {
    func::FuncOp main = getModelFunction(getOperation());
    if (!main || failed(split(main)))
      return signalPassFailure();
  }

  int numStages = 0;
  DenseMap<Operation *, Group> groupOf;
  /// The stages reading each parameter, ascending (stage 0 for one nobody
  /// reads). Each holds a copy; a parameter held by several stages (tied
  /// weights) has one local gradient per holder, which the ranks all-reduce.
  llvm::StringMap<SmallVector<int, 1>> paramStages;
  /// For parameters held by several stages: each holder's local gradient.
  llvm::StringMap<SmallVector<std::pair<int, Value>>> localGradients;
  /// Per function: values it returns that it does not compute (parameter
  /// gradients it receives, constant gradients).
  SmallVector<llvm::SetVector<Value>> extraResults;
  DenseMap<Operation *, int64_t> position;
  /// The label count of a counted-mean loss (null for other losses).
  Value lossCount;
  DenseMap<Value, std::string> names;
  // Per stage: tensors received from / sent to the previous (forward) or
  // next (backward) stage.
  SmallVector<llvm::SetVector<Value>> recvF, sendF, recvB, sendB;
  // Per function (stage * 3 + phase): what it reads and produces.
  SmallVector<llvm::SetVector<Value>> inputs, outputs, dataArgs;
  SmallVector<llvm::SetVector<Operation *>> params;
  /// Inference: per function, the graph outputs it returns, in @main's
  /// order, with their ONNX names (one value can be several outputs).
  SmallVector<SmallVector<std::pair<Value, std::string>>> graphOutputs;

  unsigned index(Group g) { return g.stage * 3 + g.phase; }

  int ownerStage(StringRef param) {
    auto it = paramStages.find(param);
    return it == paramStages.end() ? 0 : it->second.front();
  }

  /// Whether `value`, returned by a function of `stage`, is the gradient
  /// that stage accumulates for `param`.
  bool isLocalGradient(StringRef param, Value value, int stage) {
    auto shared = localGradients.find(param);
    if (shared == localGradients.end())
      return ownerStage(param) == stage;
    return llvm::is_contained(shared->second, std::make_pair(stage, value));
  }

  LogicalResult assignGroups(func::FuncOp main) {
    Block &body = main.front();
    DenseMap<int64_t, Operation *> opById;
    for (Operation &op : body.without_terminator())
      if (auto id = op.getAttrOfType<IntegerAttr>(attrs::kOpId))
        opById[id.getInt()] = &op;
    // Stages of forward ops, and of parameters through their readers.
    DenseMap<Operation *, int> stageOf;
    for (Operation &op : body.without_terminator()) {
      auto stage = op.getAttrOfType<IntegerAttr>(attrs::kStage);
      if (!stage)
        continue;
      if (stage.getInt() < 0 || stage.getInt() > 4096)
        return op.emitError("pipeline stage ")
               << stage.getInt() << " is out of range";
      stageOf[&op] = stage.getInt();
      numStages = std::max<int>(numStages, stage.getInt() + 1);
    }
    // A model that only passes on inputs and constants (Identity,
    // Constant) still runs forward: as one empty stage.
    if (numStages == 0 && inference)
      numStages = 1;
    if (numStages == 0)
      return main.emitError("no op has a pipeline stage; run the partition "
                            "first");
    for (Operation &op : body.without_terminator()) {
      auto param = llvm::dyn_cast<ParamOp>(op);
      if (!param)
        continue;
      SmallVector<int, 1> &stages = paramStages[param.getParamName()];
      for (Operation *user : param->getUsers())
        if (auto it = stageOf.find(user); it != stageOf.end())
          stages.push_back(it->second);
      llvm::sort(stages);
      stages.erase(std::unique(stages.begin(), stages.end()), stages.end());
      if (stages.empty())
        stages.push_back(0);
      stageOf[param] = stages.front();
    }
    DenseMap<Operation *, int> holderOf;
    splitSharedGradients(main, opById, stageOf, holderOf);
    for (Operation &op : body.without_terminator())
      position[&op] = position.size();

    // Backward ops run on their forward op's stage, as B or W as
    // BackwardSplit says (the analysis the partition prices with): B if what
    // they compute must reach an earlier stage, or an earlier holder of the
    // parameter whose gradient it is. The per-holder sums of a shared
    // parameter's gradient run in their holder's W.
    BackwardSplit split(main, [&](Operation *op) -> std::optional<int> {
      if (auto param = llvm::dyn_cast<ParamOp>(op);
          param && paramStages.lookup(param.getParamName()).size() > 1)
        return std::nullopt;
      if (auto it = stageOf.find(op); it != stageOf.end())
        return it->second;
      return std::nullopt;
    });
    for (Operation &op : body.without_terminator()) {
      if (isFloating(&op))
        continue;
      if (auto stage = stageOf.find(&op); stage != stageOf.end()) {
        groupOf[&op] = {stage->second, Forward};
        continue;
      }
      auto gradOf = op.getAttrOfType<IntegerAttr>(attrs::kGradOf);
      if (!gradOf)
        return op.emitError("op is neither placed on a stage nor part of the "
                            "backward pass");
      if (auto holder = holderOf.find(&op); holder != holderOf.end()) {
        groupOf[&op] = {holder->second, BackwardWeight};
        continue;
      }
      std::optional<int> stage = split.positionOf(&op);
      if (!stage)
        return op.emitError("backward op refers to an unknown forward op ")
               << gradOf.getInt();
      groupOf[&op] = {*stage, split.isBackwardInput(&op, *stage)
                                  ? BackwardInput
                                  : BackwardWeight};
    }
    return success();
  }

  /// A parameter read on several stages: autodiff summed the contributions
  /// of its uses into one gradient. Re-sums them per holder (a contribution
  /// computed on stage t goes to the nearest holder at or before t, where
  /// its use is), so each holder accumulates its local gradient and the
  /// ranks all-reduce those. The new sums run in their holder's W function
  /// (`holderOf`); the old chain of sums is erased.
  void splitSharedGradients(func::FuncOp main,
                            const DenseMap<int64_t, Operation *> &opById,
                            const DenseMap<Operation *, int> &stageOf,
                            DenseMap<Operation *, int> &holderOf) {
    Block &body = main.front();
    auto ret = llvm::cast<func::ReturnOp>(body.getTerminator());
    auto gradOfId = [](Operation *op) -> std::optional<int64_t> {
      if (auto id = op ? op->getAttrOfType<IntegerAttr>(attrs::kGradOf)
                       : IntegerAttr())
        return id.getInt();
      return std::nullopt;
    };
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      auto grad = main.getResultAttrOfType<StringAttr>(i, attrs::kGrad);
      if (!grad)
        continue;
      SmallVector<int, 1> holders = paramStages.lookup(grad.getValue());
      if (holders.size() < 2)
        continue;
      Operation *paramOp = nullptr;
      for (auto param : body.getOps<ParamOp>())
        if (param.getParamName() == grad.getValue())
          paramOp = param;
      int64_t paramId =
          paramOp->getAttrOfType<IntegerAttr>(attrs::kOpId).getInt();

      // The contributions, in the order autodiff added them.
      SmallVector<Value> contributions;
      SmallVector<Operation *> chain;
      std::function<void(Value)> collect = [&](Value value) {
        auto add = value.getDefiningOp<AddOp>();
        if (add && gradOfId(add) == paramId) {
          chain.push_back(add);
          collect(add.getLhs());
          collect(add.getRhs());
          return;
        }
        contributions.push_back(value);
      };
      collect(ret.getOperand(i));
      auto stageOfValue = [&](Value value) {
        std::optional<int64_t> id = gradOfId(value.getDefiningOp());
        Operation *forward = id ? opById.lookup(*id) : nullptr;
        auto it = forward ? stageOf.find(forward) : stageOf.end();
        return it == stageOf.end() ? holders.front() : it->second;
      };
      SmallVector<SmallVector<Value>> perHolder(holders.size());
      for (Value contribution : contributions) {
        int stage = stageOfValue(contribution);
        size_t holder = 0;
        for (size_t h = 0; h < holders.size(); ++h)
          if (holders[h] <= stage)
            holder = h;
        perHolder[holder].push_back(contribution);
      }

      OpBuilder builder(ret);
      auto tag = [&](Operation *op, int holder) {
        op->setAttr(attrs::kGradOf, builder.getI64IntegerAttr(paramId));
        holderOf[op] = holder;
      };
      SmallVector<std::pair<int, Value>> &locals =
          localGradients[grad.getValue()];
      for (auto [h, values] : llvm::enumerate(perHolder)) {
        Value sum;
        if (values.empty()) {
          // Only a constant is left here: a zero gradient (the use on this
          // stage carries none).
          auto type = llvm::cast<RankedTensorType>(paramOp->getResult(0).getType());
          sum = builder.create<ConstantOp>(
              paramOp->getLoc(),
              DenseElementsAttr::get(
                  type, builder.getFloatAttr(type.getElementType(), 0.0)));
        }
        for (Value value : values) {
          if (!sum) {
            sum = value;
            continue;
          }
          auto add = builder.create<AddOp>(paramOp->getLoc(), sum, value);
          tag(add, holders[h]);
          sum = add.getResult();
        }
        locals.push_back({holders[h], sum});
      }
      ret->setOperand(i, locals.front().second);
      for (Operation *op : chain)
        if (op->use_empty())
          op->erase();
    }
  }

  void nameValues(func::FuncOp main) {
    for (auto [index, arg] : llvm::enumerate(main.getArguments()))
      if (auto name = main.getArgAttrOfType<StringAttr>(index, attrs::kInput))
        names[arg] = name.str();
      else
        names[arg] = "input" + std::to_string(index);
    // Generated names must not collide with the model's own input and
    // parameter names, which name buffers too.
    llvm::StringSet<> taken;
    for (auto &[value, name] : names)
      taken.insert(name);
    main.walk([&](ParamOp param) { taken.insert(param.getParamName()); });
    int64_t counter = 0;
    for (Operation &op : main.front().without_terminator()) {
      auto group = groupOf.find(&op);
      std::string prefix =
          group != groupOf.end() && group->second.phase != Forward ? "g" : "a";
      for (Value result : op.getResults()) {
        std::string name = prefix + std::to_string(counter++);
        while (taken.contains(name))
          name = "_" + name;
        taken.insert(name);
        names[result] = name;
      }
    }
  }

  /// Records that `value` must be available to function `to`.
  LogicalResult route(Value value, Group to, Operation *user) {
    Operation *def = value.getDefiningOp();
    if (!def) {
      dataArgs[index(to)].insert(value);
      return success();
    }
    if (auto param = llvm::dyn_cast<ParamOp>(def)) {
      params[index(to)].insert(param);
      return success();
    }
    if (llvm::isa<ConstantOp>(def))
      return success();
    Group from = groupOf.lookup(def);
    if (from == to)
      return success();
    outputs[index(from)].insert(value);
    inputs[index(to)].insert(value);
    if (from.phase == Forward) {
      if (from.stage > to.stage)
        return user->emitError("reads a forward value of a later stage");
      for (int s = from.stage; s < to.stage; ++s) {
        sendF[s].insert(value);
        recvF[s + 1].insert(value);
      }
      return success();
    }
    if (from.stage < to.stage ||
        (from.phase == BackwardWeight &&
         !(from.stage == to.stage && to.phase == BackwardWeight)))
      return user->emitError("reads a gradient that its stage cannot have "
                             "received");
    for (int s = from.stage; s > to.stage; --s) {
      sendB[s].insert(value);
      recvB[s - 1].insert(value);
    }
    return success();
  }

  LogicalResult split(func::FuncOp main) {
    if (failed(assignGroups(main)))
      return failure();
    nameValues(main);
    unsigned numFunctions = numStages * 3;
    recvF.resize(numStages);
    sendF.resize(numStages);
    recvB.resize(numStages);
    sendB.resize(numStages);
    inputs.resize(numFunctions);
    outputs.resize(numFunctions);
    dataArgs.resize(numFunctions);
    params.resize(numFunctions);
    graphOutputs.resize(numFunctions);

    Block &body = main.front();
    for (Operation &op : body.without_terminator()) {
      auto group = groupOf.find(&op);
      if (group == groupOf.end())
        continue;
      for (Value operand : op.getOperands())
        if (failed(route(operand, group->second, &op)))
          return failure();
    }
    // A parameter no op reads still belongs to the checkpoint: stage 0's
    // forward function takes it, so rank 0 loads it and saves it.
    for (Operation &op : body.without_terminator())
      if (auto param = llvm::dyn_cast<ParamOp>(op); param && param->use_empty())
        params[index({0, Forward})].insert(param);

    auto ret = llvm::cast<func::ReturnOp>(body.getTerminator());
    if (inference)
      return splitInference(main, ret);

    // What @main returns: the loss, then parameter gradients.
    // One value can be the gradient of several parameters (y = a + b gives
    // a and b the same gradient).
    DenseMap<Value, SmallVector<std::string, 1>> paramGradOf;
    Value loss;
    extraResults.resize(numFunctions);
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      Value value = ret.getOperand(i);
      auto grad = main.getResultAttrOfType<StringAttr>(i, attrs::kGrad);
      if (!grad) {
        if (i == 0)
          loss = value;
        else if (main.getResultAttr(i, attrs::kLossCount))
          lossCount = value;
        continue;
      }
      // The W function of the parameter's stage returns the gradient; it
      // computes it, receives it from a later stage, or (for a constant
      // gradient of a parameter the loss does not reach) copies it. Each
      // holder of a shared parameter does so for its local gradient.
      SmallVector<std::pair<int, Value>> owners{
          {ownerStage(grad.getValue()), value}};
      if (auto shared = localGradients.find(grad.getValue());
          shared != localGradients.end())
        owners.assign(shared->second.begin(), shared->second.end());
      for (auto [stage, local] : owners) {
        paramGradOf[local].push_back(grad.str());
        Group owner{stage, BackwardWeight};
        Operation *def = local.getDefiningOp();
        auto from = def ? groupOf.find(def) : groupOf.end();
        if (from != groupOf.end() && from->second.stage == owner.stage) {
          outputs[index(from->second)].insert(local);
          continue;
        }
        if (from != groupOf.end() &&
            failed(route(local, owner, ret.getOperation())))
          return failure();
        extraResults[index(owner)].insert(local);
      }
    }
    if (!loss || !loss.getDefiningOp() || !groupOf.count(loss.getDefiningOp()))
      return main.emitError("the loss must be computed by a stage op");
    outputs[index(groupOf[loss.getDefiningOp()])].insert(loss);
    if (lossCount) {
      if (!lossCount.getDefiningOp() ||
          !groupOf.count(lossCount.getDefiningOp()))
        return main.emitError("the loss's label count must be computed by a "
                              "stage op");
      outputs[index(groupOf[lossCount.getDefiningOp()])].insert(lossCount);
    }

    recordModuleInterface(main);
    OpBuilder builder(main);
    for (int stage = 0; stage < numStages; ++stage)
      for (Phase phase : {Forward, BackwardInput, BackwardWeight})
        buildFunction(builder, main, {stage, phase}, loss, paramGradOf);
    main.erase();
    return recordStageTable();
  }

  /// Inference: @main's results are the graph outputs; each is returned by
  /// the forward function of the stage computing it (stage 0 for an input,
  /// a parameter or a constant).
  LogicalResult splitInference(func::FuncOp main, func::ReturnOp ret) {
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      Value value = ret.getOperand(i);
      auto name = main.getResultAttrOfType<StringAttr>(i, attrs::kOutput);
      Operation *def = value.getDefiningOp();
      auto from = def ? groupOf.find(def) : groupOf.end();
      Group owner{from != groupOf.end() ? from->second.stage : 0, Forward};
      if (failed(route(value, owner, ret.getOperation())))
        return failure();
      graphOutputs[index(owner)].push_back(
          {value, name ? name.str() : "output" + std::to_string(i)});
    }
    recordModuleInterface(main);
    OpBuilder builder(main);
    DenseMap<Value, SmallVector<std::string, 1>> noGradients;
    for (int stage = 0; stage < numStages; ++stage)
      buildFunction(builder, main, {stage, Forward}, Value(), noGradients);
    main.erase();
    return recordStageTable();
  }

  /// The typed contract later passes read through readStageTable: each
  /// virtual stage's functions, rank, chunk and the partition's costs for
  /// it (unit seconds on one linear rank per stage without a partition).
  LogicalResult recordStageTable() {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    int64_t ranks = numStages, chunks = 1;
    std::string placement = "linear", device;
    ArrayAttr costs;
    if (auto partition =
            module->getAttrOfType<DictionaryAttr>(attrs::kPartition)) {
      auto ranksAttr = partition.getAs<IntegerAttr>("stages");
      auto chunksAttr = partition.getAs<IntegerAttr>("chunks");
      auto placementAttr = partition.getAs<StringAttr>("placement");
      auto deviceAttr = partition.getAs<StringAttr>("device");
      costs = partition.getAs<ArrayAttr>("stage_costs");
      if (!ranksAttr || !chunksAttr || !placementAttr || !deviceAttr ||
          !costs)
        return module.emitError("malformed ")
               << attrs::kPartition
               << ": it needs stages, chunks, placement, device and "
                  "stage_costs";
      ranks = ranksAttr.getInt();
      chunks = chunksAttr.getInt();
      placement = placementAttr.getValue().str();
      device = deviceAttr.getValue().str();
      if (static_cast<int64_t>(costs.size()) != numStages ||
          ranks * chunks != numStages)
        return module.emitError("the partition describes ")
               << costs.size() << " virtual stages on " << ranks
               << " ranks x " << chunks
               << " chunks, but the ops are placed on " << numStages;
    }
    SmallVector<Attribute> stages;
    for (int q = 0; q < numStages; ++q) {
      auto cost = pipeline::StageCostAttr::get(ctx, 1, 1, 1, 0, 0, 0, 0);
      int64_t rank = q, chunk = 0;
      if (costs) {
        auto entry = llvm::dyn_cast<DictionaryAttr>(costs[q]);
        auto f64 = [&](StringRef key) {
          auto value = entry ? entry.getAs<FloatAttr>(key) : FloatAttr();
          return value ? value.getValueAsDouble() : -1.0;
        };
        auto i64 = [&](StringRef key) {
          auto value = entry ? entry.getAs<IntegerAttr>(key) : IntegerAttr();
          return value ? value.getInt() : int64_t(-1);
        };
        cost = pipeline::StageCostAttr::getChecked(
            [&] { return module.emitError(); }, ctx,
            FloatAttr::get(Float64Type::get(ctx), f64("forward_s")),
            FloatAttr::get(Float64Type::get(ctx), f64("backward_input_s")),
            FloatAttr::get(Float64Type::get(ctx), f64("backward_weight_s")),
            i64("activation_bytes"), i64("stash_bytes"),
            i64("parameter_bytes"), i64("bytes_out"));
        if (!cost)
          return failure();
        rank = i64("rank");
        // The chunk: how many of this rank's stages come before q.
        chunk = 0;
        for (int p = 0; p < q; ++p)
          if (auto other = llvm::dyn_cast<DictionaryAttr>(costs[p]);
              other && other.getAs<IntegerAttr>("rank") &&
              other.getAs<IntegerAttr>("rank").getInt() == rank)
            ++chunk;
      }
      std::string prefix = "stage" + std::to_string(q) + "_";
      auto symbol = [&](Phase phase) {
        return inference && phase != Forward
                   ? FlatSymbolRefAttr()
                   : FlatSymbolRefAttr::get(ctx, prefix + kPhaseNames[phase]);
      };
      auto stage = pipeline::VirtualStageAttr::getChecked(
          [&] { return module.emitError(); }, ctx, int64_t(q), rank, chunk,
          symbol(Forward), symbol(BackwardInput), symbol(BackwardWeight),
          cost);
      if (!stage)
        return failure();
      stages.push_back(stage);
    }
    auto table = pipeline::StageTableAttr::getChecked(
        [&] { return module.emitError(); }, ctx, ranks, chunks,
        StringRef(placement), StringRef(device), ArrayAttr::get(ctx, stages));
    if (!table)
      return failure();
    module->setAttr(pipeline::kStageTableAttrName, table);
    return success();
  }

  void recordModuleInterface(func::FuncOp main) {
    Builder b(&getContext());
    SmallVector<Attribute> paramInfo, inputInfo;
    for (Operation &op : main.front().without_terminator()) {
      auto param = llvm::dyn_cast<ParamOp>(op);
      if (!param)
        continue;
      SmallVector<int, 1> holders = paramStages.lookup(param.getParamName());
      SmallVector<int64_t> stages(holders.begin(), holders.end());
      paramInfo.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("name", param.getParamNameAttr()),
           b.getNamedAttr("stages", b.getDenseI64ArrayAttr(stages)),
           b.getNamedAttr("type", TypeAttr::get(param.getType())),
           b.getNamedAttr("trainable",
                          b.getBoolAttr(!inference && param.getTrainable()))}));
    }
    for (Value arg : main.getArguments())
      inputInfo.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("name", b.getStringAttr(names[arg])),
           b.getNamedAttr("type", TypeAttr::get(arg.getType()))}));
    getOperation()->setAttr(attrs::kParameters, b.getArrayAttr(paramInfo));
    getOperation()->setAttr(attrs::kInputs, b.getArrayAttr(inputInfo));
  }

  void buildFunction(OpBuilder &builder, func::FuncOp main, Group group,
                     Value loss,
                     DenseMap<Value, SmallVector<std::string, 1>> &paramGradOf) {
    MLIRContext *ctx = &getContext();
    unsigned fn = index(group);
    auto byPosition = [&](Value a, Value b) {
      auto pos = [&](Value v) -> int64_t {
        if (auto arg = llvm::dyn_cast<BlockArgument>(v))
          return -1 - static_cast<int64_t>(arg.getArgNumber()) - 1000000;
        return position.lookup(v.getDefiningOp()) * 16 +
               llvm::cast<OpResult>(v).getResultNumber();
      };
      return pos(a) < pos(b);
    };
    auto sorted = [&](const llvm::SetVector<Value> &set) {
      SmallVector<Value> values(set.begin(), set.end());
      llvm::stable_sort(values, byPosition);
      return values;
    };

    // Arguments: data inputs, parameters, then tensors from elsewhere.
    SmallVector<Value> argValues;
    SmallVector<DictionaryAttr> argAttrs;
    auto named = [&](StringRef key, StringRef value) {
      return NamedAttribute(StringAttr::get(ctx, key),
                            StringAttr::get(ctx, value));
    };
    for (Value v : sorted(dataArgs[fn])) {
      argValues.push_back(v);
      argAttrs.push_back(DictionaryAttr::get(
          ctx, {named(attrs::kTensor, names[v]),
                named(attrs::kBindInput, names[v])}));
    }
    SmallVector<Operation *> paramOps(params[fn].begin(), params[fn].end());
    llvm::stable_sort(paramOps, [&](Operation *a, Operation *b) {
      return position.lookup(a) < position.lookup(b);
    });
    for (Operation *op : paramOps) {
      auto param = llvm::cast<ParamOp>(op);
      argValues.push_back(param.getResult());
      argAttrs.push_back(DictionaryAttr::get(
          ctx, {named(attrs::kTensor, param.getParamName()),
                named(attrs::kBindParam, param.getParamName())}));
    }
    for (Value v : sorted(inputs[fn])) {
      argValues.push_back(v);
      argAttrs.push_back(
          DictionaryAttr::get(ctx, {named(attrs::kTensor, names[v])}));
    }

    // Results: tensors others read, the loss, parameter gradients.
    SmallVector<Value> resultValues;
    for (Value v : sorted(outputs[fn]))
      resultValues.push_back(v);
    if (!inference)
      for (Value v : extraResults[fn])
        if (!outputs[fn].contains(v))
          resultValues.push_back(v);
    size_t firstGraphOutput = resultValues.size();
    for (auto &[value, outputName] : graphOutputs[fn])
      resultValues.push_back(value);

    SmallVector<Type> argTypes, resultTypes;
    for (Value v : argValues)
      argTypes.push_back(v.getType());
    for (Value v : resultValues)
      resultTypes.push_back(v.getType());
    std::string name = "stage" + std::to_string(group.stage) + "_" +
                       kPhaseNames[group.phase];
    builder.setInsertionPoint(main);
    auto func = builder.create<func::FuncOp>(
        main.getLoc(), name, FunctionType::get(ctx, argTypes, resultTypes));
    func->setAttr(attrs::kFunctionStage,
                  builder.getI64IntegerAttr(group.stage));
    func->setAttr(attrs::kFunctionKind,
                  builder.getStringAttr(kPhaseNames[group.phase]));
    auto nameList = [&](const llvm::SetVector<Value> &set) {
      SmallVector<Attribute> list;
      for (Value v : sorted(set))
        list.push_back(builder.getStringAttr(names[v]));
      return builder.getArrayAttr(list);
    };
    if (group.phase == Forward) {
      func->setAttr(attrs::kRecv, nameList(recvF[group.stage]));
      func->setAttr(attrs::kSend, nameList(sendF[group.stage]));
    } else if (group.phase == BackwardInput) {
      func->setAttr(attrs::kRecv, nameList(recvB[group.stage]));
      func->setAttr(attrs::kSend, nameList(sendB[group.stage]));
    }
    func.setAllArgAttrs(argAttrs);

    Block *entry = func.addEntryBlock();
    IRMapping mapping;
    for (auto [value, arg] : llvm::zip(argValues, entry->getArguments()))
      mapping.map(value, arg);
    OpBuilder body = OpBuilder::atBlockEnd(entry);
    auto cloneConstant = [&](Value value) {
      if (mapping.contains(value))
        return;
      if (auto constant = value.getDefiningOp<ConstantOp>()) {
        Operation *clone = body.clone(*constant, mapping);
        clone->removeAttr(attrs::kOpId);
        clone->removeAttr(attrs::kGradOf);
      }
    };
    for (Operation &op : main.front().without_terminator()) {
      auto it = groupOf.find(&op);
      if (it == groupOf.end() || !(it->second == group))
        continue;
      for (Value operand : op.getOperands())
        cloneConstant(operand);
      Operation *clone = body.clone(op, mapping);
      clone->removeAttr(attrs::kOpId);
      clone->removeAttr(attrs::kGradOf);
      clone->removeAttr(attrs::kStage);
    }
    SmallVector<Value> returned;
    SmallVector<DictionaryAttr> resultAttrs;
    for (auto [position, v] : llvm::enumerate(resultValues)) {
      cloneConstant(v);
      returned.push_back(mapping.lookup(v));
      SmallVector<NamedAttribute> attrList{named(attrs::kTensor, names[v])};
      if (position >= firstGraphOutput) {
        // Each graph output is a buffer of its own, named after it.
        const std::string &outputName =
            graphOutputs[fn][position - firstGraphOutput].second;
        attrList = {named(attrs::kTensor, outputName),
                    named(attrs::kGraphOutput, outputName)};
      }
      // The parameters of this stage whose gradient this is.
      if (auto grad = paramGradOf.find(v); grad != paramGradOf.end()) {
        SmallVector<Attribute> params;
        for (const std::string &param : grad->second)
          if (isLocalGradient(param, v, group.stage))
            params.push_back(StringAttr::get(ctx, param));
        if (!params.empty())
          attrList.push_back(
              NamedAttribute(StringAttr::get(ctx, attrs::kParamGrad),
                             ArrayAttr::get(ctx, params)));
      }
      if (v == loss)
        attrList.push_back(
            NamedAttribute(StringAttr::get(ctx, attrs::kLoss),
                           UnitAttr::get(ctx)));
      if (v == lossCount)
        attrList.push_back(
            NamedAttribute(StringAttr::get(ctx, attrs::kLossCount),
                           UnitAttr::get(ctx)));
      resultAttrs.push_back(DictionaryAttr::get(ctx, attrList));
    }
    body.create<func::ReturnOp>(main.getLoc(), returned);
    func.setAllResultAttrs(resultAttrs);
  }
};

} // namespace
