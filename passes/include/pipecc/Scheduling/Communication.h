//===- Communication.h - Inserting sends and receives -----------*- C++ -*-===//
//
// Turns a verified Schedule into per-rank Programs. Sends and receives are
// placed from one global linearisation: the compute actions are list
// scheduled in each rank's order against simulated time, and each message is
// emitted as a single send/receive event into both ranks' programs at the
// point of the global order where it happens. Every program is then a
// projection of one sequence in which each send meets its receive, so the
// programs cannot deadlock under blocking rendezvous; simulate() confirms it.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_SCHEDULING_COMMUNICATION_H
#define PIPECC_SCHEDULING_COMMUNICATION_H

#include "pipecc/Scheduling/Program.h"

namespace pipecc::scheduling {

enum class RecvPlacement {
  /// The receiver takes a message as soon as it is free after the message
  /// is produced; deadlock-free by construction.
  Eager,
  /// Then each receive is moved just before the compute that consumes it
  /// whenever the simulator still finds the programs deadlock-free (one
  /// simulation per receive: for tests and small problems).
  LateWhenSafe,
};

/// A send after each producing compute whose consumer is on another rank, the
/// matching receive before the consumer, and an optimizer step at the end of
/// every rank. Fails if the schedule does not verify.
Result<std::vector<Program>>
materializeCommunication(const ScheduleProblem &problem,
                         const Schedule &schedule, const TensorSizes &sizes,
                         const TimingModel &timing = {},
                         RecvPlacement placement = RecvPlacement::Eager);

} // namespace pipecc::scheduling

#endif // PIPECC_SCHEDULING_COMMUNICATION_H
