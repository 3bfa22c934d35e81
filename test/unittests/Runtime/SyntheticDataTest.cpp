//===- SyntheticDataTest.cpp ----------------------------------------------===//
#include "pipecc/Runtime/SyntheticData.h"
#include "TestUtil.h"

#include <cstring>

using namespace pipecc::rt;

namespace {

TEST(SyntheticData, FloatsAreInRangeAndDeterministic) {
  const int64_t shape[] = {4, 3};
  pipecc_rt_buffer_desc desc{"x", PIPECC_RT_ROLE_DATA_INPUT, PIPECC_RT_F32,
                             0, 2, shape, 48, -1, 0};
  NpyArray a = makeSyntheticInput(desc, 2);
  NpyArray b = makeSyntheticInput(desc, 2);
  EXPECT_EQ(a.shape(), (Shape{8, 3}));
  ASSERT_EQ(a.bytes(), b.bytes());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.bytes()), 0);
  const float *values = reinterpret_cast<const float *>(a.data());
  float lo = 1, hi = -1;
  for (int i = 0; i < 24; ++i) {
    EXPECT_GE(values[i], -1.0f);
    EXPECT_LT(values[i], 1.0f);
    EXPECT_EQ(values[i],
              static_cast<float>(pipecc_rt_synthetic_value("x", 0, 0, i)));
    lo = std::min(lo, values[i]);
    hi = std::max(hi, values[i]);
  }
  EXPECT_LT(lo, -0.3f); // not degenerate
  EXPECT_GT(hi, 0.3f);
  // Micro-batch m of M is the same data whatever M is (element index counts
  // over the whole step batch).
  const int64_t half[] = {2, 3};
  pipecc_rt_buffer_desc halfDesc = desc;
  halfDesc.shape = half;
  halfDesc.bytes = 24;
  NpyArray c = makeSyntheticInput(halfDesc, 4);
  EXPECT_EQ(std::memcmp(a.data(), c.data(), a.bytes()), 0);
  // Another name gives other data.
  pipecc_rt_buffer_desc other = desc;
  other.name = "y";
  EXPECT_NE(std::memcmp(a.data(), makeSyntheticInput(other, 2).data(),
                        a.bytes()),
            0);
}

TEST(SyntheticData, LabelsAreValidClassIds) {
  const int64_t shape[] = {64};
  pipecc_rt_buffer_desc desc{"label", PIPECC_RT_ROLE_DATA_INPUT,
                             PIPECC_RT_I64, 0, 1, shape, 512, -1, 10};
  NpyArray labels = makeSyntheticInput(desc, 1);
  const int64_t *values = reinterpret_cast<const int64_t *>(labels.data());
  std::vector<int> seen(10, 0);
  for (int i = 0; i < 64; ++i) {
    ASSERT_GE(values[i], 0);
    ASSERT_LT(values[i], 10);
    seen[values[i]] = 1;
  }
  EXPECT_GE(std::count(seen.begin(), seen.end(), 1), 8);

  desc.dtype = PIPECC_RT_I32;
  desc.bytes = 256;
  desc.num_classes = 0; // not class ids: zeros
  NpyArray zeros = makeSyntheticInput(desc, 1);
  const int32_t *ints = reinterpret_cast<const int32_t *>(zeros.data());
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(ints[i], 0);
}

} // namespace
