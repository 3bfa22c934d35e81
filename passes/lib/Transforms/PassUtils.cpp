#include "PassUtils.h"

using namespace mlir;

func::FuncOp pipecc::getModelFunction(ModuleOp module) {
  if (auto main = module.lookupSymbol<func::FuncOp>("main"))
    return main;
  auto funcs = module.getOps<func::FuncOp>();
  if (!funcs.empty() && std::next(funcs.begin()) == funcs.end())
    return *funcs.begin();
  module.emitError("expected a model function '@main'");
  return nullptr;
}
