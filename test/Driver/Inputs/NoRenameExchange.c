// An LD_PRELOAD shim for tests: renameat2 with RENAME_EXCHANGE or
// RENAME_NOREPLACE fails with EINVAL, as on file systems without them, so
// pipecc's fallback for replacing an output folder runs. Each refusal is
// logged to $PIPECC_TEST_RENAME_LOG, so a test can tell the shim was used.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

int renameat2(int oldDirFd, const char *oldPath, int newDirFd,
              const char *newPath, unsigned int flags) {
  if (flags & (RENAME_EXCHANGE | RENAME_NOREPLACE)) {
    const char *logPath = getenv("PIPECC_TEST_RENAME_LOG");
    FILE *log = logPath ? fopen(logPath, "a") : NULL;
    if (log) {
      fprintf(log, "refused %s\n",
              (flags & RENAME_EXCHANGE) ? "RENAME_EXCHANGE"
                                        : "RENAME_NOREPLACE");
      fclose(log);
    }
    errno = EINVAL;
    return -1;
  }
  return renameat(oldDirFd, oldPath, newDirFd, newPath);
}
