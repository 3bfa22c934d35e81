#ifndef PIPECC_COMPILER_OUTPUTDIRECTORY_H
#define PIPECC_COMPILER_OUTPUTDIRECTORY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <string>

namespace pipecc {

/// An output folder that appears whole or not at all, and that replaces only
/// what pipecc wrote itself. Files are written into a staging folder beside
/// it (a fresh, unpredictable name, created exclusively); `commit` records
/// them in a manifest (`.pipecc-manifest`: size and SHA-256 of each file) and
/// swaps the staging folder into place. An existing folder is replaced only
/// if it is empty or everything in it is a file its manifest lists,
/// unchanged; `force` replaces it anyway, but never when the model being
/// compiled lies inside it. Destroyed uncommitted, it removes what it wrote.
/// No removal follows a symbolic link.
class OutputDirectory {
public:
  struct Options {
    /// Replace the folder even if it holds files pipecc did not write.
    bool force = false;
    /// The model being compiled: an output folder holding it is refused.
    std::string inputPath;
  };

  /// The name of the manifest inside every output folder.
  static constexpr llvm::StringLiteral kManifestName = ".pipecc-manifest";

  /// Checks `path` can be an output folder and creates the staging folder.
  static std::optional<OutputDirectory>
  create(llvm::StringRef path, const Options &options, std::string &error);
  OutputDirectory(OutputDirectory &&other) noexcept;
  OutputDirectory &operator=(OutputDirectory &&) = delete;
  ~OutputDirectory();

  /// The staging path of `relative`, for tools that write files themselves.
  std::string stagingPath(llvm::StringRef relative) const;
  /// Creates `relative` in the staging folder (it must not exist yet) and
  /// fills it with `write`; fails with `error` if any write failed.
  bool writeFile(llvm::StringRef relative,
                 const std::function<void(llvm::raw_ostream &)> &write,
                 std::string &error);
  bool commit(std::string &error);

private:
  OutputDirectory(std::string finalPath, std::string stagingDir,
                  Options options);

  std::string finalPath;
  std::string stagingDir;
  Options options;
  bool committed = false;
};

} // namespace pipecc

#endif // PIPECC_COMPILER_OUTPUTDIRECTORY_H
