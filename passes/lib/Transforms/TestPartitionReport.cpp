#include "pipecc/CostModel/DeviceProfile.h"
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"

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
    // device, which must be what the partition priced.
    const cost::DeviceProfile *profile =
        cost::lookupDeviceProfile(str(partition, "device"));
    ModuleOp module = getOperation();
    auto secondsOf = [&](StringRef name) -> std::optional<double> {
      auto func = module.lookupSymbol<func::FuncOp>(name);
      if (!func)
        return std::nullopt;
      double seconds = 0;
      func.walk([&](pipecc::graph::CostOpInterface op) {
        seconds += cost::estimateSeconds(op.getCost(), *profile);
      });
      return seconds;
    };
    for (size_t q = 0; profile && q < partition.getAs<ArrayAttr>("stage_costs").size(); ++q) {
      std::string prefix = "stage" + std::to_string(q) + "_";
      std::optional<double> f = secondsOf(prefix + "forward"),
                            b = secondsOf(prefix + "backward_input"),
                            w = secondsOf(prefix + "backward_weight");
      if (!f || !b || !w)
        continue;
      os << "stage " << q << " functions: F " << llvm::format("%.3e", *f)
         << " B " << llvm::format("%.3e", *b) << " W "
         << llvm::format("%.3e", *w) << " s\n";
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
