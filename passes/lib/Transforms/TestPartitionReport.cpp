#include "pipecc/CostModel/DeviceProfile.h"
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Dialect/Pipeline/PipelineAttrs.h"
#include "pipecc/Passes/Passes.h"
#include "pipecc/Passes/StageTable.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace pipecc {
#define GEN_PASS_DEF_TESTPARTITIONREPORT
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;

namespace {
struct TestPartitionReportPass
    : pipecc::impl::TestPartitionReportBase<TestPartitionReportPass> {
  void runOnOperation() override {
    auto partition = getOperation()->getAttrOfType<DictionaryAttr>(
        pipecc::attrs::kPartition);
    if (!partition) {
      getOperation().emitError("no partition to report; run pipecc-partition");
      return signalPassFailure();
    }
    raw_ostream &os = llvm::outs();
    auto str = [&](DictionaryAttr d, StringRef key) {
      return d.getAs<StringAttr>(key).getValue();
    };
    auto f64 = [&](DictionaryAttr d, StringRef key) {
      return d.getAs<FloatAttr>(key).getValueAsDouble();
    };
    auto i64 = [&](DictionaryAttr d, StringRef key) {
      return d.getAs<IntegerAttr>(key).getInt();
    };
    int64_t ranks = i64(partition, "stages"), chunks = i64(partition, "chunks");
    os << "partition " << str(partition, "strategy") << " on "
       << str(partition, "device") << ": " << ranks * chunks << " stages";
    if (chunks > 1)
      os << " on " << ranks << " ranks (" << str(partition, "placement")
         << ")";
    os << ", bottleneck "
       << llvm::format("%.3e", f64(partition, "bottleneck_s")) << " s\n";
    os << "cuts after:";
    for (Attribute cut : partition.getAs<ArrayAttr>("cuts_after"))
      os << " '" << llvm::cast<StringAttr>(cut).getValue() << "'";
    os << "\n";
    for (auto [index, attr] :
         llvm::enumerate(partition.getAs<ArrayAttr>("stage_costs"))) {
      auto stage = llvm::cast<DictionaryAttr>(attr);
      os << "stage " << index << ": '" << str(stage, "first") << "' .. '"
         << str(stage, "last") << "' F "
         << llvm::format("%.3e", f64(stage, "forward_s")) << " B "
         << llvm::format("%.3e", f64(stage, "backward_input_s")) << " W "
         << llvm::format("%.3e", f64(stage, "backward_weight_s")) << " comm "
         << llvm::format("%.3e", f64(stage, "communication_s")) << " total "
         << llvm::format("%.3e", f64(stage, "total_s")) << " s, activations "
         << i64(stage, "activation_bytes") << " B, parameters "
         << i64(stage, "parameter_bytes") << " B, stash "
         << i64(stage, "stash_bytes") << " B, rank " << i64(stage, "rank")
         << "\n";
    }
    // After split-stages: what the stage functions cost on the same
    // device, which must be what the partition priced (one micro-batch:
    // its tests' built-in profiles price no weight packing to share).
    const cost::DeviceProfile *profile =
        cost::lookupDeviceProfile(str(partition, "device"));
    ModuleOp module = getOperation();
    auto secondsOf = [&](func::FuncOp func) {
      double seconds = 0;
      if (func)
        func.walk([&](pipecc::graph::CostOpInterface op) {
          seconds += cost::estimateSeconds(op.getOperation(), *profile, ranks);
        });
      return seconds;
    };
    if (profile && module->hasAttr(pipeline::kStageTableAttrName)) {
      FailureOr<StageTable> table = readStageTable(module);
      if (failed(table))
        return signalPassFailure();
      for (const VirtualStage &stage : table->stages)
        os << "stage " << stage.index << " functions: F "
           << llvm::format("%.3e", secondsOf(stage.forward)) << " B "
           << llvm::format("%.3e", secondsOf(stage.backwardInput)) << " W "
           << llvm::format("%.3e", secondsOf(stage.backwardWeight))
           << " s, rank " << stage.rank << " chunk " << stage.chunk << "\n";
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
