//===- NpyReaderTest.cpp --------------------------------------------------===//
#include "pipecc/Runtime/NpyReader.h"
#include "TestUtil.h"

#include <cstring>

using namespace pipecc::rt;
using namespace pipecc::rt::testing;

namespace {

/// Fixtures written by numpy (make_npy_fixtures.py), once per test binary.
class NumpyFiles : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    std::string command = std::string("python3 '") +
                          PIPECC_RUNTIME_TEST_SOURCE_DIR +
                          "/make_npy_fixtures.py' '" + dir_->path() +
                          "' 2>&1";
    available_ = std::system(command.c_str()) == 0;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!available_)
      GTEST_SKIP() << "python3 with numpy is not available";
  }
  static std::string file(const std::string &name) { return dir_->file(name); }

  static TempDir *dir_;
  static bool available_;
};
TempDir *NumpyFiles::dir_ = nullptr;
bool NumpyFiles::available_ = false;

template <typename T> std::vector<T> values(const NpyArray &array) {
  std::vector<T> result(array.bytes() / sizeof(T));
  std::memcpy(result.data(), array.data(), array.bytes());
  return result;
}

TEST_F(NumpyFiles, ReadsFloat32Version1) {
  NpyArray array = NpyArray::load(file("f32_v1.npy"));
  EXPECT_EQ(array.dtype(), DType::F32);
  EXPECT_EQ(array.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(array),
            (std::vector<float>{-1, -0.5f, 0, 0.5f, 1, 1.5f}));
}

TEST_F(NumpyFiles, ReadsInt64Version2) {
  NpyArray array = NpyArray::load(file("i64_v2.npy"));
  EXPECT_EQ(array.dtype(), DType::I64);
  EXPECT_EQ(array.shape(), (Shape{5}));
  EXPECT_EQ(values<int64_t>(array),
            (std::vector<int64_t>{-3, 0, int64_t(1) << 40, 7,
                                  -(int64_t(1) << 62)}));
}

TEST_F(NumpyFiles, ReadsInt32Version3) {
  NpyArray array = NpyArray::load(file("i32_v3.npy"));
  EXPECT_EQ(array.dtype(), DType::I32);
  EXPECT_EQ(array.shape(), (Shape{4, 1, 2}));
  EXPECT_EQ(values<int32_t>(array),
            (std::vector<int32_t>{-4, -3, -2, -1, 0, 1, 2, 3}));
}

TEST_F(NumpyFiles, ReadsScalarAndEmptyArrays) {
  NpyArray scalar = NpyArray::load(file("scalar.npy"));
  EXPECT_TRUE(scalar.shape().empty());
  EXPECT_EQ(values<float>(scalar), (std::vector<float>{2.5f}));
  NpyArray empty = NpyArray::load(file("empty.npy"));
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
  EXPECT_EQ(empty.bytes(), 0);
}

TEST_F(NumpyFiles, SplitsIntoMicrobatches) {
  NpyArray batch = NpyArray::load(file("batch.npy")); // 12 x 2, 0..23
  for (int64_t m = 0; m < 4; ++m) {
    ByteSlice slice = batch.slice(4, m);
    ASSERT_EQ(slice.bytes, 3 * 2 * 4);
    const float *data = reinterpret_cast<const float *>(slice.data);
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(data[i], static_cast<float>(m * 6 + i));
  }
  EXPECT_EQ(batch.slice(1, 0).bytes, batch.bytes());
  EXPECT_RUNTIME_ERROR(batch.slice(5, 0), "batch.npy",
                       "first dimension 12 is not divisible into 5");
  EXPECT_RUNTIME_ERROR(batch.slice(4, 4), "part 4 out of range");
  EXPECT_RUNTIME_ERROR(NpyArray::load(file("scalar.npy")).slice(1, 0),
                       "scalar array cannot be split");
}

TEST_F(NumpyFiles, RejectsUnsupportedLayoutsAndTypes) {
  EXPECT_RUNTIME_ERROR(NpyArray::load(file("fortran.npy")), "fortran.npy",
                       "Fortran-order");
  EXPECT_RUNTIME_ERROR(NpyArray::load(file("big_endian.npy")),
                       "big_endian.npy", "unsupported dtype '>f4'");
  EXPECT_RUNTIME_ERROR(NpyArray::load(file("float64.npy")), "float64.npy",
                       "unsupported dtype '<f8'");
}

//===--- hand-made bytes ---------------------------------------------------===//

std::string npyImage(int major, const std::string &dict,
                     const std::string &data) {
  std::string header = dict + "\n";
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  size_t lengthBytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < lengthBytes; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return out + header + data;
}

TEST(NpyHeader, AcceptsOddSpacingAndKeyOrder) {
  std::string image =
      npyImage(1, "{\"shape\":(2,),'fortran_order':False,  'descr':'<i4'}",
               std::string(8, '\0'));
  NpyHeader header = parseNpyHeader("x.npy", image.data(), image.size());
  EXPECT_EQ(header.dtype, DType::I32);
  EXPECT_EQ(header.shape, (Shape{2}));
  EXPECT_EQ(header.dataOffset, static_cast<int64_t>(image.size() - 8));
}

TEST(NpyHeader, ReportsFileAndReason) {
  auto parse = [](const std::string &image) {
    return parseNpyHeader("bad.npy", image.data(), image.size());
  };
  EXPECT_RUNTIME_ERROR(parse("PK\x03\x04 not npy"), "bad.npy", "bad magic");
  EXPECT_RUNTIME_ERROR(parse(npyImage(4, "{}", "")), "bad.npy",
                       "unsupported .npy format version 4");
  std::string truncated = npyImage(1, "{'descr': '<f4'}", "");
  truncated.resize(truncated.size() - 5);
  EXPECT_RUNTIME_ERROR(parse(truncated), "bad.npy", "truncated");
  EXPECT_RUNTIME_ERROR(
      parse(npyImage(1, "{'descr': '<f4', 'shape': (2,)}", "")), "bad.npy",
      "lacks one of");
  EXPECT_RUNTIME_ERROR(
      parse(npyImage(1,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(2,), 'extra': 1}",
                     "")),
      "unexpected key 'extra'");
  EXPECT_RUNTIME_ERROR(
      parse(npyImage(1,
                     "{'descr': [('a', '<f4')], 'fortran_order': False, "
                     "'shape': (2,)}",
                     "")),
      "structured dtypes");
  EXPECT_RUNTIME_ERROR(
      parse(npyImage(1,
                     "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}",
                     "")),
      "expected True or False");
  EXPECT_RUNTIME_ERROR(
      parse(npyImage(1,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
                     "")),
      "bad dimension");
}

// Found by pipecc-fuzz-npy: 2^62 float32 elements are 2^64 bytes, which
// wrapped to 0 and matched a file without data.
TEST(NpyHeader, RejectsByteCountsThatOverflow) {
  TempDir dir;
  writeBytes(dir.file("huge.npy"),
             npyImage(1,
                      "{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(1073741824, 1073741824, 4), }",
                      ""));
  EXPECT_RUNTIME_ERROR(NpyArray::load(dir.file("huge.npy")), "huge.npy",
                       "has too many bytes");
}

TEST(NpyArray, ReportsMissingFileAndSizeMismatch) {
  TempDir dir;
  EXPECT_RUNTIME_ERROR(NpyArray::load(dir.file("absent.npy")), "absent.npy",
                       "cannot open");
  writeBytes(dir.file("short.npy"),
             npyImage(1, "{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (3,), }",
                      std::string(8, '\0')));
  EXPECT_RUNTIME_ERROR(NpyArray::load(dir.file("short.npy")), "short.npy",
                       "holds 8 data bytes", "needs 12");
}

TEST(NpyArray, WriteReadRoundTrip) {
  TempDir dir;
  std::vector<int64_t> data = {1, -2, 3, -4, 5, -6};
  writeNpy(dir.file("r.npy"), DType::I64, {3, 2}, data.data());
  NpyArray array = NpyArray::load(dir.file("r.npy"));
  EXPECT_EQ(array.dtype(), DType::I64);
  EXPECT_EQ(array.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<int64_t>(array), data);
  // Data starts 64-byte aligned, like numpy's own files.
  std::ifstream in(dir.file("r.npy"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ((bytes.size() - 48) % 64, 0u);
}

TEST_F(NumpyFiles, NumpyReadsOurFiles) {
  std::vector<float> data = {0.25f, -1.5f, 3.0f};
  writeNpy(file("ours.npy"), DType::F32, {3}, data.data());
  std::string command =
      "python3 -c \"import numpy as np, sys; a = np.load('" +
      file("ours.npy") +
      "'); sys.exit(0 if a.dtype == np.float32 and a.shape == (3,) and "
      "list(a) == [0.25, -1.5, 3.0] else 1)\"";
  EXPECT_EQ(std::system(command.c_str()), 0);
}

} // namespace
