#include "pipecc/Compiler/ModelSummary.h"

#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Support/Escape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace pipecc;
using namespace pipecc::graph;

static std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

void pipecc::printModelSummary(ModuleOp module, llvm::raw_ostream &os) {
  os << "== model summary ==\n";
  if (auto model = module->getAttrOfType<StringAttr>("graph.model"))
    os << "model:      " << support::escape(model.getValue()) << "\n";
  if (auto opset = module->getAttrOfType<IntegerAttr>("graph.opset"))
    os << "opset:      " << opset.getInt() << "\n";
  module.walk([&](func::FuncOp func) {
    for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto name = func.getArgAttrOfType<StringAttr>(index, "graph.input");
      // Names come from the model: escaped, one per line.
      os << "input:      " << (name ? support::escape(name.getValue()) : "?")
         << " " << typeString(type) << "\n";
    }
    for (auto [index, type] : llvm::enumerate(func.getResultTypes())) {
      auto name = func.getResultAttrOfType<StringAttr>(index, "graph.output");
      os << "output:     " << (name ? support::escape(name.getValue()) : "?")
         << " " << typeString(type) << "\n";
    }
    int64_t trainable = 0, frozen = 0, trainableElements = 0, bytes = 0;
    llvm::MapVector<StringRef, int64_t> opCounts;
    OpCost total;
    func.walk([&](Operation *op) {
      if (auto param = llvm::dyn_cast<ParamOp>(op)) {
        auto type = param.getType();
        (param.getTrainable() ? trainable : frozen) += 1;
        if (param.getTrainable())
          trainableElements += type.getNumElements();
        bytes += type.getNumElements() *
                 ((type.getElementTypeBitWidth() + 7) / 8);
      }
      if (op->getDialect() && op->getDialect()->getNamespace() == "graph")
        ++opCounts[op->getName().getStringRef()];
      if (auto costly = llvm::dyn_cast<CostOpInterface>(op))
        total += costly.getCost();
    });
    os << "parameters: " << trainable << " trainable ("
       << trainableElements << " elements), " << frozen << " frozen, "
       << bytes << " bytes\n";
    os << "ops:       ";
    for (auto [name, count] : opCounts)
      os << " " << name << " x" << count;
    os << "\n";
    os << "forward:    " << llvm::format("%.4g", total.flops) << " flops, "
       << llvm::format("%.4g", total.transcendentals)
       << " transcendentals, " << total.bytesRead << " bytes read, "
       << total.bytesWritten << " bytes written\n";
  });
}
