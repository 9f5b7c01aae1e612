"""Where output goes: results on stdout, notes, errors and progress on stderr.

* ``stdout_console()`` is the console every table is printed on. Its width is ``COLUMNS`` when
  set; else the terminal's when stdout is one; else, when stdout is a pipe read inside a
  terminal (``| less``, ``| grep``: shells do not export ``COLUMNS``), the width of that terminal
  (stderr's, or the controlling terminal's); else 200 (a file, or no terminal at all) so that
  tables are not cut at rich's default of 80. Trailing blanks are dropped from every line it writes.
* ``stderr_console()`` is for notes: the same stream as errors and progress, never stdout, so
  ``-o json|yaml`` output holds exactly one document and a note never lands in a pipe. On a
  terminal its lines are wrapped at the terminal's width; elsewhere each note stays one line.
* ``deferred_notes()`` is where renderers print their notes: held back until the result they
  belong to has been printed, so on a terminal a note never lands in the middle of a table.
* Every console prints text as it is: no markup, no ``:emoji:`` codes, no highlighting, since paths,
  names, reasons and messages are the user's data (``--config 'x:smile:.yaml'`` stays as typed).
* ``guard_pipes()`` makes a closed stdout (``kschedctl ... | head -1``) a quiet end: writes
  after the reader has gone are dropped and the command keeps its own exit status (0, 1 or
  2, as documented), rather than dying with ``BrokenPipeError``.

Imports rich lazily: ``kschedctl --help`` should not pay for it.
"""

from __future__ import annotations

import io
import os
import re
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
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


def _is_pipe(stream: TextIO) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):  # no file descriptor (a test's buffer)
        return False


def _terminal_width() -> int | None:
    """The width of the terminal the command runs in: stderr's, else the controlling terminal's."""
    try:
        if sys.stderr.isatty():
            return os.get_terminal_size(sys.stderr.fileno()).columns or None
    except (OSError, ValueError, AttributeError):
        pass
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:  # no controlling terminal (cron, CI, setsid)
        return None
    try:
        return os.get_terminal_size(fd).columns or None
    except OSError:
        return None
    finally:
        os.close(fd)


def stdout_width() -> int | None:
    """Width for results (None: rich asks the terminal stdout is)."""
    if _columns():
        return _columns()
    if sys.stdout.isatty():
        return None
    return (_terminal_width() if _is_pipe(sys.stdout) else None) or PIPE_WIDTH


def plain_console(**kwargs: Any) -> Console:
    """A rich Console that prints text literally: no markup, no emoji codes, no highlighting."""
    from rich.console import Console

    return Console(markup=False, emoji=False, highlight=False, **kwargs)


def stdout_console() -> Console:
    """Console for results: text printed literally (reasons like "[gate-name]" are data)."""
    return plain_console(file=_RStripLines(sys.stdout), soft_wrap=False, width=stdout_width())


def stderr_console() -> Console:
    """Console for notes and errors (stderr): wrapped at a terminal's width, one line each elsewhere."""
    console = plain_console(file=_RStripLines(sys.stderr))
    console.soft_wrap = not console.is_terminal
    return console


@contextmanager
def deferred_notes() -> Iterator[Console]:
    """A console for a renderer's notes, written to stderr once the block (the result) has been printed."""
    target = stderr_console()
    held = plain_console(
        file=io.StringIO(),
        width=target.width,
        soft_wrap=target.soft_wrap,
        force_terminal=target.is_terminal,
        color_system=target.color_system,
    )
    try:
        yield held
    finally:
        text = held.file.getvalue()  # type: ignore[attr-defined]
        if text:
            sys.stderr.write(_TRAILING_BLANKS.sub(r"\1", text))
            sys.stderr.flush()
