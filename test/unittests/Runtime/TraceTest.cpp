//===- TraceTest.cpp - The measured timeline of a step --------------------===//
#include "pipecc/Runtime/Json.h"
#include "pipecc/Runtime/Trace.h"
#include "TestUtil.h"

using namespace pipecc::rt;

namespace {

/// Rank `rank`'s record of a step starting at t = 100 s: F and BW of one
/// micro-batch with a send between, then the optimizer.
std::string record(int rank, int64_t chunk, double end) {
  StepTrace trace(/*step=*/0);
  trace.start(100.0);
  trace.beginCompute(TraceCategory::Forward, rank, chunk, 0, 100.001);
  trace.endCompute(100.002);
  TraceEvent send;
  send.category = TraceCategory::Send;
  send.label = "act \"q\"";
  send.microbatch = 0;
  send.peer = 1 - rank;
  send.bytes = 64;
  trace.record(send, 100.002, 100.0025);
  trace.beginCompute(TraceCategory::Backward, rank, chunk, 0, 100.003);
  trace.endCompute(100.004);
  trace.record({TraceCategory::Optimizer}, 100.004, 100.0 + end);
  trace.finish(100.0 + end);
  return trace.serialize(rank);
}

TEST(Trace, DocumentHasEveryRanksEventsInMicroseconds) {
  TraceRunInfo info;
  info.schedule = "1f1b";
  info.ranks = 2;
  info.microbatches = 1;
  info.step = 3;
  JsonValue document = JsonValue::parse(buildTraceDocument(
      info, {record(0, 0, 0.005), record(1, 1, 0.006)}));
  const JsonValue &other = *document.find("otherData");
  EXPECT_EQ(other.find("source")->asString(), "measured");
  EXPECT_EQ(other.find("schedule")->asString(), "1f1b");
  EXPECT_EQ(other.find("ranks")->asInteger(), 2);
  // The largest chunk any compute action names, plus one.
  EXPECT_EQ(other.find("chunks")->asInteger(), 2);
  EXPECT_EQ(other.find("microbatches")->asInteger(), 1);
  EXPECT_EQ(other.find("step")->asInteger(), 3);
  // The latest rank's end.
  EXPECT_NEAR(other.find("makespan_s")->asNumber(), 0.006, 1e-9);

  const auto &events = document.find("traceEvents")->asArray();
  ASSERT_EQ(events.size(), 2u + 2 * 4);
  EXPECT_EQ(events[0].find("ph")->asString(), "M");
  EXPECT_EQ(events[1].find("args")->find("name")->asString(), "rank 1");
  const JsonValue &forward = events[2];
  EXPECT_EQ(forward.find("name")->asString(), "F0");
  EXPECT_EQ(forward.find("cat")->asString(), "F");
  EXPECT_EQ(forward.find("tid")->asInteger(), 0);
  EXPECT_NEAR(forward.find("ts")->asNumber(), 1000.0, 0.01);
  EXPECT_NEAR(forward.find("dur")->asNumber(), 1000.0, 0.01);
  const JsonValue &send = events[3];
  EXPECT_EQ(send.find("name")->asString(), "send act \"q\" m0");
  EXPECT_EQ(send.find("cat")->asString(), "send");
  EXPECT_EQ(send.find("args")->find("peer")->asInteger(), 1);
  EXPECT_EQ(send.find("args")->find("bytes")->asInteger(), 64);
  EXPECT_EQ(events[4].find("name")->asString(), "BW0");
  EXPECT_EQ(events[5].find("cat")->asString(), "optimizer");
  const JsonValue &backward = events[8];
  EXPECT_EQ(backward.find("tid")->asInteger(), 1);
  EXPECT_EQ(backward.find("args")->find("stage")->asInteger(), 1);
  EXPECT_EQ(backward.find("args")->find("chunk")->asInteger(), 1);
}

TEST(Trace, ComputeActionsDoNotNest) {
  StepTrace trace(0);
  trace.start(0);
  EXPECT_THROW(trace.endCompute(1), RuntimeError);
  trace.beginCompute(TraceCategory::Forward, 0, 0, 0, 1);
  EXPECT_THROW(trace.beginCompute(TraceCategory::Forward, 0, 0, 1, 2),
               RuntimeError);
}

TEST(Trace, AGroupedWeightGradientNamesItsMicrobatches) {
  StepTrace trace(0);
  trace.start(0);
  EXPECT_THROW(trace.setMicrobatches(2), RuntimeError);
  trace.beginCompute(TraceCategory::BackwardWeight, 1, 0, 4, 1);
  EXPECT_THROW(trace.setMicrobatches(0), RuntimeError);
  trace.setMicrobatches(2);
  trace.endCompute(2);
  trace.beginCompute(TraceCategory::BackwardWeight, 1, 0, 6, 2);
  trace.endCompute(3);
  trace.finish(3);
  TraceRunInfo info;
  info.ranks = 1;
  info.microbatches = 8;
  JsonValue document =
      JsonValue::parse(buildTraceDocument(info, {trace.serialize(0)}));
  const auto &events = document.find("traceEvents")->asArray();
  ASSERT_EQ(events.size(), 1u + 2);
  EXPECT_EQ(events[1].find("name")->asString(), "W4-5");
  EXPECT_EQ(events[1].find("args")->find("microbatch")->asInteger(), 4);
  EXPECT_EQ(events[1].find("args")->find("microbatches")->asInteger(), 2);
  EXPECT_EQ(events[2].find("name")->asString(), "W6");
  EXPECT_EQ(events[2].find("args")->find("microbatches"), nullptr);
}

TEST(Trace, ScheduleComesFromTheManifest) {
  pipecc::rt::testing::TempDir dir;
  pipecc::rt::testing::writeBytes(dir.file("pipeline.json"),
                      "{\"stages\": 2, \"schedule\": \"zb-h1\"}");
  EXPECT_EQ(scheduleFromManifest(dir.file("pipeline.json")), "zb-h1");
  pipecc::rt::testing::writeBytes(dir.file("bad.json"), "{\"stages\": 2}");
  EXPECT_THROW(scheduleFromManifest(dir.file("bad.json")), RuntimeError);
  EXPECT_THROW(scheduleFromManifest(dir.file("missing.json")), RuntimeError);
}

} // namespace
