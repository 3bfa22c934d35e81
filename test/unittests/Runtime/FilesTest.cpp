//===- FilesTest.cpp - Reading inputs and writing outputs safely ----------===//
#include "pipecc/Runtime/Files.h"
#include "pipecc/Runtime/NpyReader.h"
#include "pipecc/Runtime/Safetensors.h"
#include "TestUtil.h"

#include <algorithm>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

using namespace pipecc::rt;
using namespace pipecc::rt::testing;

namespace {

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> folderEntries(const std::string &path) {
  std::vector<std::string> names;
  DIR *dir = opendir(path.c_str());
  while (dirent *entry = dir ? readdir(dir) : nullptr)
    if (std::string(entry->d_name) != "." && std::string(entry->d_name) != "..")
      names.push_back(entry->d_name);
  if (dir)
    closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

bool isLink(const std::string &path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode);
}

TEST(Files, WriteFollowsNoPlantedLink) {
  TempDir dir, elsewhere;
  std::string victim = elsewhere.file("victim");
  writeBytes(victim, "precious");
  // Links at every name the old writer used (<path>.tmp.<pid>) and at the
  // destination itself.
  std::string out = dir.file("w.safetensors");
  for (int pid = getpid() - 50; pid < getpid() + 50; ++pid)
    ASSERT_EQ(
        symlink(victim.c_str(), (out + ".tmp." + std::to_string(pid)).c_str()),
        0);
  ASSERT_EQ(symlink(victim.c_str(), out.c_str()), 0);

  writeFileAtomically(out, "new", 3);

  EXPECT_EQ(readText(victim), "precious");
  EXPECT_FALSE(isLink(out)) << "the link itself is replaced, not followed";
  EXPECT_EQ(readText(out), "new");
  EXPECT_TRUE(isLink(out + ".tmp." + std::to_string(getpid())));
  // Nothing else left behind: the 100 links and the output.
  EXPECT_EQ(folderEntries(dir.path()).size(), 101u);
}

TEST(Files, WriteGivesTheUsualModeAndLeavesNoTemporary) {
  TempDir dir;
  std::string out = dir.file("g.npy");
  float x[2] = {1, 2};
  writeNpy(out, DType::F32, {2}, x);
  EXPECT_EQ(folderEntries(dir.path()), std::vector<std::string>{"g.npy"});
  struct stat info;
  ASSERT_EQ(stat(out.c_str(), &info), 0);
  mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(info.st_mode & 0777, 0666 & ~mask);
  EXPECT_EQ(NpyArray::load(out).shape(), Shape{2});
}

TEST(Files, WriteFailureLeavesNoTemporary) {
  TempDir dir;
  ASSERT_EQ(mkdir(dir.file("sub").c_str(), 0755), 0);
  EXPECT_RUNTIME_ERROR(writeFileAtomically(dir.file("sub"), "x", 1),
                       "sub: exists and is not a regular file");
  EXPECT_EQ(folderEntries(dir.path()), std::vector<std::string>{"sub"});
  EXPECT_TRUE(folderEntries(dir.file("sub")).empty());
}

TEST(Files, ReadRefusesWhatIsNotARegularFile) {
  TempDir dir;
  ASSERT_EQ(mkdir(dir.file("x.npy").c_str(), 0755), 0);
  EXPECT_RUNTIME_ERROR(NpyArray::load(dir.file("x.npy")), "x.npy",
                       "is a folder, expected a regular file");
  // A FIFO without a writer: refused at once, never waited on.
  ASSERT_EQ(mkfifo(dir.file("fifo.npy").c_str(), 0600), 0);
  EXPECT_RUNTIME_ERROR(NpyArray::load(dir.file("fifo.npy")), "fifo.npy",
                       "is a FIFO");
  // /dev/zero behind a link: no endless read.
  ASSERT_EQ(symlink("/dev/zero", dir.file("zero.npy").c_str()), 0);
  EXPECT_RUNTIME_ERROR(NpyArray::load(dir.file("zero.npy")), "zero.npy",
                       "is a character device");
  EXPECT_RUNTIME_ERROR(SafetensorsFile::load(dir.file("zero.npy")), "zero.npy",
                       "is a character device");
  EXPECT_RUNTIME_ERROR(readRegularFile(dir.file("none")), "none",
                       "cannot open");
}

TEST(Files, HeaderClaimingMoreThanTheFileIsRefused) {
  TempDir dir;
  // A valid header promising 2^40 floats, followed by 4 bytes.
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }";
  dict.append(64 - 10 - dict.size() % 64 - 1, ' ');
  dict += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(dict.size() & 0xFF);
  bytes += static_cast<char>(dict.size() >> 8);
  bytes += dict + "abcd";
  writeBytes(dir.file("big.npy"), bytes);
  EXPECT_RUNTIME_ERROR(NpyArray::load(dir.file("big.npy")), "big.npy",
                       "file holds 4 data bytes");
}

} // namespace
