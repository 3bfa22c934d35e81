#include "pipecc/Compiler/Driver.h"

#include "pipecc/Compiler/InitAll.h"
#include "pipecc/Compiler/ModelSummary.h"
#include "pipecc/Compiler/OutputDirectory.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace pipecc;

namespace {

/// Prints each diagnostic as one line, `pipecc: error: <message>`, adding the
/// ONNX node a location names when the message does not already.
class DriverDiagnostics {
public:
  explicit DriverDiagnostics(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diag) { return print(diag); }) {}

  bool hadError() const { return sawError; }

private:
  LogicalResult print(Diagnostic &diag) {
    StringRef severity = "error";
    switch (diag.getSeverity()) {
    case DiagnosticSeverity::Error:
      sawError = true;
      break;
    case DiagnosticSeverity::Warning:
      severity = "warning";
      break;
    case DiagnosticSeverity::Note:
      severity = "note";
      break;
    case DiagnosticSeverity::Remark:
      severity = "remark";
      break;
    }
    std::string message = diag.str();
    std::string where = describe(diag.getLocation());
    llvm::errs() << "pipecc: " << severity << ": ";
    if (!where.empty() && message.find(where) == std::string::npos)
      llvm::errs() << where << ": ";
    llvm::errs() << message << "\n";
    for (Diagnostic &note : diag.getNotes())
      llvm::errs() << "pipecc: note: " << note.str() << "\n";
    return success();
  }

  /// "node '<name>'" for a named location, else nothing: file positions in
  /// an ONNX file mean nothing to a user.
  static std::string describe(Location loc) {
    if (auto name = llvm::dyn_cast<NameLoc>(loc))
      return ("node '" + name.getName().strref() + "'").str();
    if (auto fused = llvm::dyn_cast<FusedLoc>(loc))
      for (Location inner : fused.getLocations())
        if (std::string found = describe(inner); !found.empty())
          return found;
    return "";
  }

  ScopedDiagnosticHandler handler;
  bool sawError = false;
};

/// The passes that tidy the imported graph: folded shape arithmetic and
/// duplicate constants disappear before anything prices the graph.
void addGraphCleanupPipeline(PassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

} // namespace

int pipecc::runDriver(const DriverOptions &options, llvm::raw_ostream &out) {
  DialectRegistry registry;
  registerAllPipeccDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  DriverDiagnostics diagnostics(context);

  Phase last = options.compileTo.value_or(Phase::Graph);
  if (options.emit && static_cast<int>(*options.emit) > static_cast<int>(last))
    last = *options.emit;
  for (Phase phase : allPhases()) {
    if (static_cast<int>(phase) > static_cast<int>(last))
      break;
    if (!isPhaseImplemented(phase)) {
      emitError(UnknownLoc::get(&context))
          << "phase '" << phaseName(phase)
          << "' is not implemented in this version of pipecc; the last "
             "implemented phase is 'graph'";
      return 1;
    }
  }

  // Claim the output folder first, so a bad -o fails before any work.
  std::optional<OutputDirectory> outputDir;
  if (!options.outputDir.empty()) {
    std::string error;
    std::optional<OutputDirectory> created =
        OutputDirectory::create(options.outputDir, error);
    if (!created) {
      emitError(UnknownLoc::get(&context)) << error;
      return 1;
    }
    outputDir.emplace(std::move(*created));
  }

  OwningOpRef<ModuleOp> module =
      frontend::importONNXFile(options.inputPath, options.import, &context);
  if (!module)
    return 1;

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope rootTiming = timing.getRootScope();
  pm.enableTiming(rootTiming);
  addGraphCleanupPipeline(pm);
  if (failed(pm.run(*module)) || failed(verify(*module)))
    return 1;

  OpPrintingFlags flags;
  flags.elideLargeElementsAttrs(options.elideElementsLimit);
  if (options.emit == Phase::Graph)
    module->print(out, flags);
  if (options.printSummary)
    printModelSummary(*module, out);

  if (outputDir) {
    std::string error;
    if (!outputDir->writeFile("graph.mlir",
                              [&](llvm::raw_ostream &os) {
                                module->print(os, flags);
                              },
                              error) ||
        !outputDir->writeFile("summary.txt",
                              [&](llvm::raw_ostream &os) {
                                printModelSummary(*module, os);
                              },
                              error) ||
        !outputDir->commit(error)) {
      emitError(UnknownLoc::get(&context)) << error;
      return 1;
    }
  }
  return diagnostics.hadError() ? 1 : 0;
}
