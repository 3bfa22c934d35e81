#ifndef PIPECC_COMPILER_SCHEDULECOMMAND_H
#define PIPECC_COMPILER_SCHEDULECOMMAND_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace pipecc {

/// `pipecc schedule`: a schedule of the library, simulated without a model.
struct ScheduleCommandOptions {
  int64_t ranks = 4;
  int64_t microbatches = 8;
  int64_t chunks = 1;
  std::string schedule = "1f1b";
  /// Seconds per micro-batch: one value for every virtual stage, or one per
  /// virtual stage in model order.
  std::vector<double> forward{1}, backwardInput{1}, backwardWeight{1};
  /// Seconds per message: one value, or one per boundary between virtual
  /// stages q and q + 1.
  std::vector<double> messageSeconds{0};
  /// Most activations a rank may hold, in micro-batches of its virtual
  /// stages.
  std::optional<double> memoryLimit;
  /// Split the backward into B and W even when the schedule does not need
  /// it.
  bool splitBackward = false;
  /// A device profile (name or file); empty: none. The ranks share its
  /// cores (processor sharing when they are fewer than the ranks).
  std::string device;
  /// Print the sends and receives in each rank's program too.
  bool showMessages = false;
  std::string tracePath, svgPath, outputDir;
  bool force = false;
};

/// The schedules `--schedule` accepts, in the library's order.
std::vector<std::string> scheduleNames();

/// A comma-separated list of non-negative decimal numbers (seconds), e.g.
/// "1" or "1,0.5,2"; nullopt and a one-line `error` naming `flag` otherwise.
std::optional<std::vector<double>>
parseSecondsList(llvm::StringRef flag, llvm::StringRef text,
                 std::string &error);

/// Generates, verifies and simulates the schedule, prints each rank's
/// program, the verdict, makespan, bubble and peak memory to `out`, and
/// writes the timeline files asked for. Errors are one `pipecc: error:` line
/// on stderr; returns 0 on success, 1 otherwise.
int runScheduleCommand(const ScheduleCommandOptions &options,
                       llvm::raw_ostream &out);

/// `pipecc timeline a.json [b.json] [-o out.svg]`: renders one trace, or two
/// on one time scale, as an SVG (to `outputPath`, or `out` when empty).
int runTimelineCommand(const std::vector<std::string> &tracePaths,
                       llvm::StringRef outputPath, bool force,
                       llvm::raw_ostream &out);

} // namespace pipecc

#endif // PIPECC_COMPILER_SCHEDULECOMMAND_H
