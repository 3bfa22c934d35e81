#include "pipecc/Compiler/InitAll.h"

#include "pipecc/Dialect/Graph/GraphDialect.h"
#include "pipecc/Dialect/Pipeline/PipelineDialect.h"
#include "pipecc/Conversion/Passes.h"
#include "pipecc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

void pipecc::registerAllPipeccDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, pipeline::PipelineDialect,
                  mlir::func::FuncDialect>();
}

void pipecc::registerAllPipeccPasses() {
  registerPipeccPasses();
  registerPipeccConversionPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
}
