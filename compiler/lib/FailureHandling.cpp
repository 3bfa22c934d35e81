// How pipecc ends when it cannot go on: signals, LLVM's fatal errors, running
// out of memory. See docs/design.md, "Output folders and failures".
#include "pipecc/Compiler/FailureHandling.h"

#include "pipecc/Compiler/RemoveTree.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <pthread.h>
#include <string>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace pipecc;

namespace {

struct CleanupState {
  std::recursive_mutex mutex;
  std::string stagingFolder;
  pid_t child = 0;
};

CleanupState &state() {
  // Never destroyed: a handler may run during static destruction.
  static CleanupState *instance = new CleanupState;
  return *instance;
}

/// Writes one line with write(2) only: the handlers may run after memory ran
/// out or while stderr's stream is in an error state. Control characters in
/// the message (an LLVM reason may span lines) become spaces.
void writeError(const char *first, const char *second = "") {
  char line[1024];
  size_t length = 0;
  for (const char *part : {"pipecc: error: ", first, second})
    for (const char *c = part; *c && length + 1 < sizeof(line); ++c)
      line[length++] = static_cast<unsigned char>(*c) < 0x20 ? ' ' : *c;
  line[length++] = '\n';
  const char *text = line;
  while (length > 0) {
    ssize_t written = ::write(STDERR_FILENO, text, length);
    if (written <= 0)
      return;
    text += written;
    length -= static_cast<size_t>(written);
  }
}

/// Kills the linker, removes the staging folder, and ends the process. The
/// lock is never released: the main thread cannot commit afterwards.
[[noreturn]] void cleanUpAndExit(const char *message, const char *detail) {
  // The cleanup itself may fail the same way (out of memory while listing
  // the folder): then end at once rather than recurse.
  static thread_local bool cleaningUp = false;
  if (cleaningUp) {
    writeError(message, detail);
    ::_exit(1);
  }
  cleaningUp = true;
  CleanupState &cleanup = state();
  cleanup.mutex.lock();
  if (cleanup.child > 0) {
    // The linker runs in a process group of its own: end all of it.
    ::kill(-cleanup.child, SIGKILL);
    ::waitpid(cleanup.child, nullptr, 0);
  }
  if (!cleanup.stagingFolder.empty()) {
    std::string ignored;
    removeTree(cleanup.stagingFolder, ignored);
  }
  writeError(message, detail);
  ::_exit(1);
}

void onFatalError(void *, const char *reason, bool) {
  cleanUpAndExit(reason && *reason ? reason : "internal error", "");
}

void onOutOfMemory(void *, const char *, bool) {
  cleanUpAndExit("out of memory", "");
}

constexpr int kTerminationSignals[] = {SIGINT, SIGTERM, SIGHUP};

/// The termination signals the parent process left ignored.
sigset_t &inheritedIgnored() {
  static sigset_t set = [] {
    sigset_t empty;
    sigemptyset(&empty);
    return empty;
  }();
  return set;
}

} // namespace

void pipecc::noteInheritedSignalDispositions() {
  for (int signal : kTerminationSignals) {
    struct sigaction action;
    if (sigaction(signal, nullptr, &action) == 0 &&
        action.sa_handler == SIG_IGN)
      sigaddset(&inheritedIgnored(), signal);
  }
}

void pipecc::installFailureHandlers() {
  state();
  llvm::install_fatal_error_handler(onFatalError);
  llvm::install_bad_alloc_error_handler(onOutOfMemory);
  // Past a file-size limit, write fails with EFBIG instead of the process
  // being killed (by LLVM's crash handler, with a stack dump).
  std::signal(SIGXFSZ, SIG_IGN);
  // A closed pipe on stdout (`pipecc --emit=graph -o out | head`) is a failed
  // write too, reported and cleaned up, not LLVM's silent exit 74 that
  // leaves the staging folder behind.
  std::signal(SIGPIPE, SIG_IGN);

  // Threads inherit the mask, so blocking here, before the MLIR context
  // starts its thread pool, routes the signals to the waiting thread alone.
  sigset_t signals;
  sigemptyset(&signals);
  for (int signal : kTerminationSignals) {
    if (sigismember(&inheritedIgnored(), signal))
      std::signal(signal, SIG_IGN); // over InitLLVM's handler
    else
      sigaddset(&signals, signal);
  }
  if (sigisemptyset(&signals) ||
      pthread_sigmask(SIG_BLOCK, &signals, nullptr) != 0)
    return;
  std::thread([signals] {
    int signal = 0;
    while (sigwait(&signals, &signal) != 0) {
    }
    const char *name = signal == SIGINT    ? "SIGINT"
                       : signal == SIGTERM ? "SIGTERM"
                                           : "SIGHUP";
    cleanUpAndExit("interrupted by ", name);
  }).detach();
}

void pipecc::setStagingFolderForCleanup(llvm::StringRef path) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  state().stagingFolder = path.str();
}

void pipecc::setChildProcessForCleanup(int pid) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  state().child = pid;
}

std::unique_lock<std::recursive_mutex> pipecc::holdFailureCleanup() {
  return std::unique_lock<std::recursive_mutex>(state().mutex);
}

void pipecc::reportError(const llvm::Twine &message) {
  auto hold = holdFailureCleanup();
  llvm::errs() << "pipecc: error: " << message << "\n";
}
