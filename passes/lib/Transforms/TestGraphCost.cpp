#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Passes/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace pipecc {
#define GEN_PASS_DEF_TESTGRAPHCOST
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;
using namespace pipecc::graph;

namespace {
struct TestGraphCostPass : pipecc::impl::TestGraphCostBase<TestGraphCostPass> {
  void runOnOperation() override {
    raw_ostream &os = llvm::outs();
    OpCost total;
    os << "cost of @" << getOperation().getSymName() << "\n";
    getOperation().walk([&](CostOpInterface op) {
      OpCost cost = op.getCost();
      total += cost;
      os << "  " << op->getName() << ": flops=" << int64_t(cost.flops)
         << " transcendentals=" << int64_t(cost.transcendentals)
         << " read=" << cost.bytesRead << " written=" << cost.bytesWritten
         << "\n";
    });
    os << "  total: flops=" << int64_t(total.flops)
       << " transcendentals=" << int64_t(total.transcendentals)
       << " read=" << total.bytesRead << " written=" << total.bytesWritten
       << "\n";
    markAllAnalysesPreserved();
  }
};
} // namespace
