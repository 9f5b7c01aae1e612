"""Where output goes, with real pipes and a real terminal (a pty): a reader that closes stdout early,
COLUMNS on a pipe, a pipe read inside a terminal laid out for the terminal, notes after the tables
and wrapped on a terminal, progress only on a terminal's stderr and never on stdout.

Child processes run in a session of their own (``start_new_session``): without a terminal given
to them they have none, whatever terminal runs the tests."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import tempfile
import termios
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DEMO = str(ROOT / "fixtures" / "demo" / "cluster.yaml")
CONFORMANCE = ROOT / "tests" / "conformance"
SCHEDULABLE = ["explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO]
UNSCHEDULABLE = ["explain", "pod", "report-pending", "-n", "batch", "--snapshot", DEMO]
TIMEOUT = 120


def env(**extra: str) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "KSCHEDCTL_DEBUG")}
    e.update(TERM="xterm-256color", **extra)
    return e


def kschedctl(*args: str) -> list[str]:
    return [sys.executable, "-m", "kschedctl", *args]


def closed_early(args: list[str]) -> tuple[int, str]:
    """Run with stdout a pipe whose reader has already gone: every write fails with EPIPE."""
    proc = subprocess.Popen(
        kschedctl(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(), cwd=ROOT, start_new_session=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    return proc.wait(timeout=TIMEOUT), err


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (SCHEDULABLE, 0),
        ([*SCHEDULABLE, "-o", "json"], 0),
        ([*UNSCHEDULABLE, "-o", "yaml"], 1),
        (["check", str(CONFORMANCE / "dev-015-taint-toleration")], 0),
        (["plugins"], 0),
    ],
    ids=["table", "json", "yaml-unschedulable", "check", "plugins"],
)
def test_a_closed_stdout_keeps_the_exit_status_and_says_nothing(args: list[str], status: int) -> None:
    code, err = closed_early(args)
    assert code == status, err
    for word in ("BrokenPipe", "internal error", "Exception ignored", "Traceback"):
        assert word not in err
    assert all(line.startswith("note: ") for line in err.splitlines()), err


def test_head_minus_one_in_a_shell_pipeline() -> None:
    cmd = " ".join([*map(str, kschedctl(*SCHEDULABLE, "-o", "json")), "| head -1; echo status=${PIPESTATUS[0]}"])
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env(), cwd=ROOT, timeout=TIMEOUT)
    assert proc.stdout.splitlines() == ["{", "status=0"]
    assert "BrokenPipe" not in proc.stderr and "internal error" not in proc.stderr


def test_piped_output_honours_columns() -> None:
    narrow = subprocess.run(
        kschedctl(*SCHEDULABLE), capture_output=True, text=True, env=env(COLUMNS="80"), cwd=ROOT, timeout=TIMEOUT, start_new_session=True
    )
    assert narrow.returncode == 0, narrow.stderr
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80
    assert all(line == line.rstrip() for line in narrow.stdout.splitlines())
    wide = subprocess.run(
        kschedctl(*SCHEDULABLE), capture_output=True, text=True, env=env(), cwd=ROOT, timeout=TIMEOUT, start_new_session=True
    )
    longest = max(len(line) for line in wide.stdout.splitlines())
    assert 80 < longest <= 200  # no COLUMNS and no terminal at all: a pipe gets 200 columns, the full score matrix
    assert "note: default configuration (kube-scheduler v1.35)" in wide.stderr
    assert "note:" not in wide.stdout


def _read_terminal(master: int) -> bytes:
    shown = b""
    while True:
        ready, _, _ = select.select([master], [], [], TIMEOUT)
        if not ready:
            return shown
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            return shown
        if not chunk:
            return shown
        shown += chunk


def _run_with_terminal_stderr(args: list[str], **extra: str) -> tuple[int, str, str]:
    """stderr a pseudo-terminal, stdout a file: what the terminal showed, and what stdout received."""
    master, slave = pty.openpty()
    with tempfile.TemporaryFile() as stdout:  # not a pipe we would have to drain while reading the terminal
        proc = subprocess.Popen(kschedctl(*args), stdout=stdout, stderr=slave, env=env(**extra), cwd=ROOT)
        os.close(slave)
        shown = _read_terminal(master)
        os.close(master)
        code = proc.wait(timeout=TIMEOUT)
        stdout.seek(0)
        return code, shown.decode(errors="replace"), stdout.read().decode()


def test_progress_is_drawn_on_a_terminal_and_never_on_stdout() -> None:
    scenarios = [str(CONFORMANCE / d) for d in ("dev-015-taint-toleration", "dev-002-pod-affinity-required", "dev-005-topology-spread-soft")]
    code, shown, out = _run_with_terminal_stderr(["check", *scenarios, "-o", "json"], KSCHEDCTL_PROGRESS_DELAY="0")
    assert code == 0, shown
    assert "running scenarios" in shown
    assert "/3" in shown  # done / total
    assert out.lstrip().startswith("[") and "running scenarios" not in out and "\x1b" not in out
    code, shown, out = _run_with_terminal_stderr(SCHEDULABLE, KSCHEDCTL_PROGRESS_DELAY="0")
    assert code == 0
    assert "loading" in shown and "running the scheduling cycle" in shown
    assert "loading" not in out


def test_no_progress_without_a_terminal_or_for_quick_work() -> None:
    proc = subprocess.run(
        kschedctl("check", str(CONFORMANCE / "dev-015-taint-toleration")),
        capture_output=True, text=True, env=env(KSCHEDCTL_PROGRESS_DELAY="0"), cwd=ROOT, timeout=TIMEOUT, start_new_session=True,
    )
    assert "running scenarios" not in proc.stderr + proc.stdout
    # on a terminal, steps named, but none lasting the delay (600 s, which no machine comes near): only the note
    code, shown, _ = _run_with_terminal_stderr(SCHEDULABLE, KSCHEDCTL_PROGRESS_DELAY="600")
    assert code == 0
    assert [line for line in ANSI.sub("", shown).splitlines() if line.strip()] == ["note: default configuration (kube-scheduler v1.35)"]


# --------------------------------------------------------------------------- inside a terminal


def _terminal(columns: int) -> tuple[int, int]:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    return master, slave


def _controlled_by(tty: int) -> Callable[[], None]:
    """For the child: a new session whose controlling terminal is ``tty``."""

    def setup() -> None:
        os.setsid()
        fcntl.ioctl(tty, termios.TIOCSCTTY, 0)

    return setup


def _piped_inside_a_terminal(args: list[str], columns: int, *, stderr_terminal: bool, **extra: str) -> tuple[str, str]:
    """stdout a pipe (``kschedctl ... | less``); stderr the terminal, or a pipe with the terminal only the
    controlling one. Returns what went down the pipe, and what the terminal showed."""
    master, slave = _terminal(columns)
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            kschedctl(*args), stdout=subprocess.PIPE, stderr=slave if stderr_terminal else err, stdin=subprocess.DEVNULL,
            env=env(**extra), cwd=ROOT, preexec_fn=_controlled_by(slave),
        )
        os.close(slave)
        assert proc.stdout is not None
        out = proc.stdout.read().decode()
        shown = _read_terminal(master)
        os.close(master)
        assert proc.wait(timeout=TIMEOUT) == 0
    return out, shown.decode(errors="replace")


@pytest.mark.parametrize("stderr_terminal", [True, False], ids=["stderr-terminal", "controlling-terminal"])
def test_a_pipe_inside_a_terminal_is_laid_out_for_the_terminal(stderr_terminal: bool) -> None:
    out, _ = _piped_inside_a_terminal(SCHEDULABLE, 90, stderr_terminal=stderr_terminal)
    longest = max(len(line) for line in out.splitlines())
    assert 70 < longest <= 90, out
    assert "\x1b" not in out  # still a pipe: no colours
    out, _ = _piped_inside_a_terminal(SCHEDULABLE, 90, stderr_terminal=stderr_terminal, COLUMNS="130")
    assert 90 < max(len(line) for line in out.splitlines()) <= 130  # COLUMNS still wins


def test_a_file_inside_a_terminal_keeps_the_file_width() -> None:
    master, slave = _terminal(90)
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(kschedctl(*SCHEDULABLE), stdout=out, stderr=slave, env=env(), cwd=ROOT, preexec_fn=_controlled_by(slave))
        os.close(slave)
        _read_terminal(master)
        os.close(master)
        assert proc.wait(timeout=TIMEOUT) == 0
        out.seek(0)
        assert max(len(line) for line in out.read().decode().splitlines()) > 90


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _on_a_terminal(args: list[str], columns: int) -> list[str]:
    """stdout and stderr the same terminal, as a user sees them: the lines shown, without colours (and
    without the progress line, which a slow machine would draw)."""
    master, slave = _terminal(columns)
    proc = subprocess.Popen(
        kschedctl(*args), stdout=slave, stderr=slave, stdin=subprocess.DEVNULL, env=env(KSCHEDCTL_PROGRESS_DELAY="600"), cwd=ROOT,
        preexec_fn=_controlled_by(slave),
    )
    os.close(slave)
    shown = _read_terminal(master)
    os.close(master)
    proc.wait(timeout=TIMEOUT)
    return ANSI.sub("", shown.decode(errors="replace")).replace("\r", "").splitlines()


@pytest.mark.parametrize(
    ("args", "last_result_line"),
    [
        ([*SCHEDULABLE, "--fix"], "would have tied or won."),
        (["simulate", "-f", str(ROOT / "fixtures" / "demo" / "cart.yaml"), "--snapshot", DEMO, "--replicas", "9"], "scheduling cycles)"),
    ],
    ids=["explain", "simulate"],
)
def test_notes_on_a_terminal_come_after_the_tables_wrapped_to_its_width(args: list[str], last_result_line: str) -> None:
    lines = _on_a_terminal(args, 80)
    notes = [i for i, line in enumerate(lines) if line.startswith("note: ")]
    assert notes, lines
    last = max(i for i, line in enumerate(lines) if line.rstrip().endswith(last_result_line))
    assert last < notes[0], "\n".join(lines)
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert all(line == line.rstrip() for line in lines[notes[0]:])


def test_the_progress_line_shows_file_names_as_typed(tmp_path: Path) -> None:
    cluster = tmp_path / "c:smile:[bold]x.yaml"
    cluster.write_bytes(Path(DEMO).read_bytes())
    code, shown, _ = _run_with_terminal_stderr(["explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", str(cluster)],
                                               KSCHEDCTL_PROGRESS_DELAY="0", COLUMNS="300")
    assert code == 0, shown
    assert "c:smile:[bold]x.yaml" in shown and "😄" not in shown
