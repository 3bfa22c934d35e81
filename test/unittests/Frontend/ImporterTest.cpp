//===- ImporterTest.cpp - The ONNX frontend on small models ---------------===//
//
// Imports the models of scripts/gen_test_models.py (and the shared
// PyTorch-exported cases when ../shared exists) and checks the graph IR or
// the single error each bad input must produce.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Frontend/ONNX/Importer.h"

#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <map>

using namespace mlir;
using namespace pipecc;
using namespace pipecc::frontend;

namespace {

std::string input(llvm::StringRef name) {
  llvm::SmallString<256> path(PIPECC_FRONTEND_INPUTS);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

class ImporterTest : public ::testing::Test {
protected:
  /// Imports `path`, keeping every error reported on the way.
  OwningOpRef<ModuleOp> import(llvm::StringRef path,
                               const ImportOptions &options = {}) {
    errors.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << diag.getLocation() << ": " << diag.str();
        errors.push_back(os.str());
      }
      return success();
    });
    return importONNXFile(path, options, &context);
  }

  /// Imports `path`, expecting failure with exactly one error that
  /// contains each of `parts`; returns the error.
  std::string importError(llvm::StringRef path,
                          std::initializer_list<llvm::StringRef> parts,
                          const ImportOptions &options = {}) {
    OwningOpRef<ModuleOp> module = import(path, options);
    EXPECT_FALSE(module) << "import of " << path.str() << " succeeded";
    EXPECT_EQ(errors.size(), 1u);
    if (errors.empty())
      return "";
    for (llvm::StringRef part : parts)
      EXPECT_NE(errors[0].find(part.str()), std::string::npos)
          << "missing '" << part.str() << "' in: " << errors[0];
    EXPECT_EQ(errors[0].find('\n'), std::string::npos) << errors[0];
    return errors[0];
  }

  OwningOpRef<ModuleOp> importOk(llvm::StringRef path,
                                 const ImportOptions &options = {}) {
    OwningOpRef<ModuleOp> module = import(path, options);
    EXPECT_TRUE(module) << (errors.empty() ? "" : errors[0]);
    return module;
  }

  MLIRContext context;
  std::vector<std::string> errors;
};

func::FuncOp getMain(ModuleOp module) {
  return module.lookupSymbol<func::FuncOp>("main");
}

/// How many ops of each name the body of @main holds.
std::map<std::string, int> countOps(ModuleOp module) {
  std::map<std::string, int> counts;
  for (Operation &op : getMain(module).front())
    ++counts[op.getName().getStringRef().str()];
  return counts;
}

std::vector<std::string> paramNames(ModuleOp module) {
  std::vector<std::string> names;
  getMain(module).walk(
      [&](graph::ParamOp op) { names.push_back(op.getParamName().str()); });
  return names;
}

template <typename OpTy>
OpTy firstOp(ModuleOp module) {
  OpTy found;
  getMain(module).walk([&](OpTy op) {
    if (!found)
      found = op;
  });
  return found;
}

std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return os.str();
}

std::string nameOf(Location loc) {
  if (auto name = llvm::dyn_cast<NameLoc>(loc))
    return name.getName().str();
  return "";
}

//===----------------------------------------------------------------------===//
// Valid models
//===----------------------------------------------------------------------===//

TEST_F(ImporterTest, MatMulAddTanhSoftmaxChain) {
  auto module = importOk(input("mlp_chain.onnx"));
  ASSERT_TRUE(module);
  EXPECT_EQ((*module)->getAttrOfType<StringAttr>("graph.model").getValue(),
            "mlp_chain.onnx");
  EXPECT_EQ((*module)->getAttrOfType<IntegerAttr>("graph.opset").getInt(), 13);
  auto counts = countOps(*module);
  EXPECT_EQ(counts["graph.param"], 3);
  EXPECT_EQ(counts["graph.matmul"], 2);
  EXPECT_EQ(counts["graph.add"], 1);
  EXPECT_EQ(counts["graph.tanh"], 1);
  EXPECT_EQ(counts["graph.softmax"], 1);
  EXPECT_EQ(counts.size(), 6u) << "unexpected ops";
  EXPECT_EQ(paramNames(*module),
            (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight"}));

  func::FuncOp main = getMain(*module);
  ASSERT_EQ(main.getNumArguments(), 1u);
  EXPECT_EQ(main.getArgAttrOfType<StringAttr>(0, "graph.input").getValue(),
            "x");
  ASSERT_EQ(main.getNumResults(), 1u);
  EXPECT_EQ(main.getResultAttrOfType<StringAttr>(0, "graph.output").getValue(),
            "probs");
  EXPECT_EQ(typeString(main.getResultTypes()[0]), "tensor<4x5xf32>");
  EXPECT_EQ(firstOp<graph::SoftmaxOp>(*module).getAxis(), 1u);

  // Node names are locations; the first param carries its initializer.
  graph::MatMulOp matmul = firstOp<graph::MatMulOp>(*module);
  EXPECT_EQ(nameOf(matmul.getLoc()), "/fc1/MatMul");
  auto param = firstOp<graph::ParamOp>(*module);
  EXPECT_TRUE(param.getTrainable());
  ASSERT_TRUE(param.getInit());
  EXPECT_EQ(typeString(param.getType()), "tensor<8x16xf32>");
}

TEST_F(ImporterTest, GemmVariants) {
  auto module = importOk(input("gemm_variants.onnx"));
  ASSERT_TRUE(module);
  auto counts = countOps(*module);
  EXPECT_EQ(counts["graph.matmul"], 3);
  // alpha and beta of the second Gemm; the third has no C.
  EXPECT_EQ(counts["graph.mul"], 2);
  EXPECT_EQ(counts["graph.add"], 2);
  EXPECT_EQ(counts["graph.constant"], 2);

  SmallVector<graph::MatMulOp> matmuls;
  getMain(*module).walk([&](graph::MatMulOp op) { matmuls.push_back(op); });
  ASSERT_EQ(matmuls.size(), 3u);
  EXPECT_TRUE(matmuls[0].getTransposeRhs());
  EXPECT_FALSE(matmuls[0].getTransposeLhs());
  EXPECT_TRUE(matmuls[1].getTransposeLhs());
  EXPECT_EQ(nameOf(matmuls[2].getLoc()), "Gemm_2");

  func::FuncOp main = getMain(*module);
  ASSERT_EQ(main.getNumResults(), 2u);
  EXPECT_EQ(typeString(main.getResultTypes()[0]), "tensor<6x16xf32>");
  EXPECT_EQ(typeString(main.getResultTypes()[1]), "tensor<6x3xf32>");
  EXPECT_EQ(main.getResultAttrOfType<StringAttr>(1, "graph.output").getValue(),
            "y3");
}

void checkReductions(ModuleOp module) {
  auto sum = firstOp<graph::ReduceSumOp>(module);
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum.getAxes(), ArrayRef<int64_t>{1});
  EXPECT_FALSE(sum.getKeepDims());
  auto mean = firstOp<graph::ReduceMeanOp>(module);
  ASSERT_TRUE(mean);
  EXPECT_EQ(mean.getAxes(), ArrayRef<int64_t>{2});
  EXPECT_TRUE(mean.getKeepDims());
  auto max = firstOp<graph::ReduceMaxOp>(module);
  ASSERT_TRUE(max);
  EXPECT_EQ(max.getAxes(), (ArrayRef<int64_t>{0, 1, 2}));
  EXPECT_EQ(typeString(max.getType()), "tensor<f32>");
}

TEST_F(ImporterTest, ReductionsOpset13) {
  auto module = importOk(input("reductions.onnx"));
  ASSERT_TRUE(module);
  checkReductions(*module);
  // The integer axes initializer is folded into the ReduceSum that reads
  // it; no op reads the param left behind, so it goes (floating-point
  // initializers stay, read or not: they are the checkpoint).
  EXPECT_EQ(paramNames(*module), std::vector<std::string>{});
}

TEST_F(ImporterTest, ReductionsOpset18) {
  auto module = importOk(input("reductions_opset18.onnx"));
  ASSERT_TRUE(module);
  checkReductions(*module);
  // noop_with_empty_axes returns the input itself.
  func::FuncOp main = getMain(*module);
  auto ret = llvm::cast<func::ReturnOp>(main.front().getTerminator());
  EXPECT_EQ(ret.getOperand(3), main.getArgument(0));
}

TEST_F(ImporterTest, ShapeSubgraphFoldsIntoReshape) {
  auto module = importOk(input("reshape_shape_subgraph.onnx"));
  ASSERT_TRUE(module);
  auto counts = countOps(*module);
  EXPECT_EQ(counts.count("graph.constant"), 0u) << "dead shape constants left";
  EXPECT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts["graph.reshape"], 1);
  EXPECT_EQ(counts["graph.relu"], 1);
  EXPECT_EQ(typeString(firstOp<graph::ReshapeOp>(*module).getType()),
            "tensor<2x12xf32>");
}

TEST_F(ImporterTest, TransposeIdentityAndVectorMatMul) {
  auto module = importOk(input("transpose_matmul.onnx"));
  ASSERT_TRUE(module);
  SmallVector<graph::TransposeOp> transposes;
  getMain(*module).walk(
      [&](graph::TransposeOp op) { transposes.push_back(op); });
  ASSERT_EQ(transposes.size(), 2u);
  EXPECT_EQ(transposes[0].getPerm(), (ArrayRef<int64_t>{2, 1, 0}));
  EXPECT_EQ(transposes[1].getPerm(), (ArrayRef<int64_t>{0, 2, 1}));
  func::FuncOp main = getMain(*module);
  ASSERT_EQ(main.getNumResults(), 3u);
  EXPECT_EQ(typeString(main.getResultTypes()[0]), "tensor<4x3x2xf32>");
  EXPECT_EQ(typeString(main.getResultTypes()[1]), "tensor<2x4xf32>");
  EXPECT_EQ(typeString(main.getResultTypes()[2]), "tensor<5xf32>");
  EXPECT_EQ(countOps(*module)["graph.matmul"], 2);
}

TEST_F(ImporterTest, CrossEntropyFeedsTheReturn) {
  auto module = importOk(input("cross_entropy.onnx"));
  ASSERT_TRUE(module);
  auto loss = firstOp<graph::CrossEntropyOp>(*module);
  ASSERT_TRUE(loss);
  ASSERT_TRUE(loss.getIgnoreIndex());
  EXPECT_EQ(static_cast<int64_t>(*loss.getIgnoreIndex()), -100);
  func::FuncOp main = getMain(*module);
  auto ret = llvm::cast<func::ReturnOp>(main.front().getTerminator());
  EXPECT_EQ(ret.getOperand(0).getDefiningOp(), loss.getOperation());
  EXPECT_EQ(main.getArgAttrOfType<StringAttr>(1, "graph.input").getValue(),
            "labels");
}

TEST_F(ImporterTest, InitializerElementTypes) {
  auto module = importOk(input("initializer_types.onnx"));
  ASSERT_TRUE(module);
  std::map<std::string, graph::ParamOp> params;
  getMain(*module).walk(
      [&](graph::ParamOp op) { params[op.getParamName().str()] = op; });
  ASSERT_EQ(params.size(), 5u);
  EXPECT_TRUE(params["half"].getTrainable());
  EXPECT_TRUE(params["typed_floats"].getTrainable());
  EXPECT_FALSE(params["int32s"].getTrainable());
  EXPECT_FALSE(params["flags"].getTrainable());
  EXPECT_FALSE(params["typed_ints"].getTrainable());

  auto values = [](graph::ParamOp op) {
    return llvm::cast<DenseElementsAttr>(*op.getInit());
  };
  auto half = llvm::to_vector(values(params["half"]).getValues<APFloat>());
  EXPECT_EQ(half[0].convertToFloat(), 1.5f);
  EXPECT_EQ(half[1].convertToFloat(), -2.0f);
  EXPECT_EQ(llvm::to_vector(values(params["int32s"]).getValues<int32_t>()),
            (SmallVector<int32_t>{1, -2, 3}));
  EXPECT_EQ(llvm::to_vector(values(params["flags"]).getValues<bool>()),
            (SmallVector<bool>{true, false}));
  EXPECT_EQ(llvm::to_vector(values(params["typed_floats"]).getValues<float>()),
            (SmallVector<float>{0.25f, -4.0f}));
  EXPECT_EQ(llvm::to_vector(values(params["typed_ints"]).getValues<int64_t>()),
            (SmallVector<int64_t>{7, 8, -9}));
}

TEST_F(ImporterTest, ExternalDataInTheModelFolder) {
  auto module = importOk(input("external_ok/model.onnx"));
  ASSERT_TRUE(module);
  auto param = firstOp<graph::ParamOp>(*module);
  ASSERT_TRUE(param);
  auto file = llvm::MemoryBuffer::getFile(input("external_ok/weights.bin"));
  ASSERT_TRUE(file);
  auto expected = (*file)->getBuffer().drop_front(16);
  auto init = llvm::cast<DenseElementsAttr>(*param.getInit());
  ASSERT_EQ(init.getRawData().size(), expected.size());
  EXPECT_EQ(llvm::StringRef(init.getRawData().data(), expected.size()),
            expected);
}

TEST_F(ImporterTest, InputShapeFixesFreeDimensions) {
  ImportOptions options;
  std::string error;
  ASSERT_TRUE(succeeded(parseInputShape("x=16x8", options, error))) << error;
  auto module = importOk(input("free_batch.onnx"), options);
  ASSERT_TRUE(module);
  func::FuncOp main = getMain(*module);
  EXPECT_EQ(typeString(main.getArgumentTypes()[0]), "tensor<16x8xf32>");
  EXPECT_EQ(typeString(main.getResultTypes()[0]), "tensor<16x4xf32>");
}

TEST_F(ImporterTest, InputShapeOverridesAStaticDimension) {
  // Micro-batching: the same model at a quarter of its batch.
  ImportOptions options;
  std::string error;
  ASSERT_TRUE(succeeded(parseInputShape("x=1,8", options, error))) << error;
  ASSERT_TRUE(succeeded(parseInputShape("labels=1", options, error)));
  auto module = importOk(input("cross_entropy.onnx"), options);
  ASSERT_TRUE(module);
  EXPECT_EQ(typeString(getMain(*module).getArgumentTypes()[0]),
            "tensor<1x8xf32>");
  // Only x shrinks: the labels no longer match the logits.
  options.inputShapes.erase("labels");
  importError(input("cross_entropy.onnx"),
              {"node '/SoftmaxCrossEntropyLoss' (SoftmaxCrossEntropyLoss): "
               "labels of type 'tensor<4xi64>' do not match"},
              options);
}

TEST(ParseInputShape, Forms) {
  ImportOptions options;
  std::string error;
  EXPECT_TRUE(succeeded(parseInputShape("x=16x64", options, error)));
  EXPECT_EQ(options.inputShapes["x"], (SmallVector<int64_t>{16, 64}));
  EXPECT_TRUE(succeeded(parseInputShape("input.1=2,3,4", options, error)));
  EXPECT_EQ(options.inputShapes["input.1"], (SmallVector<int64_t>{2, 3, 4}));
  for (const char *bad : {"x", "x=", "=4", "x=4xa", "x=0x4", "x=-1"}) {
    error.clear();
    EXPECT_TRUE(failed(parseInputShape(bad, options, error))) << bad;
    EXPECT_NE(error.find("invalid --input-shape"), std::string::npos) << bad;
  }
}

TEST(SupportedOps, ListsSinceVersions) {
  std::vector<std::string> ops = supportedOps();
  auto has = [&](const char *line) {
    return llvm::is_contained(ops, std::string(line));
  };
  EXPECT_TRUE(has("Gemm (since 7)"));
  EXPECT_TRUE(has("Softmax (since 1, 13)"));
  EXPECT_TRUE(has("ReduceMean (since 1, 18)"));
  EXPECT_TRUE(has("SoftmaxCrossEntropyLoss (since 12)"));
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
}

//===----------------------------------------------------------------------===//
// Bad inputs: one error each
//===----------------------------------------------------------------------===//

TEST_F(ImporterTest, MissingFile) {
  importError(input("no_such_model.onnx"), {"cannot read", "no_such_model"});
}

TEST_F(ImporterTest, NotAnONNXModel) {
  importError(input("not_onnx.onnx"),
              {"not_onnx.onnx' is not an ONNX model: "});
}

TEST_F(ImporterTest, TruncatedModel) {
  importError(input("truncated.onnx"),
              {"truncated.onnx' is truncated or corrupt"});
}

TEST_F(ImporterTest, UnsupportedNodesAreListedTogether) {
  std::string error = importError(
      input("unsupported.onnx"),
      {"unsupported.onnx': 2 unsupported ONNX nodes: '/conv/DeformConv' "
       "(DeformConv, opset 13), '/norm/FancyNorm' (FancyNorm, domain "
       "'com.example' opset 1); supported: Add, ",
       // Every helper's ops join the list: check a few, not all of it.
       " Concat, ", " Where"});
  EXPECT_EQ(error.find("'/Relu'"), std::string::npos);
}

TEST_F(ImporterTest, FreeDimensionNeedsAnInputShape) {
  importError(input("free_batch.onnx"),
              {"free_batch.onnx': input 'x' has a free dimension 0 ('batch'); "
               "fix it with --input-shape x=<dims>"});
}

TEST_F(ImporterTest, InputShapeErrors) {
  ImportOptions options;
  options.inputShapes["nope"] = {1, 2};
  importError(input("free_batch.onnx"),
              {"--input-shape names 'nope', which is not a graph input "
               "(inputs: 'x')"},
              options);
  ImportOptions rank;
  rank.inputShapes["x"] = {16};
  importError(input("free_batch.onnx"),
              {"--input-shape x=16 has rank 1, but input 'x' has rank 2"},
              rank);
}

TEST_F(ImporterTest, ExternalDataOutsideTheModelFolder) {
  importError(input("external_outside/model.onnx"),
              {"initializer 'secret' has external data at '../outside.bin', "
               "which is outside the model's folder"});
}

/// A copy of external_ok/model.onnx in a fresh folder whose weights.bin is
/// made by `makeWeights(path)`.
class ExternalDataTest : public ImporterTest {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("pipecc-ext", dir));
    llvm::SmallString<256> model(dir);
    llvm::sys::path::append(model, "model.onnx");
    ASSERT_FALSE(
        llvm::sys::fs::copy_file(input("external_ok/model.onnx"), model));
    modelPath = std::string(model);
    llvm::sys::path::append(weights, dir, "weights.bin");
  }
  void TearDown() override {
    llvm::sys::fs::remove_directories(dir);
    if (!outsideFile.empty())
      llvm::sys::fs::remove(outsideFile);
  }
  llvm::SmallString<256> dir, weights, outsideFile;
  std::string modelPath;
};

TEST_F(ExternalDataTest, MissingFile) {
  importError(modelPath,
              {"initializer 'w': cannot open its external data file"});
}

TEST_F(ExternalDataTest, ShortFile) {
  std::error_code ec;
  llvm::raw_fd_ostream os(weights, ec);
  os << "short";
  os.close();
  importError(modelPath, {"initializer 'w': its external data file",
                          "has 5 bytes, fewer than offset 16 + length 128"});
}

TEST_F(ExternalDataTest, SymlinkOutOfTheFolder) {
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("pipecc-outside", "bin",
                                                  outsideFile));
  ASSERT_FALSE(llvm::sys::fs::copy_file(input("external_ok/weights.bin"),
                                        outsideFile));
  ASSERT_FALSE(llvm::sys::fs::create_link(outsideFile, weights));
  importError(modelPath, {"initializer 'w' has external data at "
                          "'weights.bin', which is outside the model's "
                          "folder"});
}

TEST_F(ImporterTest, ConversionErrorsNameTheNode) {
  importError(input("bad_broadcast.onnx"),
              {"bad_broadcast.onnx': node '/bad/Add' (Add): shapes do not "
               "broadcast",
               "/bad/Add"});
  importError(input("sce_weights.onnx"),
              {"node '/loss' (SoftmaxCrossEntropyLoss): the 'weights' input "
               "is not supported yet"});
  importError(input("softmax_opset11.onnx"),
              {"node '/Softmax_flat' (Softmax): Softmax before opset 13",
               "only a softmax along the last axis is supported"});
}

//===----------------------------------------------------------------------===//
// The shared PyTorch-exported cases
//===----------------------------------------------------------------------===//

class SharedCasesTest : public ImporterTest {
protected:
  void SetUp() override {
    if (!llvm::sys::fs::is_directory(PIPECC_SHARED_CASES))
      GTEST_SKIP() << "no shared cases at " << PIPECC_SHARED_CASES;
  }
  std::string sharedCase(llvm::StringRef name, llvm::StringRef file) {
    llvm::SmallString<256> path(PIPECC_SHARED_CASES);
    llvm::sys::path::append(path, name, file);
    return std::string(path);
  }
};

TEST_F(SharedCasesTest, MlpRelu) {
  for (const char *file : {"model.onnx", "model_opset17.onnx"}) {
    SCOPED_TRACE(file);
    auto module = importOk(sharedCase("mlp_relu", file));
    ASSERT_TRUE(module);
    std::vector<std::string> expected;
    for (int layer = 0; layer < 4; ++layer)
      for (const char *kind : {"weight", "bias"})
        expected.push_back("layers." + std::to_string(layer) + "." + kind);
    EXPECT_EQ(paramNames(*module), expected);
    auto counts = countOps(*module);
    EXPECT_EQ(counts["graph.matmul"], 4);
    EXPECT_EQ(counts["graph.relu"], 3);
    func::FuncOp main = getMain(*module);
    auto ret = llvm::cast<func::ReturnOp>(main.front().getTerminator());
    ASSERT_EQ(ret.getNumOperands(), 1u);
    EXPECT_TRUE(ret.getOperand(0).getDefiningOp<graph::CrossEntropyOp>());
    EXPECT_EQ(typeString(ret.getOperand(0).getType()), "tensor<f32>");
    EXPECT_EQ(main.getResultAttrOfType<StringAttr>(0, "graph.output")
                  .getValue(),
              "loss");
  }
}

TEST_F(SharedCasesTest, TinyGptImportsWithPyTorchsParameters) {
  // Both exports: the trainable initializers are exactly PyTorch's 53
  // parameters; the causal mask is a buffer whose mask arithmetic folds.
  for (const char *file : {"model.onnx", "model_opset17.onnx"}) {
    SCOPED_TRACE(file);
    auto module = importOk(sharedCase("tiny_gpt_untied", file));
    ASSERT_TRUE(module);
    int trainable = 0;
    module->walk([&](graph::ParamOp param) {
      if (param.getTrainable())
        ++trainable;
      else
        EXPECT_EQ(param.getParamName(), "transformer.h.0.attn.causal_mask");
    });
    EXPECT_EQ(trainable, 53);
    auto counts = countOps(*module);
    EXPECT_EQ(counts["graph.gather"], 2);
    EXPECT_EQ(counts["graph.erf"], 4);
    EXPECT_EQ(counts["graph.where"], 4);
    EXPECT_EQ(counts["graph.softmax"], 4);
  }
}

} // namespace
