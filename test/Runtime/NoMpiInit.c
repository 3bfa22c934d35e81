/*===- NoMpiInit.c - LD_PRELOAD shim: MPI start-up ends the process --------===*
 *
 * libpipecc_test_no_mpi_init.so replaces MPI_Init and MPI_Init_thread by a
 * message and exit code 42, so that a test can show which rank executables
 * start MPI: none under the socket transport (test/E2E/launch-socket.test).
 *
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <unistd.h>

static int refuse(void) {
  fputs("pipecc-test: MPI start-up called\n", stderr);
  fflush(stderr);
  _exit(42);
}

int MPI_Init(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  return refuse();
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  (void)argc;
  (void)argv;
  (void)required;
  (void)provided;
  return refuse();
}
