"""Stopping a server process the end-to-end tests started: SIGTERM by its pid, a bounded wait."""

import os
import signal
import subprocess


def stop_by_pid(process: subprocess.Popen, bound_s: float) -> int:
    """SIGTERM by pid; returns the exit code (killing the process, and failing, if it does not stop in time)."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
    try:
        return process.wait(timeout=bound_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError("server did not stop within the bound after SIGTERM")
