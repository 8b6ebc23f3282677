"""Drive the real ``stockade`` command on a pseudo-terminal, like a person at a keyboard."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import termios
import time
from pathlib import Path


class Terminal:
    """``stockade`` running on a pseudo-terminal, driven like a person would."""

    def __init__(self, *args: str, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.controller, terminal = os.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "stockade", *args],
            cwd=cwd,
            env=env,
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            start_new_session=True,
        )
        os.close(terminal)
        self.seen = b""

    def expect(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"timed out waiting for {text!r}; got {self.seen!r}"
            ready, _, _ = select.select([self.controller], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.controller, 4096)
                except OSError:
                    chunk = b""
                assert chunk, f"terminal closed before {text!r}; got {self.seen!r}"
                self.seen += chunk
        return self.seen.decode(errors="replace")

    def press(self, key: bytes) -> None:
        # the prompt switches the terminal to cbreak after printing: wait for that, or a
        # key typed before it would sit in the line buffer
        deadline = time.monotonic() + 30
        while termios.tcgetattr(self.controller)[3] & termios.ICANON:
            assert time.monotonic() < deadline, "the prompt never left canonical mode"
            time.sleep(0.01)
        os.write(self.controller, key)

    def finish(self) -> int:
        code = self.process.wait(timeout=60)
        while True:
            ready, _, _ = select.select([self.controller], [], [], 0.2)
            if not ready:
                break
            try:
                chunk = os.read(self.controller, 4096)
            except OSError:
                break
            if not chunk:
                break
            self.seen += chunk
        os.close(self.controller)
        return code
