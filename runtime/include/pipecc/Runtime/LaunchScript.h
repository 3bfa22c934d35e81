//===- LaunchScript.h - The out/launch script of a compiled pipeline -*- C++ -*-===//
//
// Header-only, no dependencies: the compiler includes it to write out/launch
// without linking the runtime. The template text is runtime/launch.sh.in,
// embedded at configure time (LaunchTemplate.inc in the build tree; link the
// `pipecc_launch_script` interface target for the include path).
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_LAUNCHSCRIPT_H
#define PIPECC_RUNTIME_LAUNCHSCRIPT_H

#include <string>

namespace pipecc::rt {

#include "pipecc/Runtime/LaunchTemplate.inc" // defines kLaunchTemplate

/// Fills `templateText`'s placeholders: @PIPECC_NUM_RANKS@ -> numRanks.
inline std::string renderLaunchScript(int numRanks,
                                      const std::string &templateText =
                                          kLaunchTemplate) {
  std::string script = templateText;
  const std::string placeholder = "@PIPECC_NUM_RANKS@";
  const std::string value = std::to_string(numRanks);
  for (size_t pos = script.find(placeholder); pos != std::string::npos;
       pos = script.find(placeholder, pos + value.size()))
    script.replace(pos, placeholder.size(), value);
  return script;
}

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_LAUNCHSCRIPT_H
