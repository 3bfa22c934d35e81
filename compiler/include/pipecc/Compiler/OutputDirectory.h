#ifndef PIPECC_COMPILER_OUTPUTDIRECTORY_H
#define PIPECC_COMPILER_OUTPUTDIRECTORY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <string>

namespace pipecc {

/// An output folder that appears whole or not at all: files are written into
/// a temporary sibling folder, which `commit` renames into place (replacing
/// an earlier output). Destroyed uncommitted, it removes what it wrote.
class OutputDirectory {
public:
  /// Checks `path` can be an output folder and creates the staging folder.
  static std::optional<OutputDirectory> create(llvm::StringRef path,
                                               std::string &error);
  OutputDirectory(OutputDirectory &&other) noexcept;
  OutputDirectory &operator=(OutputDirectory &&) = delete;
  ~OutputDirectory();

  /// The staging path of `relative`, for tools that write files themselves.
  std::string stagingPath(llvm::StringRef relative) const;
  bool writeFile(llvm::StringRef relative,
                 const std::function<void(llvm::raw_ostream &)> &write,
                 std::string &error);
  bool commit(std::string &error);

private:
  OutputDirectory(std::string finalPath, std::string stagingDir)
      : finalPath(std::move(finalPath)), stagingDir(std::move(stagingDir)) {}

  std::string finalPath;
  std::string stagingDir;
  bool committed = false;
};

} // namespace pipecc

#endif // PIPECC_COMPILER_OUTPUTDIRECTORY_H
