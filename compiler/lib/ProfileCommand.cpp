//===- ProfileCommand.cpp - `pipecc profile` ------------------------------===//
//
// The measuring is pipecc-profile-host's (runtime/tools/ProfileHost.cpp),
// which links the ranks' runtime; this side finds it like the runtime's link
// files, checks what it printed with the cost model's own reader, so that
// every file written is one `--device` accepts, and writes it whole.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Compiler/ProfileCommand.h"
#include "pipecc/Compiler/FailureHandling.h"
#include "pipecc/Compiler/OutputFile.h"
#include "pipecc/CostModel/DeviceProfile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"

#include <cstdlib>
#include <optional>

using namespace llvm;

namespace {
int fail(const Twine &message) {
  pipecc::reportError(message);
  return 1;
}

/// PIPECC_PROFILE_HOST, else the one beside this build's runtime.
std::string measuringTool() {
  if (const char *path = std::getenv("PIPECC_PROFILE_HOST"); path && *path)
    return path;
  return (Twine(PIPECC_RUNTIME_LIBRARY_DIR) + "/pipecc-profile-host").str();
}
} // namespace

int pipecc::runProfileCommand(const ProfileCommandOptions &options,
                              raw_ostream &out) {
  std::string error;
  if (!options.outputPath.empty() &&
      !checkOutputFile(options.outputPath, options.force, error))
    return fail(error);
  std::string tool = measuringTool();
  if (!sys::fs::can_execute(tool))
    return fail("cannot find the measuring tool '" + tool +
                "' (build the pipecc_runtime target, or set "
                "PIPECC_PROFILE_HOST)");
  SmallString<128> captured;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("pipecc-profile", "json", captured))
    return fail("cannot create a temporary file: " + ec.message());
  FileRemover remove(captured);
  std::string ranks = std::to_string(options.ranks);
  SmallVector<StringRef> args = {tool, "--ranks", ranks};
  if (options.quick)
    args.push_back("--quick");
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(captured),
                                          std::nullopt};
  int status = sys::ExecuteAndWait(tool, args, std::nullopt, redirects,
                                   /*SecondsToWait=*/600, 0, &error);
  if (status != 0)
    return fail("the measurement '" + tool + "' failed" +
                (error.empty() ? " (exit status " + std::to_string(status) + ")"
                               : ": " + error));
  ErrorOr<std::unique_ptr<MemoryBuffer>> text =
      MemoryBuffer::getFile(captured);
  if (!text)
    return fail("cannot read the measurement: " + text.getError().message());
  Expected<json::Value> json = json::parse((*text)->getBuffer());
  if (!json)
    return fail("the measurement printed no profile: " +
                toString(json.takeError()));
  Expected<cost::DeviceProfile> profile =
      cost::parseDeviceProfile(*json, options.outputPath);
  if (!profile)
    return fail("the measurement's profile is malformed: " +
                toString(profile.takeError()));
  auto write = [&](raw_ostream &os) {
    os << formatv("{0:2}", cost::toJSON(*profile)) << "\n";
  };
  if (options.outputPath.empty()) {
    write(out);
    return 0;
  }
  if (!writeOutputFile(options.outputPath, options.force, write, error))
    return fail(error);
  return 0;
}
