//===- Trace.cpp - The measured timeline of one training step -------------===//
#include "pipecc/Runtime/Trace.h"
#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Files.h"
#include "pipecc/Runtime/Json.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace pipecc::rt {

const char *traceCategoryName(TraceCategory category) {
  switch (category) {
  case TraceCategory::Forward:
    return "F";
  case TraceCategory::BackwardInput:
    return "B";
  case TraceCategory::BackwardWeight:
    return "W";
  case TraceCategory::Backward:
    return "BW";
  case TraceCategory::Send:
    return "send";
  case TraceCategory::Recv:
    return "recv";
  case TraceCategory::Wait:
    return "wait";
  case TraceCategory::AllReduce:
    return "allreduce";
  case TraceCategory::Optimizer:
    return "optimizer";
  }
  return "unknown";
}

namespace {
bool isCompute(TraceCategory category) {
  return category == TraceCategory::Forward ||
         category == TraceCategory::BackwardInput ||
         category == TraceCategory::BackwardWeight ||
         category == TraceCategory::Backward;
}

std::string quoted(const std::string &text) {
  return JsonValue::string(text).serialize();
}

/// One "X" event of the Chrome trace format, on thread `rank`.
std::string eventJson(const TraceEvent &event, int rank) {
  std::string name = traceCategoryName(event.category);
  std::string args;
  auto arg = [&](const char *key, int64_t value) {
    args += std::string(args.empty() ? "" : ", ") + "\"" + key +
            "\": " + std::to_string(value);
  };
  if (isCompute(event.category)) {
    name += std::to_string(event.microbatch);
    arg("microbatch", event.microbatch);
    if (event.microbatches > 1) {
      // "W4-5": the W of micro-batches 4 and 5 in one call.
      name += "-" + std::to_string(event.microbatch + event.microbatches - 1);
      arg("microbatches", event.microbatches);
    }
    arg("stage", event.stage);
    arg("chunk", event.chunk);
  } else {
    if (!event.label.empty())
      name += " " + event.label;
    if (event.microbatch >= 0) {
      name += " m" + std::to_string(event.microbatch);
      arg("microbatch", event.microbatch);
    }
    if (event.peer >= 0)
      arg("peer", event.peer);
    if (event.bytes > 0)
      arg("bytes", event.bytes);
  }
  char times[96];
  std::snprintf(times, sizeof times, "\"ts\": %.3f, \"dur\": %.3f",
                event.start * 1e6,
                std::max(0.0, event.end - event.start) * 1e6);
  return "{\"name\": " + quoted(name) + ", \"cat\": \"" +
         traceCategoryName(event.category) +
         "\", \"ph\": \"X\", \"pid\": 0, \"tid\": " + std::to_string(rank) +
         ", " + times + ", \"args\": {" + args + "}}";
}
} // namespace

void StepTrace::start(double now) {
  zero_ = now;
  end_ = 0;
  open_ = false;
  events_.clear();
  // Recording should not allocate in the middle of the step.
  events_.reserve(4096);
}

void StepTrace::beginCompute(TraceCategory category, int64_t stage,
                             int64_t chunk, int64_t microbatch, double now) {
  if (open_)
    fail("pipecc_rt_trace_begin: ", traceCategoryName(category), " of "
         "micro-batch ", microbatch, " begins while ",
         traceCategoryName(events_.back().category), " of micro-batch ",
         events_.back().microbatch, " is still open");
  TraceEvent event;
  event.category = category;
  event.stage = stage;
  event.chunk = chunk;
  event.microbatch = microbatch;
  event.start = event.end = now - zero_;
  events_.push_back(std::move(event));
  open_ = true;
}

void StepTrace::setMicrobatches(int64_t count) {
  if (!open_)
    fail("pipecc_rt_trace_microbatches without a pipecc_rt_trace_begin");
  if (count < 1)
    fail("pipecc_rt_trace_microbatches: ", count, " micro-batches");
  events_.back().microbatches = count;
}

void StepTrace::endCompute(double now) {
  if (!open_)
    fail("pipecc_rt_trace_end without a pipecc_rt_trace_begin");
  events_.back().end = now - zero_;
  open_ = false;
}

void StepTrace::record(TraceEvent event, double startedAt, double endedAt) {
  event.start = startedAt - zero_;
  event.end = endedAt - zero_;
  events_.push_back(std::move(event));
}

std::string StepTrace::serialize(int rank) const {
  int64_t lastChunk = -1;
  for (const TraceEvent &event : events_)
    lastChunk = std::max(lastChunk, event.chunk);
  // A header line "<step end in seconds> <largest chunk>", then one event
  // per line.
  char header[64];
  std::snprintf(header, sizeof header, "%.9f %lld\n", end_,
                static_cast<long long>(lastChunk));
  std::string text = header;
  for (const TraceEvent &event : events_)
    text += eventJson(event, rank) + "\n";
  return text;
}

std::string buildTraceDocument(const TraceRunInfo &info,
                               const std::vector<std::string> &rankRecords) {
  double makespan = 0;
  long long lastChunk = 0;
  std::string events;
  auto append = [&](const std::string &event) {
    events += (events.empty() ? "\n  " : ",\n  ") + event;
  };
  for (size_t rank = 0; rank < rankRecords.size(); ++rank)
    append("{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": " +
           std::to_string(rank) + ", \"args\": {\"name\": \"rank " +
           std::to_string(rank) + "\"}}");
  for (size_t rank = 0; rank < rankRecords.size(); ++rank) {
    const std::string &record = rankRecords[rank];
    size_t newline = record.find('\n');
    double end = 0;
    long long chunk = -1;
    if (newline == std::string::npos ||
        std::sscanf(record.substr(0, newline).c_str(), "%lf %lld", &end,
                    &chunk) != 2)
      fail("--trace: the record gathered from rank ", rank, " is malformed");
    makespan = std::max(makespan, end);
    lastChunk = std::max(lastChunk, chunk);
    for (size_t begin = newline + 1; begin < record.size();) {
      size_t stop = record.find('\n', begin);
      if (stop == std::string::npos)
        stop = record.size();
      if (stop > begin)
        append(record.substr(begin, stop - begin));
      begin = stop + 1;
    }
  }
  char makespanText[64];
  std::snprintf(makespanText, sizeof makespanText, "%.9f", makespan);
  return "{\"displayTimeUnit\": \"ms\",\n"
         " \"otherData\": {\"source\": \"measured\", \"schedule\": " +
         quoted(info.schedule) + ", \"ranks\": " + std::to_string(info.ranks) +
         ", \"chunks\": " + std::to_string(lastChunk + 1) +
         ", \"microbatches\": " + std::to_string(info.microbatches) +
         ", \"makespan_s\": " + makespanText +
         ", \"step\": " + std::to_string(info.step) +
         "},\n \"traceEvents\": [" + events + "\n]}\n";
}

std::string scheduleFromManifest(const std::string &path) {
  std::vector<char> bytes = readRegularFile(path);
  JsonValue manifest;
  try {
    manifest = JsonValue::parse(std::string(bytes.begin(), bytes.end()));
  } catch (const RuntimeError &error) {
    fail("--trace: the manifest ", path, " is not JSON: ", error.what());
  }
  const JsonValue *schedule = manifest.find("schedule");
  if (!schedule || !schedule->isString())
    fail("--trace: the manifest ", path, " names no \"schedule\"");
  return schedule->asString();
}

} // namespace pipecc::rt
