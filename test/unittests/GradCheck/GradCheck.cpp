//===- GradCheck.cpp - Compiled gradients against finite differences ------===//
#include "GradCheck.h"

#include "pipecc/Conversion/Pipelines.h"
#include "pipecc/Dialect/Graph/GraphDialect.h"
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>

using namespace mlir;
using namespace pipecc;

namespace pipecc::gradcheck {
namespace {

/// Central difference step, relative to the element (h ~ 1e-6 |x|).
constexpr double kRelativeStep = 1e-6;
/// Allowed |autodiff - finite difference|, relative to the larger of the
/// two, or to a tenth of the tensor's largest gradient element for elements
/// much smaller than that (their difference quotient is mostly rounding).
constexpr double kTolerance = 1e-6;
constexpr double kSmallElementFraction = 0.1;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// splitmix64: a deterministic stream, the same on every platform.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  double uniform() { // in [0, 1)
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }
  double draw(const Domain &domain) {
    double value = domain.lo + (domain.hi - domain.lo) * uniform();
    return domain.randomSign && uniform() < 0.5 ? -value : value;
  }

private:
  uint64_t state;
};

int64_t numElements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

/// The loss weights' parameter name; no case input may use it.
constexpr const char *kWeightsName = "loss_weights";

/// Replaces every `graph.param` of `func` by a new trailing argument, in
/// the order of `names`, so that compiled code reads inputs from buffers.
LogicalResult paramsToArguments(func::FuncOp func,
                                const std::vector<std::string> &names,
                                std::string &error) {
  std::map<std::string, graph::ParamOp> params;
  func.walk([&](graph::ParamOp param) {
    params[param.getParamName().str()] = param;
  });
  Block &entry = func.front();
  for (const std::string &name : names) {
    auto found = params.find(name);
    if (found == params.end()) {
      error = "no graph.param named '" + name + "'";
      return failure();
    }
    graph::ParamOp param = found->second;
    BlockArgument arg = entry.addArgument(param.getType(), param.getLoc());
    param.getResult().replaceAllUsesWith(arg);
    param.erase();
    params.erase(found);
  }
  if (!params.empty()) {
    error = "graph.param '" + params.begin()->first + "' is no case input";
    return failure();
  }
  func.setType(FunctionType::get(func.getContext(), entry.getArgumentTypes(),
                                 func.getResultTypes()));
  func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  return success();
}

std::string print(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

/// The compiled forward (`forward(inputs..., R, loss)`) and differentiated
/// (`gradient(inputs..., R, loss, grads...)`) functions of one case.
class CompiledCase {
public:
  /// Builds both; on failure `error` says where and why.
  bool build(const Case &c, std::string &error) {
    DialectRegistry registry;
    registry.insert<graph::GraphDialect, func::FuncDialect>();
    registerCPULoweringDialects(registry);
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    context.appendDialectRegistry(registry);
    context.disableMultithreading();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      llvm::raw_string_ostream os(diagnostics);
      os << diag.getLocation() << ": " << diag.str() << "\n";
      return success();
    });

    std::string source = mainFunction(c);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, ParserConfig(&context));
    if (!module) {
      error = "cannot parse:\n" + source + diagnostics;
      return false;
    }
    // The forward function, kept apart from the one autodiff rewrites.
    OwningOpRef<ModuleOp> forwardModule = module->clone();

    PassManager autodiff(&context);
    autodiff.addPass(createAutodiff());
    if (failed(autodiff.run(*module))) {
      error = "autodiff failed:\n" + diagnostics + source;
      return false;
    }
    auto gradient = module->lookupSymbol<func::FuncOp>("main");
    for (unsigned i = 1; i < gradient.getNumResults(); ++i) {
      auto name = gradient.getResultAttrOfType<StringAttr>(i, attrs::kGrad);
      if (!name) {
        error = "autodiff result " + std::to_string(i) + " names no input";
        return false;
      }
      gradientOf.push_back(name.str());
    }
    differentiatedIR = print(*module);

    std::vector<std::string> argumentOrder;
    for (const Input &input : c.inputs)
      argumentOrder.push_back(input.name);
    argumentOrder.push_back(kWeightsName);
    auto forward = forwardModule->lookupSymbol<func::FuncOp>("main");
    if (failed(paramsToArguments(forward, argumentOrder, error)) ||
        failed(paramsToArguments(gradient, argumentOrder, error)))
      return false;
    forward.setName("forward");
    gradient.setName("gradient");
    forward->moveBefore(gradient);

    PassManager lowering(&context);
    CPULoweringOptions options;
    buildCPULoweringPipeline(lowering, options);
    if (failed(lowering.run(*module))) {
      error = "lowering failed:\n" + diagnostics + differentiatedIR;
      return false;
    }

    static std::once_flag targetsInitialised;
    std::call_once(targetsInitialised, [] {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
    });
    ExecutionEngineOptions engineOptions;
    // As the driver's default -O2.
    engineOptions.transformer = makeOptimizingTransformer(2, 0, nullptr);
    auto created = ExecutionEngine::create(*module, engineOptions);
    if (!created) {
      error = "cannot JIT the lowered module: " +
              llvm::toString(created.takeError()) + "\n" + diagnostics;
      return false;
    }
    engine = std::move(*created);
    return true;
  }

  /// Runs `name` on buffers (each a pointer to its data, in order).
  bool call(llvm::StringRef name, std::vector<double *> buffers,
            std::string &error) {
    std::vector<void *> args;
    for (double *&buffer : buffers)
      args.push_back(&buffer);
    if (llvm::Error err = engine->invokePacked(name, args)) {
      error = llvm::toString(std::move(err));
      return false;
    }
    return true;
  }

  std::vector<std::string> gradientOf;
  std::string differentiatedIR;

private:
  MLIRContext context{MLIRContext::Threading::DISABLED};
  std::string diagnostics;
  std::unique_ptr<ExecutionEngine> engine;
};

} // namespace

std::string tensorType(const Shape &shape, const std::string &element) {
  std::string text = "tensor<";
  for (int64_t dim : shape)
    text += std::to_string(dim) + "x";
  return text + element + ">";
}

std::string expandBody(const Case &c) {
  std::map<std::string, std::string> types{{"y", tensorType(c.result)}};
  for (const Input &input : c.inputs)
    types[input.name] = tensorType(input.shape);
  std::string out;
  const std::string &body = c.body;
  for (size_t i = 0; i < body.size(); ++i) {
    size_t close = body.find('}', i);
    if (body[i] == '{' && close != std::string::npos) {
      auto found = types.find(body.substr(i + 1, close - i - 1));
      if (found != types.end()) {
        out += found->second;
        i = close;
        continue;
      }
    }
    out += body[i];
  }
  return out;
}

std::string mainFunction(const Case &c) {
  std::string y = tensorType(c.result);
  std::string text = "func.func @main() -> tensor<f64> {\n";
  for (const Input &input : c.inputs)
    text += llvm::formatv("  %{0} = graph.param \"{0}\"{1} : {2}\n",
                          input.name,
                          input.differentiable ? " trainable" : "",
                          tensorType(input.shape));
  text += "  " + expandBody(c) + "\n";
  text += llvm::formatv("  %loss_w = graph.param \"{0}\" : {1}\n"
                        "  %loss_p = graph.mul %y, %loss_w : {1}, {1}\n",
                        kWeightsName, y);
  if (c.result.empty())
    return text + "  return %loss_p : tensor<f64>\n}\n";
  std::vector<std::string> axes;
  for (size_t i = 0; i < c.result.size(); ++i)
    axes.push_back(std::to_string(i));
  text += llvm::formatv("  %loss = graph.reduce_sum %loss_p axes = [{0}] : "
                        "{1} -> tensor<f64>\n"
                        "  return %loss : tensor<f64>\n}\n",
                        llvm::join(axes, ", "), y);
  return text;
}

std::string checkCase(const Case &c, uint64_t seed) {
  std::string error;
  CompiledCase compiled;
  if (!compiled.build(c, error))
    return error;

  std::vector<std::string> trainable;
  for (const Input &input : c.inputs)
    if (input.differentiable)
      trainable.push_back(input.name);
  if (compiled.gradientOf != trainable)
    return "autodiff returned gradients of [" +
           llvm::join(compiled.gradientOf, ", ") + "], expected [" +
           llvm::join(trainable, ", ") + "]";

  std::ostringstream report;
  std::map<std::string, double> largestGradient;
  for (int point = 0; point < kPointsPerCase; ++point) {
    Random random(seed * 7919 + point);
    std::vector<std::vector<double>> inputs;
    for (const Input &input : c.inputs) {
      inputs.emplace_back(numElements(input.shape));
      for (double &value : inputs.back())
        value = random.draw(input.domain);
    }
    std::vector<double> weights(numElements(c.result));
    for (double &value : weights)
      value = random.draw(anywhere());

    auto buffers = [&](double *loss) {
      std::vector<double *> pointers;
      for (auto &data : inputs)
        pointers.push_back(data.data());
      pointers.push_back(weights.data());
      pointers.push_back(loss);
      return pointers;
    };
    double lossOfGradient = kNaN;
    std::vector<std::vector<double>> grads;
    std::vector<double *> gradientBuffers = buffers(&lossOfGradient);
    for (const std::string &name : trainable) {
      auto input = llvm::find_if(
          c.inputs, [&](const Input &in) { return in.name == name; });
      grads.emplace_back(numElements(input->shape), kNaN);
    }
    for (auto &grad : grads)
      gradientBuffers.push_back(grad.data());
    if (!compiled.call("gradient", gradientBuffers, error))
      return error;
    auto lossAt = [&]() {
      double loss = kNaN;
      if (!compiled.call("forward", buffers(&loss), error))
        return kNaN;
      return loss;
    };
    double loss = lossAt();
    if (!std::isfinite(loss))
      return "the forward loss is not finite at point " +
             std::to_string(point) + error;
    if (std::abs(lossOfGradient - loss) > 1e-12 * std::max(1.0, std::abs(loss)))
      report << "point " << point << ": the differentiated function's loss "
             << lossOfGradient << " differs from the forward loss " << loss
             << "\n";

    unsigned gradIndex = 0;
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      if (!c.inputs[k].differentiable)
        continue;
      const std::vector<double> &analytic = grads[gradIndex++];
      std::vector<double> &values = inputs[k];
      std::vector<double> numeric(values.size());
      double scale = 0;
      for (size_t i = 0; i < values.size(); ++i) {
        double x = values[i];
        double step = kRelativeStep * std::max(1.0, std::abs(x));
        double plus = x + step, minus = x - step;
        values[i] = plus;
        double lossPlus = lossAt();
        values[i] = minus;
        double lossMinus = lossAt();
        values[i] = x;
        numeric[i] = (lossPlus - lossMinus) / (plus - minus);
        scale = std::max({scale, std::abs(numeric[i]), std::abs(analytic[i])});
      }
      const std::string &name = c.inputs[k].name;
      largestGradient[name] = std::max(largestGradient[name], scale);
      int wrong = 0;
      for (size_t i = 0; i < values.size(); ++i) {
        double magnitude =
            std::max({std::abs(analytic[i]), std::abs(numeric[i]),
                      kSmallElementFraction * scale, 1e-12});
        double difference = std::abs(analytic[i] - numeric[i]);
        if (difference <= kTolerance * magnitude)
          continue;
        if (wrong++ < 4)
          report << "point " << point << ", d/d" << name << "[" << i
                 << "]: autodiff " << analytic[i] << ", finite difference "
                 << numeric[i] << " (relative error "
                 << difference / magnitude << ")\n";
      }
      if (wrong)
        report << "point " << point << ", d/d" << name << ": " << wrong
               << " of " << values.size() << " elements differ\n";
    }
  }
  // A loss that does not move with an input checks nothing (a single point
  // may legitimately sit where the gradient is 0, as relu's left half).
  for (const auto &[name, largest] : largestGradient)
    if (!(largest > 1e-6))
      report << "d/d" << name << ": degenerate case, the gradient is ~0 ("
             << largest << ") at every point\n";
  std::string failures = report.str();
  if (!failures.empty())
    failures += "differentiated IR:\n" + compiled.differentiatedIR;
  return failures;
}

std::string perOpTable(const std::vector<Case> &cases) {
  // Ops in the order the table first lists them.
  std::vector<std::string> order;
  std::map<std::string, std::pair<int64_t, int64_t>> counts;
  int64_t totalCases = 0, totalElements = 0;
  for (const Case &c : cases) {
    int64_t elements = 0;
    for (const Input &input : c.inputs)
      if (input.differentiable)
        elements += numElements(input.shape) * kPointsPerCase;
    if (!counts.count(c.op))
      order.push_back(c.op);
    auto &[caseCount, elementCount] = counts[c.op];
    ++caseCount;
    elementCount += elements;
    ++totalCases;
    totalElements += elements;
  }
  std::ostringstream os;
  os << "| op | cases | gradient elements checked |\n|---|---:|---:|\n";
  for (const std::string &op : order)
    os << "| `" << op << "` | " << counts[op].first << " | "
       << counts[op].second << " |\n";
  os << "| total | " << totalCases << " | " << totalElements << " |\n";
  return os.str();
}

} // namespace pipecc::gradcheck
