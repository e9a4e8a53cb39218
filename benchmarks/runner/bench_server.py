"""One tessera-server for the throughput test with refreshes: the system under test that every query stream and the
refresh stream connect to (`tessera --connect`), as the TPC-H specification's throughput test runs them.

The server opens a hard-linked view of the loaded data directory (bench_streams.linked_copy), so the refreshes
change the view and never the cached directory; the view is removed when the server stops.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from bench_data import SetupError

START_TIMEOUT_S = 120  # opening SF1's data directory reads the catalog only; generous for a busy machine
STOP_TIMEOUT_S = 60


class TesseraServer:
    """tessera-server on 127.0.0.1 and a port it picks (it prints "listening on HOST:PORT"); `target` is that
    address. COPY may read files in `allowed_dir` only (the refresh pairs' .tbl files)."""

    def __init__(self, binary: str, data_dir: str, view_dir: str, threads: int, memory_limit: int | None,
                 allowed_dir: str):
        import bench_streams

        if not os.path.exists(binary):
            raise SetupError(f"{binary} not found (--server, or build the tessera-server target)")
        self.view_dir = bench_streams.linked_copy(data_dir, view_dir)
        self.args = [binary, "--data", self.view_dir, "--listen", "127.0.0.1:0", "--threads", str(threads),
                     "--allowed-directories", allowed_dir]
        if memory_limit:
            self.args += ["--memory-limit", str(memory_limit)]
        self._stderr = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self._stderr, text=True)
        listening = []

        def read_stdout():
            for line in self.process.stdout:  # read to the end, so that the server never blocks on its stdout
                if "listening on" in line and not listening:
                    listening.append(line.strip().rsplit(" ", 1)[1])

        self._reader = threading.Thread(target=read_stdout, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not listening and self.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        if not listening:
            self.stop()
            raise SetupError(f"tessera-server did not start: {self.error_tail()}")
        self.target = listening[0]

    def error_tail(self) -> str:
        self._stderr.seek(0)
        return " ".join(self._stderr.read().strip().splitlines()[-5:])

    def died(self) -> str | None:
        """Why the server is gone, or None while it runs."""
        code = self.process.poll()
        if code is None:
            return None
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        return f"tessera-server died ({how}): {self.error_tail()}"

    def stop(self) -> None:
        """SIGTERM by pid (a graceful shutdown), SIGKILL after STOP_TIMEOUT_S; then the view is removed."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.view_dir, ignore_errors=True)
