#include "pipecc/Compiler/OutputFile.h"

#include "pipecc/Compiler/FailureHandling.h"
#include "pipecc/Compiler/RemoveTree.h"
#include "pipecc/Support/Escape.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace pipecc;
namespace fs = llvm::sys::fs;

bool pipecc::checkOutputFile(llvm::StringRef path, bool force,
                             std::string &error) {
  std::string quoted = support::quote(path);
  fs::file_status status;
  if (!fs::status(path, status, /*follow=*/false) && fs::exists(status)) {
    if (status.type() == fs::file_type::symlink_file) {
      error = quoted + " is a symbolic link; give the file it points to";
      return false;
    }
    if (status.type() != fs::file_type::regular_file) {
      error = quoted + " exists and is not a file";
      return false;
    }
    if (!force) {
      error = quoted + " exists; pipecc replaces no file it may not have "
                       "written (--force replaces it)";
      return false;
    }
  }
  return true;
}

bool pipecc::writeOutputFile(
    llvm::StringRef path, bool force,
    const std::function<void(llvm::raw_ostream &)> &write,
    std::string &error) {
  if (!checkOutputFile(path, force, error))
    return false;
  std::string quoted = support::quote(path);
  llvm::SmallString<256> model(path);
  model += ".pipecc-%%%%%%";
  int fd = -1;
  llvm::SmallString<256> temporary;
  if (std::error_code ec = fs::createUniqueFile(model, fd, temporary)) {
    error = "cannot create " + quoted + ": " + ec.message();
    return false;
  }
  setStagingFolderForCleanup(temporary);
  auto discard = [&](std::string message) {
    std::string ignored;
    removeTree(temporary, ignored);
    setStagingFolderForCleanup("");
    error = std::move(message);
    return false;
  };
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    write(os);
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      return discard("cannot write " + quoted + ": " + ec.message());
    }
  }
  {
    auto lock = holdFailureCleanup();
    if (std::error_code ec = fs::rename(temporary, path))
      return discard("cannot write " + quoted + ": " + ec.message());
    setStagingFolderForCleanup("");
  }
  return true;
}
