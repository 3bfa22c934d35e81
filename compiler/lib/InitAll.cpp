#include "pipecc/Compiler/InitAll.h"

#include "pipecc/Dialect/Graph/GraphDialect.h"
#include "pipecc/Dialect/Pipeline/PipelineDialect.h"
#include "pipecc/Conversion/Passes.h"
#include "pipecc/Conversion/Pipelines.h"
#include "pipecc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

void pipecc::registerAllPipeccDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, pipeline::PipelineDialect,
                  mlir::func::FuncDialect>();
  // Upstream dialects, bufferization models and translations of the CPU
  // and CUDA lowerings.
  registerCPULoweringDialects(registry);
  registerCUDALoweringDialects(registry);
}

void pipecc::registerAllPipeccPasses() {
  registerPipeccPasses();
  registerPipeccConversionPasses();
  registerCPULoweringPipeline();
  registerCUDALoweringPipeline();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
}
