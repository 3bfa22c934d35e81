// The output folder: staged, recorded in a manifest, swapped into place.
// See docs/design.md, "Output folders and failures".
#include "pipecc/Compiler/OutputDirectory.h"

#include "pipecc/Compiler/FailureHandling.h"
#include "pipecc/Compiler/RemoveTree.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace pipecc;
namespace fs = llvm::sys::fs;

namespace {

/// A file name as a message may show it: non-printable bytes become \xNN,
/// so a name cannot forge a line of output.
std::string quoted(llvm::StringRef name) {
  std::string text = "'";
  for (unsigned char c : name) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      text += static_cast<char>(c);
    } else {
      text += "\\x";
      text += llvm::hexdigit(c >> 4, /*LowerCase=*/true);
      text += llvm::hexdigit(c & 15, /*LowerCase=*/true);
    }
  }
  return text + "'";
}

struct FileDigest {
  uint64_t size = 0;
  std::string sha256; // lower-case hex
};

/// Size and SHA-256 of a regular file; refuses to follow a symbolic link.
bool digestFile(const std::string &path, FileDigest &digest,
                std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  llvm::SHA256 hash;
  std::vector<uint8_t> buffer(1 << 20);
  digest.size = 0;
  while (true) {
    ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      error = "cannot read '" + path + "': " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (got == 0)
      break;
    hash.update(llvm::ArrayRef<uint8_t>(buffer.data(), got));
    digest.size += static_cast<uint64_t>(got);
  }
  ::close(fd);
  std::array<uint8_t, 32> bytes = hash.final();
  digest.sha256 = llvm::toHex(bytes, /*LowerCase=*/true);
  return true;
}

/// The manifest's entries: `<size> <sha256> <name>` per line, `#` comments.
llvm::StringMap<FileDigest> readManifest(llvm::StringRef folder) {
  llvm::StringMap<FileDigest> entries;
  llvm::SmallString<256> path(folder);
  llvm::sys::path::append(path, OutputDirectory::kManifestName);
  fs::file_status status;
  if (fs::status(path, status, /*follow=*/false) ||
      status.type() != fs::file_type::regular_file)
    return entries;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return entries;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    if (line.starts_with("#"))
      continue;
    auto [sizeText, rest] = line.split(' ');
    auto [hashText, name] = rest.split(' ');
    FileDigest digest;
    if (sizeText.getAsInteger(10, digest.size) || hashText.size() != 64 ||
        name.empty())
      continue;
    digest.sha256 = hashText.str();
    entries[name] = digest;
  }
  return entries;
}

/// What in `folder` pipecc may not replace: entries its manifest does not
/// list, or lists with another size or hash. Sorted, each quoted.
bool unclaimedEntries(llvm::StringRef folder,
                      std::vector<std::string> &unclaimed, std::string &error) {
  llvm::StringMap<FileDigest> manifest = readManifest(folder);
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(folder, ec, /*follow_symlinks=*/false), end;
       !ec && it != end; it.increment(ec))
    names.push_back(llvm::sys::path::filename(it->path()).str());
  if (ec) {
    error = "cannot read output folder " + quoted(folder) + ": " + ec.message();
    return false;
  }
  llvm::sort(names);
  for (const std::string &name : names) {
    llvm::SmallString<256> path(folder);
    llvm::sys::path::append(path, name);
    fs::file_status status;
    bool isFile = !fs::status(path, status, /*follow=*/false) &&
                  status.type() == fs::file_type::regular_file;
    // The manifest is pipecc's while it is a file (a folder by that name,
    // with whatever it holds, is not).
    if (name == OutputDirectory::kManifestName && isFile)
      continue;
    auto listed = manifest.find(name);
    if (listed == manifest.end() || !isFile) {
      unclaimed.push_back(quoted(name));
      continue;
    }
    FileDigest digest;
    std::string ignored;
    if (status.getSize() != listed->second.size ||
        !digestFile(std::string(path), digest, ignored) ||
        digest.sha256 != listed->second.sha256)
      unclaimed.push_back(quoted(name) + " (changed since pipecc wrote it)");
  }
  return true;
}

/// The real path of `path`, or empty if it has none.
std::string realPath(llvm::StringRef path) {
  llvm::SmallString<256> real;
  if (fs::real_path(path, real, /*expand_tilde=*/false))
    return "";
  return std::string(real);
}

/// Whether the model `input` lies in `folder` or below it.
bool holdsModel(llvm::StringRef folder, llvm::StringRef input) {
  if (input.empty())
    return false;
  std::string realFolder = realPath(folder), realInput = realPath(input);
  return !realFolder.empty() && !realInput.empty() &&
         llvm::StringRef(realInput).starts_with(realFolder + "/");
}

/// Refuses to replace the existing folder `path` unless pipecc may.
bool checkReplaceable(llvm::StringRef path,
                      const OutputDirectory::Options &options,
                      std::string &error) {
  if (holdsModel(path, options.inputPath)) {
    error = "output folder " + quoted(path) + " holds the model being " +
            "compiled, " + quoted(options.inputPath) +
            "; give another output folder (not even --force replaces a "
            "folder holding the model)";
    return false;
  }
  if (options.force)
    return true;
  std::vector<std::string> unclaimed;
  if (!unclaimedEntries(path, unclaimed, error))
    return false;
  if (unclaimed.empty())
    return true;
  constexpr size_t kShown = 5;
  std::string list;
  for (size_t i = 0; i < unclaimed.size() && i < kShown; ++i)
    list += (i ? ", " : "") + unclaimed[i];
  if (unclaimed.size() > kShown)
    list += " and " + std::to_string(unclaimed.size() - kShown) + " more";
  error = "output folder " + quoted(path) +
          " holds files pipecc did not write: " + list +
          "; give a new or empty folder, or --force to replace the folder "
          "and everything in it";
  return false;
}

/// Whether `path` exists; a symbolic link or non-folder there is an error.
bool existingFolder(llvm::StringRef path, bool &exists, std::string &error) {
  fs::file_status status;
  exists = false;
  if (std::error_code ec = fs::status(path, status, /*follow=*/false)) {
    if (ec == std::errc::no_such_file_or_directory)
      return true;
    error = "cannot use output path " + quoted(path) + ": " + ec.message();
    return false;
  }
  if (fs::is_symlink_file(status)) {
    error = "output path " + quoted(path) +
            " is a symbolic link; give the folder it points to";
    return false;
  }
  if (!fs::is_directory(status)) {
    error = "output path " + quoted(path) + " exists and is not a folder";
    return false;
  }
  exists = true;
  return true;
}

/// Creates a fresh folder `<prefix>XXXXXX` (mkdtemp: an unpredictable name,
/// created exclusively, so nothing planted at a name can be reused).
bool createUniqueFolder(const std::string &prefix, std::string &path,
                        std::string &error) {
  std::string pattern = prefix + "XXXXXX";
  if (!::mkdtemp(pattern.data())) {
    error = "cannot create a folder next to " + quoted(prefix) + ": " +
            std::strerror(errno);
    return false;
  }
  path = pattern;
  return true;
}

/// Moves `from` to the free name `to`, without replacing anything there.
int renameNoReplace(const std::string &from, const std::string &to) {
#ifdef RENAME_NOREPLACE
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(),
                  RENAME_NOREPLACE) == 0)
    return 0;
  if (errno != EINVAL && errno != ENOSYS)
    return errno;
#endif
  // Without renameat2, rename replaces at most an empty folder.
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

} // namespace

OutputDirectory::OutputDirectory(std::string finalPath, std::string stagingDir,
                                 Options options)
    : finalPath(std::move(finalPath)), stagingDir(std::move(stagingDir)),
      options(std::move(options)) {}

std::optional<OutputDirectory> OutputDirectory::create(llvm::StringRef path,
                                                       const Options &options,
                                                       std::string &error) {
  bool exists = false;
  if (!existingFolder(path, exists, error))
    return std::nullopt;
  if (exists && !checkReplaceable(path, options, error))
    return std::nullopt;

  llvm::SmallString<256> absolute(path);
  fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  llvm::StringRef parent = llvm::sys::path::parent_path(absolute);
  if (std::error_code ec = fs::create_directories(parent)) {
    error = "cannot create the folder containing output " + quoted(path) +
            ": " + ec.message();
    return std::nullopt;
  }
  // Held until the staging folder is registered, so a signal cannot leave
  // it behind.
  auto hold = holdFailureCleanup();
  std::string staging;
  if (!createUniqueFolder(std::string(absolute) + ".pipecc-staging-", staging,
                          error))
    return std::nullopt;
  // mkdtemp makes the folder private; the output gets mkdir's usual mode.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(staging.c_str(), 0777 & ~mask);
  setStagingFolderForCleanup(staging);
  return OutputDirectory(std::string(absolute), staging, options);
}

OutputDirectory::OutputDirectory(OutputDirectory &&other) noexcept
    : finalPath(std::move(other.finalPath)),
      stagingDir(std::move(other.stagingDir)),
      options(std::move(other.options)), committed(other.committed) {
  other.committed = true; // the moved-from object owns nothing
}

OutputDirectory::~OutputDirectory() {
  if (committed)
    return;
  std::string ignored;
  removeTree(stagingDir, ignored);
  setStagingFolderForCleanup("");
}

std::string OutputDirectory::stagingPath(llvm::StringRef relative) const {
  llvm::SmallString<256> path(stagingDir);
  llvm::sys::path::append(path, relative);
  return std::string(path);
}

bool OutputDirectory::writeFile(
    llvm::StringRef relative,
    const std::function<void(llvm::raw_ostream &)> &write, std::string &error) {
  std::error_code ec;
  std::string path = stagingPath(relative);
  llvm::raw_fd_ostream os(path, ec, fs::CD_CreateNew, fs::FA_Write,
                          fs::OF_None);
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
  // The manifest lists every file of the staging folder: all of them are
  // pipecc's.
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(stagingDir, ec, /*follow_symlinks=*/false),
       end;
       !ec && it != end; it.increment(ec))
    names.push_back(llvm::sys::path::filename(it->path()).str());
  if (ec) {
    error = "cannot read '" + stagingDir + "': " + ec.message();
    return false;
  }
  llvm::sort(names);
  std::string manifest =
      "# Files pipecc wrote into this folder: size in bytes, SHA-256, name.\n"
      "# pipecc replaces the folder only while each file in it is listed\n"
      "# here, unchanged (or with --force).\n";
  for (const std::string &name : names) {
    FileDigest digest;
    if (!digestFile(stagingPath(name), digest, error))
      return false;
    manifest +=
        std::to_string(digest.size) + " " + digest.sha256 + " " + name + "\n";
  }
  if (!writeFile(
          kManifestName, [&](llvm::raw_ostream &os) { os << manifest; }, error))
    return false;

  // From here a signal waits until the swap is done.
  auto hold = holdFailureCleanup();
  // Check again: the folder may have changed during the compile.
  bool exists = false;
  if (!existingFolder(finalPath, exists, error) ||
      (exists && !checkReplaceable(finalPath, options, error)))
    return false;

  if (!exists) {
    if (int code = renameNoReplace(stagingDir, finalPath)) {
      error = "cannot create " + quoted(finalPath) + ": " + std::strerror(code);
      return false;
    }
    committed = true;
    setStagingFolderForCleanup("");
    return true;
  }

  // Swap: afterwards the old output is in a folder of ours, to remove.
  std::string old;
#ifdef RENAME_EXCHANGE
  if (::renameat2(AT_FDCWD, stagingDir.c_str(), AT_FDCWD, finalPath.c_str(),
                  RENAME_EXCHANGE) == 0) {
    old = stagingDir;
  } else if (errno != EINVAL && errno != ENOSYS) {
    error = "cannot replace " + quoted(finalPath) + ": " + std::strerror(errno);
    return false;
  }
#endif
  if (old.empty()) {
    // Without an atomic exchange: move the old output over an empty folder
    // of ours (rename replaces only an empty folder), then the new one in.
    if (!createUniqueFolder(finalPath + ".pipecc-old-", old, error))
      return false;
    if (::rename(finalPath.c_str(), old.c_str()) != 0) {
      error =
          "cannot replace " + quoted(finalPath) + ": " + std::strerror(errno);
      ::rmdir(old.c_str());
      return false;
    }
    if (int code = renameNoReplace(stagingDir, finalPath)) {
      ::rename(old.c_str(), finalPath.c_str());
      error = "cannot create " + quoted(finalPath) + ": " + std::strerror(code);
      return false;
    }
  }
  committed = true;
  setStagingFolderForCleanup(old);
  std::string removeError;
  if (!removeTree(old, removeError))
    llvm::errs() << "pipecc: warning: the new output is in place, but the "
                    "previous one stays in "
                 << quoted(old) << ": " << removeError << "\n";
  setStagingFolderForCleanup("");
  return true;
}
