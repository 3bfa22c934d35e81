//===- Svg.cpp - A Gantt chart of pipeline timelines ----------------------===//
//
// One row per rank, time to the right. Compute boxes fill the row, coloured
// by kind (later chunks paler) with the micro-batch number inside when it
// fits; sends and receives are thin bars at the row's foot, waits hatched
// bars through its middle, so the gaps between computes say why a rank
// idled. Several timelines share one time axis.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Timeline/Timeline.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <cmath>

using namespace pipecc;
using namespace pipecc::timeline;

namespace {
constexpr double kWidth = 1200;
constexpr double kLabelWidth = 64;
constexpr double kRightMargin = 24;
constexpr double kPlotWidth = kWidth - kLabelWidth - kRightMargin;
constexpr double kRowHeight = 26;
constexpr double kRowGap = 4;
constexpr double kPanelHeader = 22;
constexpr double kPanelGap = 14;
constexpr double kCharWidth = 6.6; // of the 11px font in the boxes

struct Style {
  const char *fill;
  const char *name;
};

Style styleOf(EventKind kind) {
  switch (kind) {
  case EventKind::Forward:
    return {"#5b8ff9", "F forward"};
  case EventKind::BackwardInput:
    return {"#f6bd16", "B backward (input)"};
  case EventKind::BackwardWeight:
    return {"#5ad8a6", "W backward (weights)"};
  case EventKind::Backward:
    return {"#e8684a", "BW backward (fused)"};
  case EventKind::Send:
    return {"#555555", "send"};
  case EventKind::Recv:
    return {"#9a9a9a", "receive"};
  case EventKind::Wait:
    return {"url(#wait)", "wait for peer"};
  case EventKind::AllReduce:
    return {"#ff9d4d", "all-reduce"};
  case EventKind::Optimizer:
    return {"#9270ca", "optimizer step"};
  }
  return {"#cccccc", "?"};
}

/// Text for XML character data and attribute values.
std::string escape(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      // Control characters are not allowed in XML 1.0.
      if (static_cast<unsigned char>(c) < 0x20)
        out += ' ';
      else
        out += c;
    }
  }
  return out;
}

/// Seconds in the unit that suits `scale`, e.g. "12.5 ms".
struct TimeUnit {
  double factor;
  const char *suffix;
};

TimeUnit unitFor(double scale) {
  if (scale >= 1)
    return {1, "s"};
  if (scale >= 1e-3)
    return {1e3, "ms"};
  return {1e6, "us"};
}

std::string number(double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.4g", value);
  return text;
}

std::string percent(double fraction) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.1f%%", 100 * fraction);
  return text;
}

/// A tick spacing of 1, 2 or 5 times a power of ten giving 5 to 12 ticks.
double tickStep(double span) {
  if (span <= 0)
    return 1;
  double raw = span / 10;
  double power = std::pow(10, std::floor(std::log10(raw)));
  for (double mantissa : {1.0, 2.0, 5.0, 10.0})
    if (mantissa * power >= raw)
      return mantissa * power;
  return 10 * power;
}

std::string describe(const Timeline &timeline, TimeUnit unit) {
  std::string text = timeline.schedule.empty() ? "(schedule not given)"
                                               : timeline.schedule;
  text += ": P=" + std::to_string(timeline.ranks);
  if (timeline.chunks > 1)
    text += " v=" + std::to_string(timeline.chunks);
  if (timeline.microbatches > 0)
    text += " M=" + std::to_string(timeline.microbatches);
  text += ", makespan " + number(timeline.makespan * unit.factor) + " " +
          unit.suffix + ", bubble " + percent(timeline.bubble);
  if (!timeline.peakActivationMicrobatches.empty())
    text += ", peak activations " +
            number(*std::max_element(
                timeline.peakActivationMicrobatches.begin(),
                timeline.peakActivationMicrobatches.end())) +
            " micro-batches";
  return text;
}

class SvgWriter {
public:
  SvgWriter(llvm::ArrayRef<const Timeline *> timelines, llvm::raw_ostream &os)
      : timelines(timelines), os(os) {
    for (const Timeline *timeline : timelines) {
      span = std::max(span, timeline->makespan);
      for (const Event &event : timeline->events)
        span = std::max(span, event.end);
    }
    if (span <= 0)
      span = 1;
    unit = unitFor(span);
  }

  void write() {
    bool several = timelines.size() > 1;
    double top = several ? 44 : 40;
    double height = top;
    for (const Timeline *timeline : timelines)
      height += panelHeight(*timeline) + kPanelGap;
    double axisY = height;
    height += 40; // axis labels
    double legendY = height;
    height += 28;

    os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
       << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth
       << "\" height=\"" << height << "\" viewBox=\"0 0 " << kWidth << " "
       << height << "\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n"
       << "<!-- pipecc timeline -->\n"
       << "<defs><pattern id=\"wait\" width=\"6\" height=\"6\" "
          "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
          "<rect width=\"6\" height=\"6\" fill=\"#ffffff\"/>"
          "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#c0392b\" "
          "stroke-width=\"2\"/></pattern></defs>\n"
       << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    os << "<text x=\"" << kLabelWidth << "\" y=\"24\" font-size=\"16\" "
       << "font-weight=\"bold\">" << escape(title()) << "</text>\n";

    double y = top;
    for (const Timeline *timeline : timelines) {
      writePanel(*timeline, y, several);
      y += panelHeight(*timeline) + kPanelGap;
    }
    writeAxis(top, axisY);
    writeLegend(legendY);
    os << "</svg>\n";
  }

private:
  std::string title() const {
    if (timelines.size() == 1)
      return describe(*timelines[0], unit) + " (" + timelines[0]->source +
             ")";
    std::string text;
    for (const Timeline *timeline : timelines) {
      if (!text.empty())
        text += " vs ";
      text += timeline->source;
      if (!timeline->schedule.empty())
        text += " " + timeline->schedule;
    }
    return text + ", on one time scale";
  }

  double panelHeight(const Timeline &timeline) const {
    return kPanelHeader + timeline.ranks * (kRowHeight + kRowGap);
  }

  double x(double seconds) const {
    return kLabelWidth + seconds / span * kPlotWidth;
  }

  void writePanel(const Timeline &timeline, double top, bool header) {
    os << "<g class=\"timeline\" data-source=\"" << escape(timeline.source)
       << "\">\n";
    if (header)
      os << "<text x=\"" << kLabelWidth << "\" y=\"" << top + 15
         << "\" font-size=\"13\">" << escape(timeline.source) << ": "
         << escape(describe(timeline, unit)) << "</text>\n";
    double rowsTop = top + kPanelHeader;
    for (int rank = 0; rank < timeline.ranks; ++rank) {
      double rowY = rowsTop + rank * (kRowHeight + kRowGap);
      os << "<g class=\"rank\" data-rank=\"" << rank << "\">"
         << "<rect x=\"" << kLabelWidth << "\" y=\"" << rowY << "\" width=\""
         << kPlotWidth << "\" height=\"" << kRowHeight
         << "\" fill=\"#f4f4f4\"/>"
         << "<text x=\"" << kLabelWidth - 8 << "\" y=\""
         << rowY + kRowHeight / 2 + 4
         << "\" font-size=\"12\" text-anchor=\"end\">rank " << rank
         << "</text></g>\n";
    }
    for (const Event &event : timeline.events)
      writeEvent(timeline, event, rowsTop + event.rank * (kRowHeight + kRowGap));
    os << "</g>\n";
  }

  void writeEvent(const Timeline &timeline, const Event &event, double rowY) {
    double left = x(event.start);
    double width = std::max(0.5, x(event.end) - left);
    Style style = styleOf(event.kind);
    double boxY = rowY, boxHeight = kRowHeight;
    switch (event.kind) {
    case EventKind::Send:
    case EventKind::Recv:
      boxY = rowY + kRowHeight - 5;
      boxHeight = 5;
      break;
    case EventKind::Wait:
      boxY = rowY + kRowHeight * 0.3;
      boxHeight = kRowHeight * 0.4;
      break;
    case EventKind::AllReduce:
      boxY = rowY + kRowHeight * 0.2;
      boxHeight = kRowHeight * 0.6;
      break;
    default:
      break;
    }
    // Later chunks paler, so a V or an interleaving reads at a glance.
    double opacity = 1;
    if (isCompute(event.kind) && event.chunk > 0 && timeline.chunks > 1)
      opacity = 1 - 0.45 * event.chunk / (timeline.chunks - 1);
    os << "<rect x=\"" << llvm::format("%.2f", left) << "\" y=\"" << boxY
       << "\" width=\"" << llvm::format("%.2f", width) << "\" height=\""
       << boxHeight << "\" fill=\"" << style.fill << "\"";
    if (opacity < 1)
      os << " fill-opacity=\"" << llvm::format("%.2f", opacity) << "\"";
    if (isCompute(event.kind) || event.kind == EventKind::Optimizer)
      os << " stroke=\"#ffffff\" stroke-width=\"0.6\"";
    os << "><title>rank " << event.rank << ": " << escape(event.label) << " "
       << number(event.start * unit.factor) << "-"
       << number(event.end * unit.factor) << " " << unit.suffix
       << "</title></rect>\n";
    if (!isCompute(event.kind) || event.microbatch < 0)
      return;
    std::string text = std::to_string(event.microbatch);
    if (width < kCharWidth * text.size() + 2)
      return;
    os << "<text x=\"" << llvm::format("%.2f", left + width / 2) << "\" y=\""
       << rowY + kRowHeight / 2 + 4
       << "\" font-size=\"11\" text-anchor=\"middle\">" << text
       << "</text>\n";
  }

  void writeAxis(double top, double axisY) {
    double step = tickStep(span);
    os << "<g class=\"axis\">\n<line x1=\"" << kLabelWidth << "\" y1=\""
       << axisY << "\" x2=\"" << kLabelWidth + kPlotWidth << "\" y2=\""
       << axisY << "\" stroke=\"#333333\"/>\n";
    for (int i = 0; i * step <= span * (1 + 1e-9); ++i) {
      double seconds = i * step;
      double tickX = x(seconds);
      os << "<line x1=\"" << llvm::format("%.2f", tickX) << "\" y1=\"" << top
         << "\" x2=\"" << llvm::format("%.2f", tickX) << "\" y2=\""
         << axisY + 5 << "\" stroke=\"#dddddd\" stroke-width=\"0.6\"/>"
         << "<text x=\"" << llvm::format("%.2f", tickX) << "\" y=\""
         << axisY + 18 << "\" font-size=\"11\" text-anchor=\"middle\">"
         << number(seconds * unit.factor) << "</text>\n";
    }
    os << "<text x=\"" << kLabelWidth + kPlotWidth / 2 << "\" y=\""
       << axisY + 34 << "\" font-size=\"12\" text-anchor=\"middle\">time ("
       << unit.suffix << ")</text>\n</g>\n";
  }

  void writeLegend(double y) {
    // Only what the chart shows, in a fixed order.
    std::vector<EventKind> shown;
    for (EventKind kind :
         {EventKind::Forward, EventKind::BackwardInput,
          EventKind::BackwardWeight, EventKind::Backward, EventKind::Send,
          EventKind::Recv, EventKind::Wait, EventKind::AllReduce,
          EventKind::Optimizer})
      for (const Timeline *timeline : timelines)
        if (llvm::any_of(timeline->events,
                         [&](const Event &e) { return e.kind == kind; })) {
          shown.push_back(kind);
          break;
        }
    os << "<g class=\"legend\">\n";
    double legendX = kLabelWidth;
    for (EventKind kind : shown) {
      Style style = styleOf(kind);
      os << "<rect x=\"" << legendX << "\" y=\"" << y << "\" width=\"14\" "
         << "height=\"14\" fill=\"" << style.fill
         << "\" stroke=\"#888888\" stroke-width=\"0.5\"/>"
         << "<text x=\"" << legendX + 19 << "\" y=\"" << y + 11
         << "\" font-size=\"12\">" << style.name << "</text>\n";
      legendX += 30 + 7 * std::string(style.name).size();
    }
    bool chunked = llvm::any_of(timelines, [](const Timeline *timeline) {
      return timeline->chunks > 1;
    });
    if (chunked)
      os << "<text x=\"" << legendX << "\" y=\"" << y + 11
         << "\" font-size=\"12\">(paler: later chunk)</text>\n";
    os << "</g>\n";
  }

  llvm::ArrayRef<const Timeline *> timelines;
  llvm::raw_ostream &os;
  double span = 0;
  TimeUnit unit{1, "s"};
};
} // namespace

void pipecc::timeline::writeSvg(llvm::ArrayRef<const Timeline *> timelines,
                                llvm::raw_ostream &os) {
  SvgWriter(timelines, os).write();
}
