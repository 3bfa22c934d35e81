// removeTree never follows a symbolic link: not at the path it is given, not
// inside the tree, so a link planted anywhere cannot make it empty another
// folder.
#include "pipecc/Compiler/RemoveTree.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace pipecc;
namespace fs = llvm::sys::fs;

namespace {

class RemoveTreeTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(fs::createUniqueDirectory("pipecc-remove-tree", root));
    victim = path("victim");
    ASSERT_FALSE(fs::create_directory(victim));
    canary = path("victim/canary");
    writeFile(canary);
  }
  void TearDown() override {
    std::string error;
    EXPECT_TRUE(removeTree(root, error)) << error;
    EXPECT_FALSE(fs::exists(root));
  }

  std::string path(llvm::StringRef relative) const {
    llvm::SmallString<256> result(root);
    llvm::sys::path::append(result, relative);
    return std::string(result);
  }
  static void writeFile(const std::string &file) {
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    ASSERT_FALSE(ec) << file;
    os << "precious\n";
  }

  llvm::SmallString<256> root;
  std::string victim, canary;
};

TEST_F(RemoveTreeTest, RemovesNestedFolders) {
  ASSERT_FALSE(fs::create_directories(path("tree/a/b/c")));
  writeFile(path("tree/top"));
  writeFile(path("tree/a/b/c/deep"));
  std::string error;
  ASSERT_TRUE(removeTree(path("tree"), error)) << error;
  EXPECT_FALSE(fs::exists(path("tree")));
}

TEST_F(RemoveTreeTest, LinksInsideTheTreeAreUnlinkedNotDescended) {
  ASSERT_FALSE(fs::create_directories(path("tree/sub")));
  ASSERT_FALSE(fs::create_link(victim, path("tree/to-folder")));
  ASSERT_FALSE(fs::create_link(victim, path("tree/sub/to-folder")));
  ASSERT_FALSE(fs::create_link(canary, path("tree/to-file")));
  ASSERT_FALSE(fs::create_link(path("nowhere"), path("tree/dangling")));
  std::string error;
  ASSERT_TRUE(removeTree(path("tree"), error)) << error;
  EXPECT_FALSE(fs::exists(path("tree")));
  EXPECT_TRUE(fs::exists(canary));
}

TEST_F(RemoveTreeTest, ALinkGivenAsThePathIsUnlinkedNotFollowed) {
  ASSERT_FALSE(fs::create_link(victim, path("staging")));
  std::string error;
  ASSERT_TRUE(removeTree(path("staging"), error)) << error;
  fs::file_status status;
  EXPECT_TRUE(fs::status(path("staging"), status, /*follow=*/false));
  EXPECT_TRUE(fs::exists(canary));
}

TEST_F(RemoveTreeTest, AMissingPathIsSuccess) {
  std::string error;
  EXPECT_TRUE(removeTree(path("never-made"), error)) << error;
  EXPECT_TRUE(removeTree(path("no-parent/never-made"), error)) << error;
}

} // namespace
