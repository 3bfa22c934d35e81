//===- OnnxImporterFuzzer.cpp - libFuzzer target: the ONNX frontend -------===//
//
// Bytes -> ONNX model -> graph dialect module. Any input must end in a
// module that verifies or in a reported error; a crash, a sanitizer report,
// an uncaught exception, an "internal error" or a module that fails
// verification is a bug.
//
// The importer reads models from files (it resolves external data relative
// to the model's folder), so each input is written to `model.onnx` in a
// private temporary folder that holds nothing else.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Frontend/ONNX/Importer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

/// The private folder (removed at exit) and the model path inside it.
struct Scratch {
  std::string folder, model;
  Scratch() {
    // Memory-backed when possible: a disk file system would flush the model
    // on every close.
    const char *tmp = std::getenv("TMPDIR");
    struct stat shm;
    std::string base = tmp && *tmp ? tmp
                       : stat("/dev/shm", &shm) == 0 && S_ISDIR(shm.st_mode)
                           ? "/dev/shm"
                           : "/tmp";
    std::string pattern = base + "/pipecc-fuzz-onnx-XXXXXX";
    if (!mkdtemp(pattern.data())) {
      std::perror("pipecc-fuzz-onnx: mkdtemp");
      std::abort();
    }
    folder = pattern;
    model = folder + "/model.onnx";
  }
  ~Scratch() {
    unlink(model.c_str());
    rmdir(folder.c_str());
  }
};

Scratch &scratch() {
  static Scratch instance;
  return instance;
}

bool writeModel(const uint8_t *data, size_t size) {
  unlink(scratch().model.c_str());
  FILE *file = std::fopen(scratch().model.c_str(), "wb");
  if (!file)
    return false;
  bool ok = std::fwrite(data, 1, size, file) == size;
  return std::fclose(file) == 0 && ok;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!writeModel(data, size)) {
    std::perror("pipecc-fuzz-onnx: cannot write the model file");
    std::abort();
  }
  // Making a context and loading the dialects costs more than most imports:
  // one context serves a batch of inputs, then a fresh one drops what they
  // interned.
  static std::unique_ptr<mlir::MLIRContext> shared;
  static unsigned uses = 0;
  if (!shared || ++uses % 1000 == 0)
    shared = std::make_unique<mlir::MLIRContext>(
        mlir::MLIRContext::Threading::DISABLED);
  mlir::MLIRContext &context = *shared;
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  static constexpr llvm::StringLiteral kInternal = "internal error";
  unsigned errors = 0;
  mlir::ScopedDiagnosticHandler quiet(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() != mlir::DiagnosticSeverity::Error)
      return mlir::success();
    ++errors;
    // The importer calls its own bugs internal errors (unless the model
    // itself spells the words, e.g. in an op type the message quotes).
    std::string message = diag.str();
    if (llvm::StringRef(message).contains(kInternal) &&
        !input.contains(kInternal)) {
      std::fprintf(stderr, "pipecc-fuzz-onnx: %s\n", message.c_str());
      std::abort();
    }
    return mlir::success();
  });
  pipecc::frontend::ImportOptions options;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      pipecc::frontend::importONNXFile(scratch().model, options, &context);
  if (!module) {
    // A failed import must say why.
    if (errors == 0) {
      std::fprintf(stderr, "pipecc-fuzz-onnx: import failed silently\n");
      std::abort();
    }
    return 0;
  }
  if (mlir::failed(mlir::verify(*module))) {
    std::fprintf(stderr,
                 "pipecc-fuzz-onnx: the imported module does not verify\n");
    std::abort();
  }
  return 0;
}
