//===- SafetensorsTest.cpp ------------------------------------------------===//
#include "pipecc/Runtime/Safetensors.h"
#include "TestUtil.h"

#include <cstring>

using namespace pipecc::rt;
using namespace pipecc::rt::testing;

namespace {

std::vector<char> image(const std::string &header, size_t dataBytes) {
  std::string out;
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>((length >> (8 * i)) & 0xFF);
  out += header;
  out.append(dataBytes, '\0');
  return std::vector<char>(out.begin(), out.end());
}

TEST(Safetensors, WriteReadRoundTrip) {
  TempDir dir;
  std::vector<float> w = {1.5f, -2.0f, 3.25f, 0.0f, 5.0f, 6.0f};
  std::vector<int64_t> ids = {7, -8};
  float scalar = 0.125f;
  SafetensorsWriter writer;
  writer.setMetadata("producer", "test");
  writer.add("layer.w", DType::F32, {2, 3}, w.data());
  writer.add("ids", DType::I64, {2}, ids.data());
  writer.add("loss", DType::F32, {}, &scalar);
  writer.add("nothing", DType::F32, {0, 4}, nullptr);
  writer.writeFile(dir.file("t.safetensors"));
  EXPECT_NE(access(dir.file("t.safetensors.tmp." + std::to_string(getpid()))
                       .c_str(),
                   F_OK),
            0)
      << "temporary file left behind";

  SafetensorsFile file = SafetensorsFile::load(dir.file("t.safetensors"));
  ASSERT_EQ(file.tensors().size(), 4u);
  ASSERT_EQ(file.metadata().size(), 1u);
  EXPECT_EQ(file.metadata()[0], (std::pair<std::string, std::string>(
                                    "producer", "test")));
  const TensorInfo *tw = file.find("layer.w");
  ASSERT_NE(tw, nullptr);
  EXPECT_EQ(tw->dtype, DType::F32);
  EXPECT_EQ(tw->shape, (Shape{2, 3}));
  EXPECT_EQ(std::memcmp(file.data(*tw), w.data(), 24), 0);
  const TensorInfo *tids = file.find("ids");
  EXPECT_EQ(tids->dtype, DType::I64);
  EXPECT_EQ(std::memcmp(file.data(*tids), ids.data(), 16), 0);
  const TensorInfo *tloss = file.find("loss");
  EXPECT_TRUE(tloss->shape.empty());
  EXPECT_EQ(*reinterpret_cast<const float *>(file.data(*tloss)), 0.125f);
  EXPECT_EQ(file.find("nothing")->bytes(), 0);
  EXPECT_EQ(file.find("absent"), nullptr);
}

TEST(Safetensors, HeaderIsPaddedToEightBytes) {
  float x = 1;
  SafetensorsWriter writer;
  writer.add("x", DType::F32, {1}, &x);
  std::vector<char> bytes = writer.serialize();
  uint64_t length = 0;
  std::memcpy(&length, bytes.data(), 8);
  EXPECT_EQ(length % 8, 0u);
  EXPECT_EQ(bytes.size(), 8 + length + 4);
}

TEST(Safetensors, WriterRejectsDuplicates) {
  float x = 1;
  SafetensorsWriter writer;
  writer.add("x", DType::F32, {1}, &x);
  EXPECT_RUNTIME_ERROR(writer.add("x", DType::F32, {1}, &x),
                       "duplicate tensor name 'x'");
  EXPECT_RUNTIME_ERROR(writer.add("__metadata__", DType::F32, {1}, &x),
                       "__metadata__");
}

TEST(Safetensors, WriteFailureLeavesNoFile) {
  float x = 1;
  SafetensorsWriter writer;
  writer.add("x", DType::F32, {1}, &x);
  EXPECT_RUNTIME_ERROR(writer.writeFile("/nonexistent-dir/out.safetensors"),
                       "/nonexistent-dir/out.safetensors",
                       "folder '/nonexistent-dir' does not exist");
}

TEST(Safetensors, NeverReplacesWhatIsNotARegularFile) {
  float x = 1;
  SafetensorsWriter writer;
  writer.add("x", DType::F32, {1}, &x);
  // Renaming over a device or a folder would replace it.
  EXPECT_RUNTIME_ERROR(writer.writeFile("/dev/null"), "/dev/null",
                       "exists and is not a regular file");
  EXPECT_RUNTIME_ERROR(writer.writeFile("/tmp"), "/tmp",
                       "exists and is not a regular file");
}

TEST(Safetensors, ReadsFilesWrittenByOtherTools) {
  // Unknown-to-us dtypes still parse (and are reported by name later).
  SafetensorsFile file = SafetensorsFile::parse(
      "other", image(R"({"h":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},)"
                     R"("b":{"dtype":"BOOL","shape":[],"data_offsets":[4,5]}})",
                     5));
  EXPECT_EQ(file.find("h")->dtype, DType::BF16);
  EXPECT_EQ(file.find("b")->dtype, DType::Bool);
}

TEST(Safetensors, RejectsCorruptFiles) {
  auto parse = [](const std::string &header, size_t dataBytes) {
    return SafetensorsFile::parse("bad.safetensors", image(header, dataBytes));
  };
  EXPECT_RUNTIME_ERROR(
      SafetensorsFile::parse("bad.safetensors", std::vector<char>(5)),
      "bad.safetensors", "shorter than");
  std::vector<char> huge = image("{}", 0);
  huge[6] = 1; // header length 2^48 + 2
  EXPECT_RUNTIME_ERROR(SafetensorsFile::parse("bad.safetensors", huge),
                       "bad.safetensors", "exceeds the file size");
  EXPECT_RUNTIME_ERROR(parse("{\"a\": ", 0), "bad.safetensors",
                       "bad safetensors header");
  EXPECT_RUNTIME_ERROR(parse("[1]", 0), "not a JSON object");
  EXPECT_RUNTIME_ERROR(
      parse(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4),
      "tensor 'a'", "outside the data section");
  EXPECT_RUNTIME_ERROR(
      parse(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[4,0]}})", 8),
      "tensor 'a'", "outside");
  EXPECT_RUNTIME_ERROR(
      parse(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8),
      "tensor 'a'", "span 8 bytes", "needs 12");
  EXPECT_RUNTIME_ERROR(
      parse(R"({"a":{"dtype":"Q8","shape":[1],"data_offsets":[0,1]}})", 1),
      "unknown dtype 'Q8'");
  EXPECT_RUNTIME_ERROR(
      parse(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4),
      "non-negative integer");
  EXPECT_RUNTIME_ERROR(parse(R"({"a":{"dtype":"F32","shape":[1]}})", 4),
                       "lacks one of");
  EXPECT_RUNTIME_ERROR(
      parse(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
            R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
            8),
      "'a' and 'b' overlap");
  // Found by pipecc-fuzz-safetensors: 2^62 floats are 2^64 bytes, which
  // wrapped to 0 and matched empty data_offsets.
  EXPECT_RUNTIME_ERROR(
      parse(R"({"a":{"dtype":"F32","shape":[4611686018427387904],)"
            R"("data_offsets":[0,0]}})",
            0),
      "tensor 'a'", "has too many bytes");
  EXPECT_RUNTIME_ERROR(parse(R"({"__metadata__":{"k":1}})", 0),
                       "'__metadata__' value for 'k' is not a string");
}

TEST(Safetensors, ReportsMissingFile) {
  EXPECT_RUNTIME_ERROR(SafetensorsFile::load("/nonexistent/w.safetensors"),
                       "/nonexistent/w.safetensors", "cannot open");
}

} // namespace
