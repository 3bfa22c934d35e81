// From the LLVM dialect to an object file and a linked rank executable.
#include "pipecc/Compiler/ObjectEmitter.h"

#include "pipecc/Compiler/FailureHandling.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

using namespace mlir;
using namespace pipecc;

static llvm::CodeGenOptLevel codeGenOptLevel(unsigned optLevel) {
  switch (optLevel) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 2:
    return llvm::CodeGenOptLevel::Default;
  default:
    return llvm::CodeGenOptLevel::Aggressive;
  }
}

static std::unique_ptr<llvm::TargetMachine>
createHostTargetMachine(unsigned optLevel, const codegen::TargetCPU &cpu,
                        std::string &error) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  std::string triple = llvm::sys::getProcessTriple();
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  // --target-cpu: the host's model by default (its vector ISA for the
  // element-wise loops); `generic` for executables that run on any CPU of
  // the architecture.
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, cpu.cpu, cpu.features, options, llvm::Reloc::PIC_, std::nullopt,
      codeGenOptLevel(optLevel)));
}

/// A constructor that calls pipecc_rt_require_cpu_features before main, so
/// that a CPU without the model's features gets an error, not SIGILL. It is
/// itself compiled for the baseline CPU: it runs before the check.
static void addCPUFeatureCheck(llvm::Module &module,
                               const codegen::TargetCPU &cpu) {
  if (cpu.required.empty())
    return;
  llvm::LLVMContext &ctx = module.getContext();
  std::string features;
  for (const std::string &name : cpu.required)
    features += (features.empty() ? "" : ",") + name;
  llvm::IRBuilder<> builder(ctx);
  auto *ptrType = llvm::PointerType::getUnqual(ctx);
  llvm::FunctionCallee require = module.getOrInsertFunction(
      "pipecc_rt_require_cpu_features",
      llvm::FunctionType::get(builder.getVoidTy(), {ptrType, ptrType}, false));
  auto *check = llvm::Function::Create(
      llvm::FunctionType::get(builder.getVoidTy(), false),
      llvm::GlobalValue::InternalLinkage, "pipecc.require_cpu_features",
      module);
  check->addFnAttr("target-cpu", "generic");
  check->addFnAttr("target-features", "");
  check->addFnAttr(llvm::Attribute::NoInline);
  builder.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", check));
  builder.CreateCall(require,
                     {builder.CreateGlobalStringPtr(cpu.option, "pipecc.cpu"),
                      builder.CreateGlobalStringPtr(features,
                                                    "pipecc.cpu_features")});
  builder.CreateRetVoid();
  // Before every other constructor of the executable that could use them.
  llvm::appendToGlobalCtors(module, check, /*Priority=*/101);
}

/// At -O3 LLVM fully unrolls a short loop around a loop (the 16 rows of a
/// 16x256 elementwise op): one op becomes 16 loops in a row, and
/// IndVarSimplify's time grows with the square of the loops in a function
/// (ScalarEvolution walks back over every earlier loop's guard). Loops that
/// hold loops stay rolled; innermost loops unroll and vectorize as before.
static void keepOuterLoopsRolled(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::MDNode *disable = llvm::MDNode::get(
      ctx, llvm::MDString::get(ctx, "llvm.loop.unroll.disable"));
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    llvm::DominatorTree dominators(function);
    llvm::LoopInfo loops(dominators);
    for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
      if (loop->isInnermost())
        continue;
      // A loop ID is a distinct node whose first operand is itself.
      SmallVector<llvm::Metadata *> properties{nullptr};
      if (llvm::MDNode *old = loop->getLoopID())
        properties.append(old->op_begin() + 1, old->op_end());
      properties.push_back(disable);
      llvm::MDNode *id = llvm::MDNode::getDistinct(ctx, properties);
      id->replaceOperandWith(0, id);
      loop->setLoopID(id);
    }
  }
}

LogicalResult
codegen::emitObjectFile(ModuleOp module, StringRef objectPath,
                        unsigned optLevel, const TargetCPU &cpu,
                        const DialectRegistry &translations,
                        llvm::function_ref<void(llvm::Module &)> adjust) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);
  module.getContext()->appendDialectRegistry(translations);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return module.emitError("cannot translate the rank module to LLVM IR");

  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      createHostTargetMachine(optLevel, cpu, error);
  if (!machine)
    return module.emitError("no LLVM target for this host: ") << error;
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(machine->getTargetTriple().str());

  if (adjust)
    adjust(*llvmModule);
  if (cpu.vectorBits)
    for (llvm::Function &function : *llvmModule)
      if (!function.isDeclaration())
        function.addFnAttr("prefer-vector-width",
                           std::to_string(cpu.vectorBits));
  addCPUFeatureCheck(*llvmModule, cpu);
  keepOuterLoopsRolled(*llvmModule);
  auto optimize = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0,
                                            machine.get());
  if (llvm::Error err = optimize(llvmModule.get())) {
    std::string message = llvm::toString(std::move(err));
    return module.emitError("LLVM optimisation failed: ") << message;
  }

  std::error_code ec;
  llvm::raw_fd_ostream os(objectPath, ec, llvm::sys::fs::CD_CreateNew,
                          llvm::sys::fs::FA_Write, llvm::sys::fs::OF_None);
  if (ec)
    return module.emitError("cannot write '")
           << objectPath << "': " << ec.message();
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return module.emitError("the host target cannot emit object files");
  passes.run(*llvmModule);
  os.close();
  if (os.has_error()) {
    std::error_code writeError = os.error();
    os.clear_error();
    return module.emitError("cannot write '")
           << objectPath << "': " << writeError.message();
  }
  return success();
}

/// Runs the linker with output to `logPath` and returns its exit status
/// (-1 if it could not run or was killed). pipecc keeps its termination
/// signals blocked (a dedicated thread takes them), so the linker gets them
/// unblocked, in a process group of its own that the signal thread kills
/// whole (the compiler driver and the linker it starts) before removing the
/// staging folder they write into.
static int runLinker(ArrayRef<std::string> args, StringRef logPath,
                     std::string &error) {
  std::vector<char *> argv;
  for (const std::string &arg : args)
    argv.push_back(const_cast<char *>(arg.c_str()));
  argv.push_back(nullptr);
  std::string log = logPath.str();

  posix_spawn_file_actions_t files;
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, log.c_str(),
                                   O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setpgroup(&attributes, 0);
  // The signals pipecc ignores for itself get their usual meaning back.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGXFSZ);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK |
                                            POSIX_SPAWN_SETSIGDEF |
                                            POSIX_SPAWN_SETPGROUP);
  pid_t pid = 0;
  // Held until the linker is registered, so a signal cannot miss it.
  auto hold = holdFailureCleanup();
  int spawnError = posix_spawn(&pid, argv[0], &files, &attributes,
                               argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attributes);
  if (spawnError != 0) {
    error = "cannot run '" + args[0] + "': " + std::strerror(spawnError);
    return -1;
  }
  setChildProcessForCleanup(pid);
  hold.unlock();
  int waitStatus = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid, &waitStatus, 0);
  } while (waited < 0 && errno == EINTR);
  setChildProcessForCleanup(0);
  if (waited < 0) {
    error = std::string("cannot wait for the linker: ") + std::strerror(errno);
    return -1;
  }
  if (WIFSIGNALED(waitStatus)) {
    error = std::string("the linker was killed by ") +
            strsignal(WTERMSIG(waitStatus));
    return -1;
  }
  return WEXITSTATUS(waitStatus);
}

std::string codegen::runtimeLinkFile(StringRef name) {
  return (Twine(PIPECC_RUNTIME_LIBRARY_DIR) + "/" + name).str();
}

bool codegen::linkRankExecutable(ArrayRef<std::string> objects,
                                 StringRef executablePath,
                                 StringRef linkFile,
                                 ArrayRef<std::string> extraArgs,
                                 std::string &error) {
  const char *cxxEnv = std::getenv("PIPECC_CXX");
  std::string cxxName = cxxEnv && *cxxEnv ? cxxEnv : "c++";
  llvm::ErrorOr<std::string> cxx = llvm::sys::findProgramByName(cxxName);
  if (!cxx) {
    error = "cannot find the C++ compiler driver '" + cxxName +
            "' to link rank executables (set PIPECC_CXX)";
    return false;
  }
  SmallVector<std::string> args{*cxx};
  args.append(objects.begin(), objects.end());
  args.push_back(("@" + linkFile).str());
  args.append(extraArgs.begin(), extraArgs.end());
  args.push_back("-o");
  args.push_back(executablePath.str());

  SmallString<128> logPath;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "pipecc-link", "log", logPath)) {
    error = "cannot create the linker's log file: " + ec.message();
    return false;
  }
  std::string execError;
  int status = runLinker(args, logPath, execError);
  std::string log;
  if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
    log = (*buffer)->getBuffer().str();
  llvm::sys::fs::remove(logPath);
  if (status != 0) {
    // One line: the linker's first error, else its first line.
    SmallVector<StringRef> lines;
    StringRef(log).split(lines, '\n', -1, /*KeepEmpty=*/false);
    StringRef firstLine = lines.empty() ? "" : lines.front().trim();
    for (StringRef line : lines)
      if (line.contains_insensitive("error") || line.contains("failed")) {
        firstLine = line.trim();
        break;
      }
    error = "linking '" + executablePath.str() + "' failed" +
            (execError.empty() ? "" : ": " + execError) +
            (firstLine.empty() ? "" : ": " + firstLine.str());
    return false;
  }
  return true;
}
