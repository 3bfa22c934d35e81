// The target registry and what each target does with a lowered rank module.
#include "pipecc/Compiler/TargetBackend.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace mlir;
using namespace pipecc::target;

namespace {

TEST(TargetBackendTest, RegistryNamesBothTargets) {
  ASSERT_EQ(targetNames().size(), 2u);
  EXPECT_EQ(targetNames()[0], "cpu");
  EXPECT_EQ(targetNames()[1], "cuda");
  EXPECT_EQ(targetNameList(), "cpu, cuda");
  for (llvm::StringRef name : targetNames()) {
    const TargetBackend *target = lookupTarget(name);
    ASSERT_NE(target, nullptr);
    EXPECT_EQ(target->getName(), name);
  }
  EXPECT_EQ(lookupTarget("tpu"), nullptr);
  EXPECT_EQ(lookupTarget(""), nullptr);
}

TEST(TargetBackendTest, GpuArchitectures) {
  for (const char *arch :
       {"sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"})
    EXPECT_FALSE(checkGpuArch(arch).has_value()) << arch;
  for (const char *arch : {"", "sm_70", "sm_100", "90", "sm_90b", "SM_90",
                           "compute_90", "sm_80a"}) {
    std::optional<std::string> error = checkGpuArch(arch);
    ASSERT_TRUE(error.has_value()) << arch;
    EXPECT_EQ(*error, std::string("--gpu-arch ") + arch +
                          ": expected one of sm_75, sm_80, sm_86, sm_87, "
                          "sm_89, sm_90, sm_90a");
  }
  TargetOptions options;
  options.gpuArch = "sm_61";
  EXPECT_TRUE(lookupTarget("cuda")->verifyOptions(options).has_value());
  // The CPU target has no use for it.
  EXPECT_FALSE(lookupTarget("cpu")->verifyOptions(options).has_value());
}

/// A temporary folder removed with its files at the end of the test.
struct TempDir {
  llvm::SmallString<128> path;
  TempDir() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("pipecc-target", path));
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<128> result(path);
    llvm::sys::path::append(result, name);
    return std::string(result);
  }
};

// The CUDA object embeds the device binary of each gpu.binary op (the
// fatbin the stage lowering produced), so the executable needs no file
// beside it.
TEST(TargetBackendTest, CudaObjectEmbedsGpuBinary) {
  const TargetBackend *cuda = lookupTarget("cuda");
  DialectRegistry registry;
  cuda->getDependentDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // A stage function as the gpu-to-llvm lowering leaves it: one launch of a
  // kernel of the binary.
  const char *source = R"mlir(
    module attributes {gpu.container_module} {
      gpu.binary @stage_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, "PIPECC-FATBIN-MARKER">]
      llvm.func @stage0_forward(%arg0: !llvm.ptr) {
        %c1 = llvm.mlir.constant(1 : index) : i64
        gpu.launch_func @stage_kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i64 args(%arg0 : !llvm.ptr)
        llvm.return
      }
    }
  )mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module);
  TempDir dir;
  std::string object = dir.file("rank0.o");
  TargetOptions options;
  options.name = "cuda";
  ASSERT_TRUE(succeeded(cuda->serializeObject(*module, object, options)));
  auto contents = llvm::MemoryBuffer::getFile(object);
  ASSERT_TRUE(bool(contents));
  llvm::StringRef bytes = (*contents)->getBuffer();
  EXPECT_NE(bytes.find("PIPECC-FATBIN-MARKER"), llvm::StringRef::npos);
  // Loaded and launched through the mgpu* host ABI the CUDA runtime
  // implements.
  EXPECT_NE(bytes.find("mgpuModuleLoad"), llvm::StringRef::npos);
  EXPECT_NE(bytes.find("mgpuLaunchKernel"), llvm::StringRef::npos);
}

// Without the CUDA runtime's link file the link stops, naming the file.
TEST(TargetBackendTest, CudaLinkNamesMissingRuntime) {
  TempDir dir;
  std::string missing = dir.file("pipecc_runtime_cuda_link.rsp");
  ASSERT_EQ(setenv("PIPECC_RUNTIME_CUDA_LINK_FILE", missing.c_str(), 1), 0);
  std::string error;
  EXPECT_FALSE(lookupTarget("cuda")->linkExecutable({dir.file("rank0.o")},
                                                     dir.file("rank0"), error));
  unsetenv("PIPECC_RUNTIME_CUDA_LINK_FILE");
  EXPECT_NE(error.find("cannot find the CUDA runtime's link file '" + missing +
                       "'"),
            std::string::npos)
      << error;
  EXPECT_FALSE(llvm::sys::fs::exists(dir.file("rank0")));
}

} // namespace
