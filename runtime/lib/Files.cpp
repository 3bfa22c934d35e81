//===- Files.cpp ----------------------------------------------------------===//
#include "pipecc/Runtime/Files.h"
#include "pipecc/Runtime/Error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pipecc::rt {

namespace {
/// Closes a descriptor on every path out of a function.
class FileDescriptor {
public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  int get() const { return fd_; }
  /// Closes now, reporting close's error (NFS reports write errors here).
  int close() {
    int result = ::close(fd_);
    fd_ = -1;
    return result;
  }

private:
  int fd_;
};

const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a folder";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

std::string folderOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string baseNameOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool writeAll(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t written = ::write(fd, data, size);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0) {
      if (written == 0)
        errno = EIO;
      return false;
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}
} // namespace

std::vector<char> readRegularFile(const std::string &path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
  // writer. It is cleared below for the regular file actually read.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0)
    fail(path, ": cannot open: ", std::strerror(errno));
  struct stat info;
  if (::fstat(fd.get(), &info) != 0)
    fail(path, ": cannot stat: ", std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    fail(path, ": is ", fileKind(info.st_mode), ", expected a regular file");
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0)
    ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  std::vector<char> bytes(static_cast<size_t>(info.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t got = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      fail(path, ": read error: ", std::strerror(errno));
    if (got == 0)
      fail(path, ": file shrank while being read (", done, " of ", bytes.size(),
           " bytes)");
    done += static_cast<size_t>(got);
  }
  return bytes;
}

void checkOutputFile(const std::string &path) {
  // The file is written beside its target and renamed over it: renaming
  // over a device or folder would replace it.
  struct stat target;
  if (::stat(path.c_str(), &target) == 0 && !S_ISREG(target.st_mode))
    fail(path, ": exists and is not a regular file");
  std::string folder = folderOf(path);
  struct stat parent;
  if (::stat(folder.c_str(), &parent) != 0 || !S_ISDIR(parent.st_mode))
    fail(path, ": folder '", folder, "' does not exist");
}

void writeFileAtomically(const std::string &path, const void *data,
                         size_t size) {
  checkOutputFile(path);
  // mkostemp creates with O_CREAT | O_EXCL under a random name: a link or
  // file planted at any name is never opened, let alone followed.
  std::string tempPath = folderOf(path) + "/." + baseNameOf(path) + ".XXXXXX";
  FileDescriptor fd(::mkostemp(tempPath.data(), O_CLOEXEC));
  if (fd.get() < 0)
    fail(path, ": cannot create a temporary file in '", folderOf(path),
         "': ", std::strerror(errno));
  auto failAndRemove = [&](const char *what) {
    int savedErrno = errno;
    ::unlink(tempPath.c_str());
    fail(path, ": ", what, ": ", std::strerror(savedErrno));
  };
  // mkostemp makes the file 0600; give it the mode a plain create would.
  mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd.get(), 0666 & ~mask) != 0)
    failAndRemove("cannot set the temporary file's mode");
  if (!writeAll(fd.get(), static_cast<const char *>(data), size))
    failAndRemove("write failed");
  if (::fsync(fd.get()) != 0)
    failAndRemove("fsync failed");
  if (fd.close() != 0)
    failAndRemove("close failed");
  if (::rename(tempPath.c_str(), path.c_str()) != 0)
    failAndRemove("cannot rename the temporary file into place");
  // Make the rename itself durable; a failure here loses nothing written.
  FileDescriptor folder(
      ::open(folderOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (folder.get() >= 0)
    ::fsync(folder.get());
}

} // namespace pipecc::rt
