#!/usr/bin/env bash
# README command 2 (and CI): installs what is missing, builds pipecc and runs
# every test (lit + FileCheck tests and the GoogleTest suites, through lit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" check-pipecc
