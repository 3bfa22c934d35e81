#!/usr/bin/env bash
# README command 2 (and CI): installs what is missing, builds pipecc and runs
# every test (lit + FileCheck tests and the GoogleTest suites, through lit),
# then each fuzzer for a bounded time on its seed corpus (scripts/fuzz.sh; a
# crash, hang, leak or sanitizer report fails this script).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" check-pipecc
"$root/scripts/fuzz.sh" --seconds "${PIPECC_CHECK_FUZZ_SECONDS:-20}"
