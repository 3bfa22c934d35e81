#!/usr/bin/env bash
# A stand-in for Nsight Compute in gpu-scripts.test: drops the 8 option
# words gpu-check.sh passes, runs the profiled command, then prints a real
# per-kernel summary (ncu-per-kernel.txt, part of an H200 run's output).
shift 8
"$@" >/dev/null 2>&1 || exit $?
cat "$(dirname "$0")/ncu-per-kernel.txt"
