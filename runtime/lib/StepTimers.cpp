//===- StepTimers.cpp - The --timers report ------------------------------===//
#include "pipecc/Runtime/StepTimers.h"
#include "pipecc/Runtime/Context.h"

#include <algorithm>
#include <cstdio>
#include <type_traits>

namespace pipecc::rt {

namespace {
/// "step_ms 95.100 compute_ms ... other_ms ..." (+ sgemm fields when the
/// BLAS reports them).
std::string fields(const StepTimes &t) {
  double other = t.step - t.compute - t.post - t.wait - t.optimizer;
  char text[512];
  int n = std::snprintf(
      text, sizeof text,
      "step_ms %.3f compute_ms %.3f post_ms %.3f wait_ms %.3f optimizer_ms "
      "%.3f other_ms %.3f",
      t.step * 1e3, t.compute * 1e3, t.post * 1e3, t.wait * 1e3,
      t.optimizer * 1e3, other * 1e3);
  auto gflops = [&](double seconds) {
    return seconds > 0 ? static_cast<double>(t.sgemmFlops) * 1e-9 / seconds
                       : 0.0;
  };
  if (t.sgemmCalls >= 0 && n > 0 && n < static_cast<int>(sizeof text))
    n += std::snprintf(text + n, sizeof text - n,
                       " sgemm_calls %lld sgemm_ms %.3f sgemm_gflops %.1f",
                       static_cast<long long>(t.sgemmCalls),
                       t.sgemmSeconds * 1e3, gflops(t.sgemmSeconds));
  // A rank sharing its CPU: the same products in the thread's CPU time
  // (the wall time also holds the other ranks' time slices).
  if (t.sgemmCalls >= 0 && t.sgemmCpuSeconds >= 0 && n > 0 &&
      n < static_cast<int>(sizeof text))
    std::snprintf(text + n, sizeof text - n,
                  " sgemm_cpu_ms %.3f sgemm_cpu_gflops %.1f",
                  t.sgemmCpuSeconds * 1e3, gflops(t.sgemmCpuSeconds));
  return text;
}

/// Field by field over `steps`: the mean or the median.
StepTimes combine(const std::vector<StepTimes> &steps, bool median) {
  StepTimes result;
  auto of = [&](auto member) {
    std::vector<std::decay_t<decltype(steps.front().*member)>> values;
    for (const StepTimes &t : steps)
      values.push_back(t.*member);
    std::sort(values.begin(), values.end());
    if (median) {
      size_t n = values.size();
      return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    }
    std::decay_t<decltype(steps.front().*member)> sum = 0;
    for (auto v : values)
      sum += v;
    return sum / static_cast<decltype(sum)>(values.size());
  };
  result.step = of(&StepTimes::step);
  result.compute = of(&StepTimes::compute);
  result.post = of(&StepTimes::post);
  result.wait = of(&StepTimes::wait);
  result.optimizer = of(&StepTimes::optimizer);
  result.sgemmCalls = of(&StepTimes::sgemmCalls);
  result.sgemmFlops = of(&StepTimes::sgemmFlops);
  result.sgemmSeconds = of(&StepTimes::sgemmSeconds);
  result.sgemmCpuSeconds = of(&StepTimes::sgemmCpuSeconds);
  return result;
}
} // namespace

std::string stepTimerLines(int rank, const std::vector<StepTimes> &steps) {
  std::string text;
  char head[64];
  for (size_t i = 0; i < steps.size(); ++i) {
    std::snprintf(head, sizeof head, "timers rank %d step %zu ", rank, i + 1);
    text += head + fields(steps[i]) + "\n";
  }
  if (steps.empty())
    return text;
  // The first step pays for first touches and warm-up: leave it out.
  std::vector<StepTimes> measured(
      steps.size() > 1 ? steps.begin() + 1 : steps.begin(), steps.end());
  for (bool median : {false, true}) {
    std::snprintf(head, sizeof head, "timers rank %d %s steps %zu ", rank,
                  median ? "median" : "mean", measured.size());
    text += head + fields(combine(measured, median)) + "\n";
  }
  std::string blas = blasDescription();
  if (!blas.empty()) {
    std::snprintf(head, sizeof head, "timers rank %d blas ", rank);
    text += head + blas + "\n";
  }
  return text;
}

} // namespace pipecc::rt
