//===- GraphTestUtil.h - Parsing graph IR in unit tests -------------------===//

#ifndef PIPECC_TEST_UNITTESTS_GRAPH_GRAPHTESTUTIL_H
#define PIPECC_TEST_UNITTESTS_GRAPH_GRAPHTESTUTIL_H

#include "pipecc/Dialect/Graph/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <string>

namespace pipecc::graph::testing {

/// A context with the graph and func dialects that records every diagnostic,
/// so a failed parse or pass can say why in the test's failure message.
class GraphIRTest : public ::testing::Test {
protected:
  GraphIRTest()
      : handler(&context, [this](mlir::Diagnostic &diag) {
          llvm::raw_string_ostream os(diagnostics);
          os << diag.getLocation() << ": " << diag.str() << "\n";
          return mlir::success();
        }) {
    context.loadDialect<GraphDialect, mlir::func::FuncDialect>();
  }

  mlir::OwningOpRef<mlir::ModuleOp> parse(llvm::StringRef source) {
    diagnostics.clear();
    auto module = mlir::parseSourceString<mlir::ModuleOp>(
        source, mlir::ParserConfig(&context));
    EXPECT_TRUE(module) << "cannot parse:\n"
                        << source.str() << "\n"
                        << diagnostics;
    return module;
  }

  mlir::MLIRContext context;
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace pipecc::graph::testing

#endif // PIPECC_TEST_UNITTESTS_GRAPH_GRAPHTESTUTIL_H
