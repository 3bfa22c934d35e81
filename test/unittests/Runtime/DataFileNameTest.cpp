//===- DataFileNameTest.cpp - Graph input names as file names -------------===//
#include "pipecc/Runtime/DataFileName.h"

#include <gtest/gtest.h>

#include <set>

using namespace pipecc::rt;

namespace {

TEST(DataFileName, PlainNamesMapToThemselves) {
  EXPECT_EQ(dataFileName("x"), "x.npy");
  EXPECT_EQ(dataFileName("input_ids"), "input_ids.npy");
  EXPECT_EQ(dataFileName("layer-1.in"), "layer-1.in.npy");
  EXPECT_EQ(dataFileName("x."), "x..npy");
}

TEST(DataFileName, NoNameLeavesTheFolder) {
  EXPECT_EQ(dataFileName("../../outside"), "%2E.%2F..%2Foutside.npy");
  EXPECT_EQ(dataFileName("/etc/passwd"), "%2Fetc%2Fpasswd.npy");
  EXPECT_EQ(dataFileName(".."), "%2E..npy");
  EXPECT_EQ(dataFileName("."), "%2E.npy");
  EXPECT_EQ(dataFileName(".hidden"), "%2Ehidden.npy");
  EXPECT_EQ(dataFileName(""), "%.npy");
  for (const char *name :
       {"../../outside", "a/b", "..", ".", "", "/", "a\\b", "\n", "x\0y"}) {
    std::string file = dataFileName(name);
    EXPECT_EQ(file.find('/'), std::string::npos) << file;
    EXPECT_NE(file[0], '.') << file;
  }
}

TEST(DataFileName, EveryOtherByteIsPercentEncoded) {
  EXPECT_EQ(dataFileName("input:0"), "input%3A0.npy");
  EXPECT_EQ(dataFileName("a b"), "a%20b.npy");
  EXPECT_EQ(dataFileName("100%"), "100%25.npy");
  EXPECT_EQ(dataFileName(std::string("x\0y", 3)), "x%00y.npy");
  EXPECT_EQ(dataFileName("\xC3\xA9"), "%C3%A9.npy");
}

TEST(DataFileName, DistinctNamesGetDistinctFiles) {
  // '%' itself is encoded, so an encoded name cannot collide with a plain one.
  std::set<std::string> files;
  for (const char *name :
       {"a:b", "a%3Ab", "a%b", "a%25b", ".x", "%2Ex", "x", "", "%"})
    EXPECT_TRUE(files.insert(dataFileName(name)).second) << name;
}

} // namespace
