//===- CpuFeatures.cpp - CPUID check of --target-cpu's features ----------===//
#include "pipecc/Runtime/CpuFeatures.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

using namespace pipecc::rt;

namespace {
#if defined(__x86_64__)
enum Register { EAX, EBX, ECX, EDX };
/// Register state the OS must save for a feature's instructions (XCR0).
enum OsState { None, Avx, Avx512 };

struct Feature {
  const char *name;
  unsigned leaf, subleaf;
  Register reg;
  unsigned bit;
  OsState state;
};

// Intel SDM vol. 2A, CPUID; AMD APM vol. 3, appendix E.
constexpr Feature kFeatures[] = {
    {"sse3", 1, 0, ECX, 0, None},
    {"pclmul", 1, 0, ECX, 1, None},
    {"ssse3", 1, 0, ECX, 9, None},
    {"fma", 1, 0, ECX, 12, Avx},
    {"cx16", 1, 0, ECX, 13, None},
    {"sse4.1", 1, 0, ECX, 19, None},
    {"sse4.2", 1, 0, ECX, 20, None},
    {"movbe", 1, 0, ECX, 22, None},
    {"popcnt", 1, 0, ECX, 23, None},
    {"aes", 1, 0, ECX, 25, None},
    {"xsave", 1, 0, ECX, 26, None},
    {"avx", 1, 0, ECX, 28, Avx},
    {"f16c", 1, 0, ECX, 29, Avx},
    {"rdrnd", 1, 0, ECX, 30, None},
    {"fsgsbase", 7, 0, EBX, 0, None},
    {"bmi", 7, 0, EBX, 3, None},
    {"avx2", 7, 0, EBX, 5, Avx},
    {"bmi2", 7, 0, EBX, 8, None},
    {"avx512f", 7, 0, EBX, 16, Avx512},
    {"avx512dq", 7, 0, EBX, 17, Avx512},
    {"rdseed", 7, 0, EBX, 18, None},
    {"adx", 7, 0, EBX, 19, None},
    {"avx512ifma", 7, 0, EBX, 21, Avx512},
    {"clflushopt", 7, 0, EBX, 23, None},
    {"clwb", 7, 0, EBX, 24, None},
    {"avx512cd", 7, 0, EBX, 28, Avx512},
    {"sha", 7, 0, EBX, 29, None},
    {"avx512bw", 7, 0, EBX, 30, Avx512},
    {"avx512vl", 7, 0, EBX, 31, Avx512},
    {"avx512vbmi", 7, 0, ECX, 1, Avx512},
    {"avx512vbmi2", 7, 0, ECX, 6, Avx512},
    {"gfni", 7, 0, ECX, 8, None},
    {"vaes", 7, 0, ECX, 9, Avx},
    {"vpclmulqdq", 7, 0, ECX, 10, Avx},
    {"avx512vnni", 7, 0, ECX, 11, Avx512},
    {"avx512bitalg", 7, 0, ECX, 12, Avx512},
    {"avx512vpopcntdq", 7, 0, ECX, 14, Avx512},
    {"avx512fp16", 7, 0, EDX, 23, Avx512},
    {"avxvnni", 7, 1, EAX, 4, Avx},
    {"avx512bf16", 7, 1, EAX, 5, Avx512},
    {"sahf", 0x80000001, 0, ECX, 0, None},
    {"lzcnt", 0x80000001, 0, ECX, 5, None},
    {"sse4a", 0x80000001, 0, ECX, 6, None},
    {"prfchw", 0x80000001, 0, ECX, 8, None},
    {"xop", 0x80000001, 0, ECX, 11, Avx},
    {"fma4", 0x80000001, 0, ECX, 16, Avx},
    {"tbm", 0x80000001, 0, ECX, 21, None},
};

bool osSaves(OsState state) {
  if (state == None)
    return true;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27)))
    return false; // no OSXSAVE: the OS enabled no AVX state
  uint32_t lo, hi;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  uint32_t avx = 0x6;            // XMM and YMM
  uint32_t avx512 = avx | 0xe0;  // and opmask, ZMM_Hi256, Hi16_ZMM
  uint32_t needed = state == Avx ? avx : avx512;
  return (lo & needed) == needed;
}

bool hasFeature(const Feature &feature) {
  unsigned regs[4] = {0, 0, 0, 0};
  unsigned maxLeaf = __get_cpuid_max(feature.leaf & 0x80000000u, nullptr);
  if (maxLeaf < feature.leaf)
    return false;
  __cpuid_count(feature.leaf, feature.subleaf, regs[EAX], regs[EBX],
                regs[ECX], regs[EDX]);
  return (regs[feature.reg] >> feature.bit & 1u) && osSaves(feature.state);
}
#endif
} // namespace

std::vector<std::string_view> pipecc::rt::checkedCpuFeatures() {
  std::vector<std::string_view> names;
#if defined(__x86_64__)
  for (const Feature &feature : kFeatures)
    names.push_back(feature.name);
#endif
  return names;
}

std::vector<std::string> pipecc::rt::missingCpuFeatures(std::string_view required) {
  std::vector<std::string> missing;
  while (!required.empty()) {
    size_t comma = required.find(',');
    std::string_view name = required.substr(0, comma);
    required = comma == std::string_view::npos ? std::string_view()
                                               : required.substr(comma + 1);
#if defined(__x86_64__)
    for (const Feature &feature : kFeatures)
      if (name == feature.name && !hasFeature(feature))
        missing.emplace_back(name);
#endif
  }
  return missing;
}

extern "C" void pipecc_rt_require_cpu_features(const char *target_cpu,
                                               const char *features) {
  std::vector<std::string> missing = missingCpuFeatures(features);
  if (missing.empty())
    return;
  std::string list;
  for (const std::string &name : missing)
    list += (list.empty() ? "" : ", ") + name;
  // Before main and before any stage code runs: nothing to clean up.
  std::fprintf(stderr,
               "error: this executable was compiled with --target-cpu %s, "
               "whose features this CPU lacks: %s (recompile with "
               "--target-cpu native on this machine, or generic)\n",
               target_cpu, list.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}
