// The timeline library: events from a simulation (waits included), the
// trace JSON read back as written, and errors on malformed traces.
#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Timeline/Timeline.h"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

using namespace pipecc;
using namespace pipecc::timeline;
namespace sched = pipecc::scheduling;

namespace {

struct Simulated {
  sched::ScheduleProblem problem;
  std::vector<sched::Program> programs;
  sched::SimulationResult result;
};

Simulated simulate(const char *name, sched::ScheduleProblem problem,
                   double messageSeconds) {
  sched::TimingModel timing;
  timing.latencySeconds = messageSeconds;
  sched::Result<sched::Schedule> schedule =
      sched::generateSchedule(name, problem);
  EXPECT_TRUE(schedule.ok()) << schedule.message();
  sched::Result<std::vector<sched::Program>> programs =
      sched::materializeCommunication(problem, *schedule, {}, timing);
  EXPECT_TRUE(programs.ok()) << programs.message();
  sched::Result<sched::SimulationResult> result =
      sched::simulate(problem, *programs, timing);
  EXPECT_TRUE(result.ok()) << result.message();
  return {problem, *programs, *result};
}

TEST(Timeline, EventsCoverEveryComputeOnce) {
  Simulated run =
      simulate("zb-h1", sched::ScheduleProblem::linear(4, 8, true), 0.25);
  Timeline timeline =
      buildTimeline(run.problem, run.programs, run.result, "zb-h1");
  EXPECT_EQ(timeline.ranks, 4);
  EXPECT_DOUBLE_EQ(timeline.makespan, run.result.makespan);
  int compute = 0;
  for (const Event &event : timeline.events) {
    EXPECT_LE(event.start, event.end);
    EXPECT_LE(event.end, timeline.makespan + 1e-9);
    if (!isCompute(event.kind))
      continue;
    ++compute;
    EXPECT_EQ(event.label, categoryName(event.kind).str() +
                               std::to_string(event.microbatch));
    EXPECT_EQ(event.virtualStage, event.rank); // linear placement
  }
  EXPECT_EQ(compute, 4 * 8 * 3); // F, B and W per stage and micro-batch
  // Messages take time, so ranks wait for their peers somewhere.
  EXPECT_TRUE(llvm::any_of(timeline.events, [](const Event &event) {
    return event.kind == EventKind::Wait;
  }));
}

TEST(Timeline, PeakActivationsOfOneFOneB) {
  Simulated run = simulate("1f1b", sched::ScheduleProblem::linear(4, 8), 0);
  std::vector<double> peaks =
      peakActivationMicrobatches(run.result);
  EXPECT_EQ(peaks, (std::vector<double>{4, 3, 2, 1}));
  Simulated gpipe = simulate("gpipe", sched::ScheduleProblem::linear(4, 8), 0);
  EXPECT_EQ(peakActivationMicrobatches(gpipe.result)[0], 8);
}

TEST(Timeline, TraceJsonReadsBackAsWritten) {
  Simulated run = simulate(
      "interleaved-1f1b", sched::ScheduleProblem::interleaved(2, 2, 4), 0.1);
  Timeline written =
      buildTimeline(run.problem, run.programs, run.result, "interleaved-1f1b");
  written.peakActivationMicrobatches = {2.5, 2};
  std::string text;
  llvm::raw_string_ostream os(text);
  writeTraceJson(written, os);
  std::string error;
  std::optional<Timeline> read = readTraceJson(text, error);
  ASSERT_TRUE(read) << error;
  EXPECT_EQ(read->source, "predicted");
  EXPECT_EQ(read->schedule, "interleaved-1f1b");
  EXPECT_EQ(read->ranks, 2);
  EXPECT_EQ(read->chunks, 2);
  EXPECT_EQ(read->microbatches, 4);
  EXPECT_NEAR(read->makespan, written.makespan, 1e-9);
  EXPECT_NEAR(read->bubble, written.bubble, 1e-12);
  EXPECT_EQ(read->peakActivationMicrobatches,
            written.peakActivationMicrobatches);
  ASSERT_EQ(read->events.size(), written.events.size());
  for (size_t i = 0; i < written.events.size(); ++i) {
    const Event &a = written.events[i], &b = read->events[i];
    EXPECT_EQ(a.rank, b.rank);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.label, b.label);
    EXPECT_EQ(a.microbatch, b.microbatch);
    EXPECT_EQ(a.virtualStage, b.virtualStage);
    EXPECT_EQ(a.chunk, b.chunk);
    EXPECT_NEAR(a.start, b.start, 1e-9);
    EXPECT_NEAR(a.end, b.end, 1e-9);
  }
}

TEST(Timeline, BubbleFromEventsWithoutOtherData) {
  // Rank 0 computes for 3 of 4 us, rank 1 for 1: idle 1/4 and 3/4.
  std::string error;
  std::optional<Timeline> read = readTraceJson(
      R"({"traceEvents": [
        {"ph": "X", "cat": "F", "name": "F0", "tid": 0, "ts": 0, "dur": 3},
        {"ph": "X", "cat": "recv", "name": "recv", "tid": 1, "ts": 0, "dur": 3},
        {"ph": "X", "cat": "B", "name": "B0", "tid": 1, "ts": 3, "dur": 1}]})",
      error);
  ASSERT_TRUE(read) << error;
  EXPECT_EQ(read->ranks, 2);
  EXPECT_DOUBLE_EQ(read->makespan, 4e-6);
  EXPECT_DOUBLE_EQ(read->bubble, 0.5);
}

TEST(Timeline, MalformedTracesNameTheMember) {
  auto errorOf = [](const char *text) {
    std::string error;
    EXPECT_FALSE(readTraceJson(text, error));
    return error;
  };
  EXPECT_EQ(errorOf("[]"), "the trace must be a JSON object");
  EXPECT_EQ(errorOf("{}"), "traceEvents: is missing or not an array");
  EXPECT_EQ(errorOf(R"({"traceEvents": [{"ph": "X", "cat": "F", "ts": 0,
                        "dur": 1}]})"),
            "traceEvents[0]: has no 'tid'");
  EXPECT_EQ(errorOf(R"({"traceEvents": [{"ph": "X", "cat": "F", "tid": 0,
                        "ts": "0", "dur": 1}]})"),
            "traceEvents[0]: 'ts' must be a non-negative number");
  EXPECT_EQ(errorOf(R"({"otherData": {"ranks": 1}, "traceEvents": [
                        {"ph": "X", "cat": "F", "tid": 1, "ts": 0,
                         "dur": 1}]})"),
            "otherData.ranks: is 1 but an event runs on rank 1");
  EXPECT_EQ(errorOf(R"({"traceEvents": [{"ph": "X", "cat": "F", "tid": 99999,
                        "ts": 0, "dur": 1}]})"),
            "traceEvents[0]: 'tid' must be an integer from 0 to 4095");
}

TEST(Timeline, SvgEscapesTextFromTraces) {
  Timeline timeline;
  timeline.source = "measured <&>";
  timeline.schedule = "a\"b";
  timeline.ranks = 1;
  timeline.makespan = 1;
  Event event;
  event.kind = EventKind::Send;
  event.label = "send <x> & \x01";
  event.end = 0.5;
  timeline.events.push_back(event);
  std::string text;
  llvm::raw_string_ostream os(text);
  const Timeline *one[] = {&timeline};
  writeSvg(one, os);
  EXPECT_NE(text.find("measured &lt;&amp;&gt;"), std::string::npos);
  EXPECT_NE(text.find("send &lt;x&gt; &amp;  "), std::string::npos);
  EXPECT_EQ(text.find("<x>"), std::string::npos);
  EXPECT_EQ(text.find('\x01'), std::string::npos);
}

} // namespace
