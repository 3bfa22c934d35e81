//===- ProfileCommand.h - `pipecc profile` ----------------------*- C++ -*-===//
//
// Measures this machine (pipecc-profile-host, built beside the runtime) and
// writes a device profile that `--device FILE.json` reads.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_COMPILER_PROFILECOMMAND_H
#define PIPECC_COMPILER_PROFILECOMMAND_H

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace pipecc {

struct ProfileCommandOptions {
  /// The profile file to write; empty: stdout.
  std::string outputPath;
  bool force = false;
  /// Processes of the message measurement (even).
  int ranks = 2;
  /// A small grid and few repeats (seconds): for tests.
  bool quick = false;
};

/// Runs the measurement and writes the profile; the exit status. Errors are
/// one `pipecc: error:` line on stderr.
int runProfileCommand(const ProfileCommandOptions &options,
                      llvm::raw_ostream &out);

} // namespace pipecc

#endif // PIPECC_COMPILER_PROFILECOMMAND_H
