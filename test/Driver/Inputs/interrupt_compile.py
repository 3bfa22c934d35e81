#!/usr/bin/env python3
"""Interrupts a compile the way a user (Ctrl-C), a scheduler (SIGTERM) or a
closed terminal (SIGHUP) would, at the worst moment: while the staging folder
exists. Before the signal it plants, inside the staging folder, a symbolic
link to CANARY_DIR, which the cleanup must unlink without descending.

pipecc starts with default signal dispositions, as an interactive shell
starts a foreground job (lit's workers ignore SIGINT, which children would
inherit). With SIGNAL written `ignored-SIGHUP`, pipecc starts with it
ignored instead, as under nohup, and no link is planted.

With $INTERRUPT_AFTER_FILE set, it also waits until that file exists (a
slow linker writes it, to be interrupted while it runs).

Usage: interrupt_compile.py SIGNAL OUT_DIR CANARY_DIR pipecc ARGS...
Prints pipecc's exit status and its stderr.
"""
import glob
import os
import signal
import subprocess
import sys
import time


def main():
    signame, out, canary = sys.argv[1:4]
    command = sys.argv[4:]
    ignored = signame.startswith("ignored-")
    signame = signame.removeprefix("ignored-")

    def dispositions():
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        if ignored:
            signal.signal(getattr(signal, signame), signal.SIG_IGN)

    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True,
                               preexec_fn=dispositions)
    deadline = time.monotonic() + 120
    staging = []
    while not staging and time.monotonic() < deadline:
        if process.poll() is not None:
            break
        staging = glob.glob(glob.escape(out) + ".pipecc-staging-*")
        after = os.environ.get("INTERRUPT_AFTER_FILE")
        if after and not os.path.exists(after):
            staging = []
        time.sleep(0.005)
    if not staging:
        process.kill()
        print("no staging folder appeared while pipecc ran")
        return 1
    if not ignored:
        os.symlink(canary, os.path.join(staging[0], "planted-link"))
    process.send_signal(getattr(signal, signame))
    _, stderr = process.communicate(timeout=60)
    print(f"exit status {process.returncode}")
    sys.stdout.write(stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
