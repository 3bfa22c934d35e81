# -*- Python -*-
# Runs every GoogleTest binary (<Library>Tests) under build/test/unittests.
import os

import lit.formats

config.name = "pipecc-unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.pipecc_obj_root, "test", "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
for var in ["HOME", "TMPDIR",
            # scripts/sanitize.sh; lit.llvm drops ASAN_OPTIONS (a missing comma).
            "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
