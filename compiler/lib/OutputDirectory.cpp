#include "pipecc/Compiler/OutputDirectory.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace pipecc;
namespace fs = llvm::sys::fs;

std::optional<OutputDirectory>
OutputDirectory::create(llvm::StringRef path, std::string &error) {
  fs::file_status status;
  if (!fs::status(path, status, /*follow=*/false)) {
    if (fs::is_symlink_file(status)) {
      error = ("output path '" + path +
               "' is a symbolic link; give the folder it points to")
                  .str();
      return std::nullopt;
    }
    if (!fs::is_directory(status)) {
      error = ("output path '" + path + "' exists and is not a folder").str();
      return std::nullopt;
    }
    // Replacing a folder deletes what it holds: only an earlier pipecc
    // output (which always has graph.mlir) or an empty folder qualifies.
    std::error_code ec;
    fs::directory_iterator first(path, ec), end;
    llvm::SmallString<256> marker(path);
    llvm::sys::path::append(marker, "graph.mlir");
    if (!ec && first != end && !fs::exists(marker)) {
      error = ("output folder '" + path +
               "' exists and is not an earlier pipecc output; give a new or "
               "empty folder")
                  .str();
      return std::nullopt;
    }
  }
  llvm::SmallString<256> absolute(path);
  fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  llvm::StringRef parent = llvm::sys::path::parent_path(absolute);
  if (std::error_code ec = fs::create_directories(parent)) {
    error = ("cannot create the folder containing output '" + path +
             "': " + ec.message())
                .str();
    return std::nullopt;
  }
  std::string staging =
      (absolute + ".pipecc-tmp-" +
       llvm::Twine(llvm::sys::Process::getProcessId()))
          .str();
  fs::remove_directories(staging);
  if (std::error_code ec = fs::create_directory(staging)) {
    error = ("cannot create output folder next to '" + path +
             "': " + ec.message())
                .str();
    return std::nullopt;
  }
  return OutputDirectory(std::string(absolute), staging);
}

OutputDirectory::OutputDirectory(OutputDirectory &&other) noexcept
    : finalPath(std::move(other.finalPath)),
      stagingDir(std::move(other.stagingDir)), committed(other.committed) {
  other.committed = true; // the moved-from object owns nothing
}

OutputDirectory::~OutputDirectory() {
  if (!committed)
    fs::remove_directories(stagingDir);
}

std::string OutputDirectory::stagingPath(llvm::StringRef relative) const {
  llvm::SmallString<256> path(stagingDir);
  llvm::sys::path::append(path, relative);
  return std::string(path);
}

bool OutputDirectory::writeFile(
    llvm::StringRef relative,
    const std::function<void(llvm::raw_ostream &)> &write,
    std::string &error) {
  std::error_code ec;
  std::string path = stagingPath(relative);
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write '" + path + "': " + ec.message();
    return false;
  }
  write(os);
  os.close();
  if (os.has_error()) {
    error = "cannot write '" + path + "': " + os.error().message();
    os.clear_error();
    return false;
  }
  return true;
}

bool OutputDirectory::commit(std::string &error) {
  // An earlier output is moved aside first, so a failed rename restores it.
  std::string previous = finalPath + ".pipecc-old";
  bool hadPrevious = fs::exists(finalPath);
  if (hadPrevious) {
    fs::remove_directories(previous);
    if (std::error_code ec = fs::rename(finalPath, previous)) {
      error = "cannot replace '" + finalPath + "': " + ec.message();
      return false;
    }
  }
  if (std::error_code ec = fs::rename(stagingDir, finalPath)) {
    if (hadPrevious)
      fs::rename(previous, finalPath);
    error = "cannot create '" + finalPath + "': " + ec.message();
    return false;
  }
  if (hadPrevious)
    fs::remove_directories(previous);
  committed = true;
  return true;
}
