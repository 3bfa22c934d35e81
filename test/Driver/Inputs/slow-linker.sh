#!/bin/sh
# A C++ driver that takes its time: starts a child that sleeps a minute,
# writes the child's pid to $SLOW_LINKER_PID_FILE and waits for it before
# linking, so a test can interrupt pipecc meanwhile and check that the
# linker's own children ended with it.
sleep 60 &
echo $! > "$SLOW_LINKER_PID_FILE.tmp" && mv "$SLOW_LINKER_PID_FILE.tmp" "$SLOW_LINKER_PID_FILE"
wait $!
exec c++ "$@"
