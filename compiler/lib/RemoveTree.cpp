// Removal of a folder tree that never follows a symbolic link.
#include "pipecc/Compiler/RemoveTree.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace pipecc;

namespace {

/// Removes the entry `name` of the open folder `parentFd`. Returns 0 or an
/// errno value.
int removeEntryAt(int parentFd, const char *name) {
  // unlink removes files and symbolic links (the link, not its target);
  // only a real folder fails, with EISDIR (Linux) or EPERM (POSIX).
  if (::unlinkat(parentFd, name, 0) == 0 || errno == ENOENT)
    return 0;
  if (errno != EISDIR && errno != EPERM)
    return errno;
  // O_NOFOLLOW: if the folder was swapped for a link since, this fails
  // rather than opening the link's target.
  int fd =
      ::openat(parentFd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : errno;
  // A file may appear while we empty the folder (a process still writing):
  // list and remove again until the folder itself goes.
  for (int attempt = 0; attempt < 8; ++attempt) {
    int listFd = ::dup(fd);
    if (listFd < 0)
      break;
    DIR *dir = ::fdopendir(listFd);
    if (!dir) {
      ::close(listFd);
      break;
    }
    ::rewinddir(dir);
    // Names first, removal after: removing while reading a folder may skip
    // entries.
    std::vector<std::string> names;
    while (struct dirent *entry = ::readdir(dir)) {
      if (std::strcmp(entry->d_name, ".") != 0 &&
          std::strcmp(entry->d_name, "..") != 0)
        names.emplace_back(entry->d_name);
    }
    ::closedir(dir);
    for (const std::string &child : names)
      if (int error = removeEntryAt(fd, child.c_str())) {
        ::close(fd);
        return error;
      }
    if (::unlinkat(parentFd, name, AT_REMOVEDIR) == 0 || errno == ENOENT) {
      ::close(fd);
      return 0;
    }
    if (errno != ENOTEMPTY && errno != EEXIST)
      break;
  }
  int error = errno ? errno : ENOTEMPTY;
  ::close(fd);
  return error;
}

} // namespace

bool pipecc::removeTree(llvm::StringRef path, std::string &error) {
  llvm::SmallString<256> parent(llvm::sys::path::parent_path(path));
  if (parent.empty())
    parent = ".";
  std::string name = llvm::sys::path::filename(path).str();
  if (name.empty() || name == "." || name == "..") {
    error = "cannot remove '" + path.str() + "': not a removable name";
    return false;
  }
  int parentFd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parentFd < 0) {
    if (errno == ENOENT)
      return true;
    error = "cannot remove '" + path.str() + "': " + std::strerror(errno);
    return false;
  }
  int result = removeEntryAt(parentFd, name.c_str());
  ::close(parentFd);
  if (result != 0) {
    error = "cannot remove '" + path.str() + "': " + std::strerror(result);
    return false;
  }
  return true;
}
