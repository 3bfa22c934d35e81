//===- TraceJson.cpp - Chrome/Perfetto trace JSON -------------------------===//
//
// The format shared with the runtime's `out/launch --trace` (docs/cli.md,
// "Timelines"): one thread per rank (tid = rank), complete events ("ph":
// "X") with ts and dur in microseconds from the step's start, cat the event
// kind, and otherData describing the run.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Timeline/Timeline.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

using namespace pipecc;
using namespace pipecc::timeline;
namespace json = llvm::json;

static constexpr double kMicrosecondsPerSecond = 1e6;
/// More rows than any pipeline has; keeps a corrupt trace from asking the
/// renderer for millions of rows.
static constexpr int64_t kMaxRanks = 4096;

/// Microseconds, rounded to the nanosecond: sums of costs like 0.976 +
/// 0.05 would otherwise print as 1026000.0000000001.
static double microseconds(double seconds) {
  return std::round(seconds * kMicrosecondsPerSecond * 1e3) / 1e3;
}

void pipecc::timeline::writeTraceJson(const Timeline &timeline,
                                      llvm::raw_ostream &os) {
  json::OStream out(os, /*IndentSize=*/0);
  out.object([&] {
    out.attribute("displayTimeUnit", "ms");
    out.attributeObject("otherData", [&] {
      out.attribute("source", timeline.source);
      out.attribute("schedule", timeline.schedule);
      out.attribute("ranks", timeline.ranks);
      out.attribute("chunks", timeline.chunks);
      out.attribute("microbatches", timeline.microbatches);
      out.attribute("makespan_s", timeline.makespan);
      out.attribute("bubble", timeline.bubble);
      if (!timeline.peakActivationMicrobatches.empty())
        out.attributeArray("peak_activation_microbatches", [&] {
          for (double peak : timeline.peakActivationMicrobatches)
            out.value(peak);
        });
    });
    out.attributeArray("traceEvents", [&] {
      for (int rank = 0; rank < timeline.ranks; ++rank) {
        out.object([&] {
          out.attribute("name", "thread_name");
          out.attribute("ph", "M");
          out.attribute("pid", 0);
          out.attribute("tid", rank);
          out.attributeObject("args", [&] {
            out.attribute("name", "rank " + std::to_string(rank));
          });
        });
      }
      for (const Event &event : timeline.events) {
        os << "\n"; // one event per line: diff- and grep-friendly
        out.object([&] {
          out.attribute("name", event.label);
          out.attribute("cat", categoryName(event.kind));
          out.attribute("ph", "X");
          out.attribute("pid", 0);
          out.attribute("tid", event.rank);
          out.attribute("ts", microseconds(event.start));
          out.attribute("dur", microseconds(event.end) -
                                   microseconds(event.start));
          out.attributeObject("args", [&] {
            if (event.microbatch >= 0)
              out.attribute("microbatch", event.microbatch);
            if (event.virtualStage >= 0)
              out.attribute("stage", event.virtualStage);
            if (event.chunk >= 0)
              out.attribute("chunk", event.chunk);
          });
        });
      }
    });
  });
  os << "\n";
}

namespace {
/// Reads one trace, remembering where it is for error messages.
class TraceReader {
public:
  explicit TraceReader(std::string &error) : error(error) {}

  std::optional<Timeline> read(llvm::StringRef text) {
    llvm::Expected<json::Value> parsed = json::parse(text);
    if (!parsed) {
      error = "not JSON: " + llvm::toString(parsed.takeError());
      return std::nullopt;
    }
    const json::Object *root = parsed->getAsObject();
    if (!root)
      return fail("", "the trace must be a JSON object");
    Timeline timeline;
    timeline.source = "trace";
    timeline.ranks = -1;
    timeline.makespan = -1;
    std::optional<double> bubble;
    if (const json::Value *other = root->get("otherData")) {
      const json::Object *data = other->getAsObject();
      if (!data)
        return fail("otherData", "must be an object");
      if (!readString(*data, "otherData", "source", timeline.source) ||
          !readString(*data, "otherData", "schedule", timeline.schedule) ||
          !readCount(*data, "otherData", "ranks", 1, kMaxRanks,
                     timeline.ranks) ||
          !readCount(*data, "otherData", "chunks", 1, kMaxRanks,
                     timeline.chunks) ||
          !readCount(*data, "otherData", "microbatches", 1, INT32_MAX,
                     timeline.microbatches) ||
          !readSeconds(*data, "otherData", "makespan_s", timeline.makespan))
        return std::nullopt;
      double value = 0;
      if (data->get("bubble")) {
        if (!readSeconds(*data, "otherData", "bubble", value))
          return std::nullopt;
        bubble = value;
      }
      if (const json::Value *peaks = data->get("peak_activation_microbatches")) {
        const json::Array *list = peaks->getAsArray();
        if (!list)
          return fail("otherData.peak_activation_microbatches",
                      "must be an array of numbers");
        for (const json::Value &peak : *list) {
          std::optional<double> number = peak.getAsNumber();
          if (!number || !std::isfinite(*number) || *number < 0)
            return fail("otherData.peak_activation_microbatches",
                        "must be an array of non-negative numbers");
          timeline.peakActivationMicrobatches.push_back(*number);
        }
      }
    }
    const json::Array *events = root->getArray("traceEvents");
    if (!events)
      return fail("traceEvents", "is missing or not an array");
    int maxRank = -1;
    double lastEnd = 0;
    for (size_t i = 0; i < events->size(); ++i) {
      std::string where = "traceEvents[" + std::to_string(i) + "]";
      const json::Object *object = (*events)[i].getAsObject();
      if (!object)
        return fail(where, "must be an object");
      std::optional<llvm::StringRef> phase = object->getString("ph");
      if (!phase)
        return fail(where, "has no string 'ph'");
      if (*phase != "X")
        continue; // metadata (thread names), counters, ...: not drawn
      Event event;
      std::string category, name;
      int64_t rank = 0, microbatch = -1, stage = -1, chunk = -1;
      double ts = 0, dur = 0;
      if (!readCount(*object, where, "tid", 0, kMaxRanks - 1, rank, true) ||
          !readString(*object, where, "cat", category, true) ||
          !readString(*object, where, "name", name) ||
          !readSeconds(*object, where, "ts", ts, true) ||
          !readSeconds(*object, where, "dur", dur, true))
        return std::nullopt;
      std::optional<EventKind> kind = parseCategory(category);
      if (!kind)
        return fail(where, "'cat' is '" + category +
                               "'; expected F, B, W, BW, send, recv, wait, "
                               "allreduce or optimizer");
      if (const json::Value *args = object->get("args")) {
        const json::Object *arguments = args->getAsObject();
        if (!arguments)
          return fail(where + ".args", "must be an object");
        std::string at = where + ".args";
        if (!readCount(*arguments, at, "microbatch", 0, INT32_MAX,
                       microbatch) ||
            !readCount(*arguments, at, "stage", 0, INT32_MAX, stage) ||
            !readCount(*arguments, at, "chunk", 0, INT32_MAX, chunk))
          return std::nullopt;
      }
      event.rank = static_cast<int>(rank);
      event.kind = *kind;
      event.microbatch = static_cast<int>(microbatch);
      event.virtualStage = static_cast<int>(stage);
      event.chunk = static_cast<int>(chunk);
      event.start = ts / kMicrosecondsPerSecond;
      event.end = (ts + dur) / kMicrosecondsPerSecond;
      event.label = name.empty() ? category : name;
      maxRank = std::max(maxRank, event.rank);
      lastEnd = std::max(lastEnd, event.end);
      timeline.events.push_back(std::move(event));
    }
    if (timeline.ranks < 0)
      timeline.ranks = maxRank + 1;
    else if (maxRank >= timeline.ranks)
      return fail("otherData.ranks",
                  "is " + std::to_string(timeline.ranks) +
                      " but an event runs on rank " + std::to_string(maxRank));
    if (timeline.makespan < 0)
      timeline.makespan = lastEnd;
    timeline.makespan = std::max(timeline.makespan, lastEnd);
    std::stable_sort(timeline.events.begin(), timeline.events.end(),
                     [](const Event &a, const Event &b) {
                       return a.rank != b.rank ? a.rank < b.rank
                                               : a.start < b.start;
                     });
    timeline.bubble = bubble ? *bubble : bubbleOf(timeline);
    return timeline;
  }

private:
  /// Mean over ranks of the time not spent computing (or stepping the
  /// optimizer), as the simulator counts it.
  static double bubbleOf(const Timeline &timeline) {
    if (timeline.ranks == 0 || timeline.makespan <= 0)
      return 0;
    std::vector<double> busy(timeline.ranks, 0);
    for (const Event &event : timeline.events)
      if (isCompute(event.kind) || event.kind == EventKind::Optimizer)
        busy[event.rank] += event.end - event.start;
    double idle = 0;
    for (double seconds : busy)
      idle += 1 - std::min(1.0, seconds / timeline.makespan);
    return idle / timeline.ranks;
  }

  std::nullopt_t fail(const std::string &where, const std::string &what) {
    error = where.empty() ? what : where + ": " + what;
    return std::nullopt;
  }

  bool readString(const json::Object &object, const std::string &where,
                  llvm::StringRef key, std::string &value,
                  bool required = false) {
    const json::Value *member = object.get(key);
    if (!member) {
      if (required)
        fail(where, "has no '" + key.str() + "'");
      return !required;
    }
    std::optional<llvm::StringRef> text = member->getAsString();
    if (!text) {
      fail(where, "'" + key.str() + "' must be a string");
      return false;
    }
    value = text->str();
    return true;
  }

  bool readCount(const json::Object &object, const std::string &where,
                 llvm::StringRef key, int64_t min, int64_t max, int64_t &value,
                 bool required = false) {
    const json::Value *member = object.get(key);
    if (!member) {
      if (required)
        fail(where, "has no '" + key.str() + "'");
      return !required;
    }
    std::optional<int64_t> number = member->getAsInteger();
    if (!number || *number < min || *number > max) {
      fail(where, "'" + key.str() + "' must be an integer from " +
                      std::to_string(min) + " to " + std::to_string(max));
      return false;
    }
    value = *number;
    return true;
  }

  bool readCount(const json::Object &object, const std::string &where,
                 llvm::StringRef key, int64_t min, int64_t max, int &value) {
    int64_t wide = value;
    if (!readCount(object, where, key, min, max, wide))
      return false;
    value = static_cast<int>(wide);
    return true;
  }

  bool readSeconds(const json::Object &object, const std::string &where,
                   llvm::StringRef key, double &value, bool required = false) {
    const json::Value *member = object.get(key);
    if (!member) {
      if (required)
        fail(where, "has no '" + key.str() + "'");
      return !required;
    }
    std::optional<double> number = member->getAsNumber();
    if (!number || !std::isfinite(*number) || *number < 0) {
      fail(where, "'" + key.str() + "' must be a non-negative number");
      return false;
    }
    value = *number;
    return true;
  }

  std::string &error;
};
} // namespace

std::optional<Timeline> pipecc::timeline::readTraceJson(llvm::StringRef text,
                                                        std::string &error) {
  return TraceReader(error).read(text);
}
