"""Where output goes: results on stdout, notes, errors and progress on stderr.

* ``stdout_console()`` is the console every table is printed on. Its width is the terminal's,
  or ``COLUMNS`` when set (also when stdout is a pipe or a file), else 200 for pipes and files
  so that piped tables are not cut at rich's default of 80. Trailing blanks are dropped from
  every line it writes.
* ``stderr_console()`` is for notes: the same stream as errors and progress, never stdout, so
  ``-o json|yaml`` output holds exactly one document and a note never lands in a pipe.
* ``guard_pipes()`` makes a closed stdout (``kschedctl ... | head -1``) a quiet end: writes
  after the reader has gone are dropped and the command keeps its own exit status (0, 1 or
  2, as documented), rather than dying with ``BrokenPipeError``.

Imports rich lazily: ``kschedctl --help`` should not pay for it.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console

#: Width of tables written to a pipe or a file when ``COLUMNS`` is not set.
PIPE_WIDTH = 200

_TRAILING_BLANKS = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)(?=\n)")


class _RStripLines:
    """A text stream that drops blanks at the end of each line (rich pads titles and wrapped text)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(_TRAILING_BLANKS.sub(r"\1", text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class PipeGuard:
    """Wraps sys.stdout or sys.stderr: once the reader has closed the pipe, output is dropped quietly.

    The file descriptor is then pointed at /dev/null, so that what the interpreter still holds
    in its buffers can be flushed at exit without another ``BrokenPipeError``.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.closed_by_reader = False

    def _closed(self) -> None:
        self.closed_by_reader = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def write(self, text: str) -> int:
        if not self.closed_by_reader:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._closed()
        return len(text)

    def flush(self) -> None:
        if not self.closed_by_reader:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._closed()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_pipes() -> None:
    """Install PipeGuard on sys.stdout and sys.stderr (once; the console entry points call it)."""
    if not isinstance(sys.stdout, PipeGuard):
        sys.stdout = PipeGuard(sys.stdout)
    if not isinstance(sys.stderr, PipeGuard):
        sys.stderr = PipeGuard(sys.stderr)


def _columns() -> int | None:
    value = os.environ.get("COLUMNS", "")
    return int(value) if value.isdigit() and int(value) > 0 else None


def stdout_console() -> Console:
    """Console for results: no markup (reasons like "[gate-name]" are data) and no auto-highlighting."""
    from rich.console import Console

    width = _columns() or (None if sys.stdout.isatty() else PIPE_WIDTH)
    return Console(
        file=_RStripLines(sys.stdout),  # type: ignore[arg-type]
        soft_wrap=False,
        width=width,
        markup=False,
        highlight=False,
    )


def stderr_console() -> Console:
    """Console for notes and errors (stderr): wraps at the terminal's width, no markup."""
    from rich.console import Console

    return Console(stderr=True, markup=False, highlight=False, soft_wrap=True)
