"""Work handed to a forked process on the second core: whether that pays, and the process itself.

Loading a big snapshot does several things in a row that need not wait for each other (reading a live
cluster's lists beside the build, ``forkfetch``; checking a file's objects beside the build, storing the
built Cluster in the cache while the command goes on, ``loader``). A forked child sees this process's
memory as it was at the fork, so nothing has to be sent to it; what it answers comes back pickled
through a pipe. It pays only where fork is safe (Linux), with a second core that is free and no thread
of this process running (a fork copies only the thread that forks: a lock another thread holds would
stay held in the child); elsewhere the caller does the same work in-process.

A child that goes on working after this process no longer needs its answer (a cache write) is kept in
``background`` until ``settle`` reaps it: every command does so before it exits (``cli.common.guarded``;
an ``atexit`` hook too, for other callers), and a load does before it reads the cache. The installed
command lets such a child finish after the command has answered and ended (``let_go``): the next
command that wants its entry waits for it. Such a child ignores Ctrl-C (the main process's to handle)
and ends cleanly, removing any half-written file, when ``settle(stop=True)`` terminates it.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import pickle
import signal
import sys
import threading
import weakref
from collections.abc import Callable, Iterable
from types import FrameType
from typing import Any

#: Idle cores, on average over the look, from which a second process pays (a busy machine's idle time is noise).
IDLE_CORES = 0.75
#: Objects (documents, pods) from which a load hands work to a second process: below, a fork costs more
#: than the work it would take over.
MANY = 20_000


def cpu_times() -> tuple[int, int] | None:
    """The machine's idle and total CPU time so far (clock ticks, all cores: ``/proc/stat``); None where
    there is no such file."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != b"cpu":
        return None
    ticks = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
    return ticks[3] + ticks[4], sum(ticks)


def available(since: tuple[int, int] | None = None) -> bool:
    """Whether a second process pays here: fork works (Linux; it is unsafe or missing elsewhere), this
    process may run on two cores or more, and one of them is free. Free: idle for three quarters of the
    time since ``since`` (``cpu_times()`` taken while this process worked alone, so that its own work is
    not counted as another's), or, without that, the last minute's load average below the number of
    cores. On a machine whose cores are busy the second process would only add its own work (handing
    things over) to what they have to do, for no gain."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        cores = len(os.sched_getaffinity(0))
        if cores < 2:
            return False
        now = cpu_times()
        if since is not None and now is not None and now[1] - since[1] >= 10:
            idle = (now[0] - since[0]) / (now[1] - since[1]) * (os.cpu_count() or cores)
            return idle >= IDLE_CORES
        return os.getloadavg()[0] < cores
    except OSError:
        return False


def pays(since: tuple[int, int] | None = None) -> bool:
    """``available`` (``since``: by default when this module was imported, near the process's start), and
    no other thread of this process runs (what a fork would copy half of) but ``harmless`` ones. The CPU time of this process's
    own children (reaped) since the start counts as idle: the second core was free for them, and a step
    that used it (the YAML parsed in two processes, ``splityaml``) must not keep the next one from it."""
    if not only_harmless_threads():
        return False
    if since is None and _STARTED is not None:
        since = (_STARTED[0] - (_children_ticks() - _CHILDREN_AT_START), _STARTED[1])
    return available(since)


#: Threads that never hold what a forked child takes (a lock, a stream): the progress line's, which draw on
#: a terminal a child never writes to (it answers through its own pipe and ends with ``os._exit``).
_harmless: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


def harmless(threads: Iterable[threading.Thread]) -> None:
    """Let a fork happen while ``threads`` run (see ``_harmless``)."""
    _harmless.update(threads)


def only_harmless_threads() -> bool:
    """Whether every other thread of this process is a ``harmless`` one."""
    me = threading.current_thread()
    return all(t is me or t in _harmless for t in threading.enumerate())


def _children_ticks() -> int:
    """The CPU time of this process's reaped children so far, in clock ticks (``/proc/stat``'s unit)."""
    times = os.times()
    return round((times.children_user + times.children_system) * _TICKS)


class _Stopped(BaseException):
    """The child was told to stop (SIGTERM): what it was writing is removed on the way out."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stopped


class Child:
    """``Child(work)``: ``work(answer)`` run in a forked process; ``answer(value)`` sends ``value`` (pickled)
    to this process, which takes it with ``answer()``. The child may go on working after it answered;
    it ends with ``work`` (an exception ``work`` raises is its answer, when it has not answered yet).
    ``OSError`` when no process can be forked."""

    def __init__(self, work: Callable[[Callable[[Any], None]], None]) -> None:
        read_end, write_end = os.pipe()
        # Ctrl-C and SIGTERM wait until the child has its own handlers (before, they would raise in it
        # the exception meant for this process, and it would go on as this process)
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            pid = os.fork()
        except OSError:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.close(read_end)
            os.close(write_end)
            raise
        if pid == 0:  # pragma: no cover (the child: coverage of it is not collected)
            try:
                os.close(read_end)
                _run(work, write_end, mask)
            finally:
                os._exit(0)
        os.close(write_end)
        self.pid = pid
        self._pipe = os.fdopen(read_end, "rb")
        self._answer: tuple[bool, Any] | None = None
        self._ended = False
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    def answer(self, *, keep: bool = True) -> Any:
        """What the child answered (the exception it answered with is returned, not raised); ``ChildLost``
        when it ended, or died, without answering. ``keep=False``: not kept for another call (a big answer
        is let go of as soon as the caller does)."""
        if self._answer is None:
            try:
                size = int.from_bytes(self._read(8), "little")
                self._answer = (True, pickle.loads(self._read(size)))
            except (EOFError, OSError, pickle.UnpicklingError, ValueError, TypeError, AttributeError, ImportError):
                self._answer = (False, None)
        if not self._answer[0]:
            raise ChildLost("the forked process ended without answering")
        value = self._answer[1]
        if not keep:
            self._answer = (True, None)
        return value

    def _read(self, size: int) -> bytes:
        data = self._pipe.read(size)
        if data is None or len(data) < size:
            raise EOFError
        return data

    def wait(self, stop: bool = False) -> None:
        """Wait for the child's end (``stop``: tell it to stop first)."""
        if self._ended:
            return
        if stop:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGTERM)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:  # (reaped already)
            pass
        except BaseException:  # interrupted while waiting: the child is stopped, then waited for
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGTERM)
            with contextlib.suppress(OSError):
                os.waitpid(self.pid, 0)
            raise
        finally:
            self._ended = True
            self._pipe.close()


class ChildLost(Exception):
    """A forked process ended without answering (killed, out of memory)."""


def _run(work: Callable[[Callable[[Any], None]], None], fd: int, mask: set[int | signal.Signals]) -> None:  # pragma: no cover
    """The child's life: ``work``, its answer to ``fd``, then ``os._exit`` (never this process's exit
    handlers, nor a flush of a copy of its buffered output). No collector: it would walk, and so copy,
    every page of the memory shared with this process, for a short life's little garbage."""
    gc.disable()
    background.clear()  # (this process's children, not the child's)
    _quiet_streams()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    answered = False

    def answer(value: Any) -> None:
        nonlocal answered
        answered = True
        data = pickled(value, lambda: ChildLost(f"the forked process's answer could not be sent: {type(value).__name__}"))
        with contextlib.suppress(OSError):
            os.write(fd, len(data).to_bytes(8, "little"))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        with contextlib.suppress(OSError):
            os.close(fd)

    try:
        work(answer)
    except BaseException as e:
        if not answered and not isinstance(e, _Stopped):
            with contextlib.suppress(BaseException):
                answer(e)
    finally:
        os._exit(0)


def _quiet_streams() -> None:  # pragma: no cover (the child's)
    """Point the child's standard streams at /dev/null: it answers through its own pipe, and a pipe this process
    writes to (``kschedctl ... | jq``) must end when this process does, not when a child still at work does."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.close(devnull)


def pickled(value: Any, instead: Callable[[], Any]) -> bytes:
    """``value`` pickled, for another process, when it comes back from pickling (an exception whose
    arguments do not, say); else ``instead()`` pickled."""
    try:
        data = pickle.dumps(value)
        pickle.loads(data)
        return data
    except Exception:
        return pickle.dumps(instead())


#: Children at work that nobody waits for an answer from (cache writes): reaped by ``settle``.
background: list[Child] = []


def settle(stop: bool = False, *, end: bool = False) -> None:
    """Reap every background child: wait for its work to end, or (``stop``) stop it first. ``end``: this
    process is about to end; after ``let_go``, a background child is then left to end on its own, unless
    ``stop``."""
    if end and _letting_go and not stop:
        background.clear()
        return
    while background:
        background.pop().wait(stop)


#: Set by ``let_go``.
_letting_go: list[bool] = []


def let_go() -> None:
    """Let background children outlive this process: ``settle`` at its end no longer waits for them (but still
    stops them when told to, on Ctrl-C). For a process that ends once its command has answered (``cli.main.run``): what
    such a child writes is a cache entry, written whole under another name, then renamed; a command that
    wants the entry meanwhile waits for it (``cache._wait_for_writer``). The child holds none of this
    process's standard streams (``_run``): a reader of its output sees the end when this process ends."""
    _letting_go[:] = [True]


def run_in_background(work: Callable[[], None]) -> None:
    """``work()`` in a forked background child when that pays (``pays``), else here, now."""
    if pays():
        try:
            background.append(Child(lambda answer: work()))
            return
        except OSError:  # no process to fork: done here
            pass
    work()


#: Clock ticks a second (``cpu_times``' unit).
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
#: The machine's CPU times, and this process's children's, when this module was imported (``pays``).
_STARTED = cpu_times()
_CHILDREN_AT_START = _children_ticks()
atexit.register(lambda: settle(end=True))
