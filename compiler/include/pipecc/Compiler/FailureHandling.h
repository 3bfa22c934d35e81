#ifndef PIPECC_COMPILER_FAILUREHANDLING_H
#define PIPECC_COMPILER_FAILUREHANDLING_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <mutex>

namespace pipecc {

/// Makes every way pipecc can end early end the same way: one line
/// `pipecc: error: ...` on stderr, the registered staging folder removed,
/// exit code 1. Covers SIGINT, SIGTERM and SIGHUP (blocked in every thread and
/// taken by a dedicated thread with sigwait, so the cleanup runs outside
/// signal context), LLVM's fatal and out-of-memory error handlers, and
/// SIGXFSZ and SIGPIPE (ignored, so a write past a file-size limit or into a
/// closed pipe fails with EFBIG or EPIPE and is reported like any other
/// write error). A termination signal the parent
/// process ignores (nohup) stays ignored. Call it in main after InitLLVM and
/// before anything starts a thread.
void installFailureHandlers();

/// Notes which termination signals the parent process ignores. Call it
/// before InitLLVM, which installs its own handlers over them.
void noteInheritedSignalDispositions();

/// The staging folder the handlers remove; an empty path clears it.
void setStagingFolderForCleanup(llvm::StringRef path);

/// The child process (the linker) the signal handler kills before removing
/// the staging folder it writes into; 0 clears it.
void setChildProcessForCleanup(int pid);

/// Held while the output folder is swapped into place, so a signal is
/// handled before or after the swap, never half-way.
std::unique_lock<std::recursive_mutex> holdFailureCleanup();

/// Prints `pipecc: error: <message>` to stderr while holding the cleanup
/// lock. A signal's cleanup holds that lock from removing the staging folder
/// until the process ends, so a write that failed because the folder went
/// away is never reported before (or instead of) the signal's own line.
void reportError(const llvm::Twine &message);

} // namespace pipecc

#endif // PIPECC_COMPILER_FAILUREHANDLING_H
