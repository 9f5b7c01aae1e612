"""Work in a forked process (``snapshot/forked.py``): when it pays, its answer, and no process left behind."""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from kschedctl.cli.progress import Activity
from kschedctl.errors import InputError
from kschedctl.snapshot import forked

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only")


def reaped(pid: int) -> bool:
    """Whether the process ``pid`` is no child of this one any more (ended and waited for)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_second_process_is_used_only_when_a_core_is_free(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(forked, "cpu_times", lambda: (1000 + 18, 5000 + 40))  # 40 ticks since, 18 idle
    assert forked.available((1000, 5000))  # 0.9 of a core idle while this process worked alone
    monkeypatch.setattr(forked, "cpu_times", lambda: (1000 + 8, 5000 + 40))
    assert not forked.available((1000, 5000))  # 0.4: another process had the other core
    # too short a look, or none: the load average, below the number of cores
    monkeypatch.setattr(forked, "cpu_times", lambda: (1000, 5000 + 4))
    monkeypatch.setattr(os, "getloadavg", lambda: (1.6, 1.0, 1.0))
    assert forked.available((1000, 5000)) and forked.available(None)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.0, 1.0, 1.0))
    assert not forked.available(None)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert not forked.available(None)


def test_cpu_times_reads_the_machines_counters() -> None:
    times = forked.cpu_times()
    assert times is not None and 0 <= times[0] <= times[1]


def test_no_fork_while_a_thread_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked, "available", lambda since=None: True)
    with monkeypatch.context() as alone:
        alone.setattr(threading, "enumerate", lambda: [threading.current_thread()])  # (other tests may leave threads)
        assert forked.pays()
    with a_thread() as thread, monkeypatch.context() as two:
        two.setattr(threading, "enumerate", lambda: [threading.current_thread(), thread])
        assert not forked.pays()
        forked.harmless([thread])  # (a progress line's: the fork may happen beside it)
        assert forked.pays()


@contextmanager
def a_thread() -> Iterator[threading.Thread]:
    """A thread that runs until the block ends."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        yield thread
    finally:
        stop.set()
        thread.join()


def test_a_progress_lines_threads_do_not_keep_a_load_from_forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal the progress line's threads (its start timer, rich's refresh) run during the load:
    they are harmless to a fork, and a thread of anyone else still is not."""
    console = Console(file=StringIO(), force_terminal=True)
    before = set(threading.enumerate())  # (other tests may leave threads of their own)
    with Activity(console, enabled=True) as act:
        act.phase("reading")
        act._start()
        progress_threads = [t for t in threading.enumerate() if t not in before]
        assert act._started and progress_threads
        me = threading.current_thread()
        with monkeypatch.context() as m:
            m.setattr(threading, "enumerate", lambda: [me, *progress_threads])
            assert forked.only_harmless_threads()
        with a_thread() as other, monkeypatch.context() as m:
            m.setattr(threading, "enumerate", lambda: [me, *progress_threads, other])
            assert not forked.only_harmless_threads()


def test_an_answer_that_does_not_come_back_from_pickling_is_sent_as_what_stands_for_it() -> None:
    class Odd(Exception):
        def __init__(self, a: str, b: str) -> None:
            super().__init__(f"{a} {b}")

    assert pickle.loads(forked.pickled({"fine": [1]}, lambda: "instead")) == {"fine": [1]}
    assert pickle.loads(forked.pickled(Odd("no", "pickle"), lambda: "instead")) == "instead"


@linux_only
def test_the_childs_answer_and_its_error_come_back() -> None:
    child = forked.Child(lambda answer: answer({"seen": [1, 2, 3]}))
    assert child.answer() == {"seen": [1, 2, 3]}
    child.wait()
    assert reaped(child.pid)

    def fail(answer: Callable[[Any], None]) -> None:
        raise InputError("bad", source="f.yaml", document=3, field="spec")

    child = forked.Child(fail)
    error = child.answer()
    assert isinstance(error, InputError) and str(error) == "f.yaml: document 3: spec: bad" and error.document == 3
    child.wait()
    assert reaped(child.pid)


@linux_only
def test_a_child_that_dies_without_answering_is_lost() -> None:
    child = forked.Child(lambda answer: os.kill(os.getpid(), signal.SIGKILL))
    with pytest.raises(forked.ChildLost):
        child.answer()
    child.wait()
    assert reaped(child.pid)


@linux_only
def test_settle_waits_for_background_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked, "pays", lambda since=None: True)
    done = tmp_path / "done"
    forked.run_in_background(lambda: done.write_text("yes"))
    pids = [c.pid for c in forked.background]
    assert len(pids) == 1 and pids[0] != os.getpid()  # (forked: this process did not do it)
    forked.settle()
    assert done.read_text() == "yes" and not forked.background and reaped(pids[0])


def test_background_work_is_done_here_when_a_fork_does_not_pay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked, "pays", lambda since=None: False)
    done = tmp_path / "done"
    forked.run_in_background(lambda: done.write_text(str(os.getpid())))
    assert not forked.background and done.read_text() == str(os.getpid())


@linux_only
def test_settle_stops_a_child_when_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked, "pays", lambda since=None: True)
    here = os.getpid()
    forked.run_in_background(lambda: time.sleep(600) if os.getpid() != here else None)  # (never here)
    pid = forked.background[0].pid
    os.kill(pid, signal.SIGINT)  # Ctrl-C is the main process's: the child goes on
    assert not reaped(pid)
    forked.settle(stop=True)
    assert reaped(pid) and not forked.background


def test_the_own_childrens_cpu_time_counts_as_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    """A step that used the second core (a reaped child's 30 ticks) leaves it free for the next one."""
    monkeypatch.setattr(forked, "only_harmless_threads", lambda: True)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(forked, "_STARTED", (1000, 5000))
    monkeypatch.setattr(forked, "_CHILDREN_AT_START", 7)
    monkeypatch.setattr(forked, "cpu_times", lambda: (1000 + 12, 5000 + 40))  # 0.6 of a core idle
    monkeypatch.setattr(forked, "_children_ticks", lambda: 7)
    assert not forked.pays()
    monkeypatch.setattr(forked, "_children_ticks", lambda: 7 + 10)  # 10 of the busy ticks were our child's
    assert forked.pays()
    assert not forked.pays((1000, 5000))  # an explicit look is taken as it is


@linux_only
def test_let_go_leaves_background_work_to_end_on_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After ``let_go`` the settle at the process's end does not wait for a background child (it ends on its
    own), unless told to stop; one before the end still does."""
    monkeypatch.setattr(forked, "pays", lambda since=None: True)
    monkeypatch.setattr(forked, "_letting_go", [])
    go = tmp_path / "go"
    done = tmp_path / "done"

    def work() -> None:
        while not go.exists():  # (until this test says so: no guess at how long anything takes)
            time.sleep(0.01)
        done.write_text("yes")

    forked.run_in_background(work)
    pid = forked.background[0].pid
    forked.let_go()
    forked.settle(end=True)
    assert not forked.background and not done.exists()  # (not waited for)
    go.write_text("")
    os.waitpid(pid, 0)
    assert done.read_text() == "yes"
    forked.run_in_background(lambda: done.write_text("again"))
    forked.settle()  # (a load before reading the cache: waited for)
    assert done.read_text() == "again" and not forked.background
    forked.run_in_background(lambda: time.sleep(600))
    stopped = forked.background[0].pid
    forked.settle(stop=True, end=True)  # Ctrl-C still stops it
    assert reaped(stopped) and not forked.background


@linux_only
def test_a_command_ends_before_its_background_write_and_its_output_ends_with_it(tmp_path: Path) -> None:
    """A process that let go of its background child ends first, and a pipe it wrote to ends with it: the child
    holds none of its standard streams."""
    import subprocess

    go = tmp_path / "go"
    code = (
        "import os, sys, time\n"
        "from kschedctl.snapshot import forked\n"
        "forked.pays = lambda since=None: True\n"
        f"go = {str(go)!r}\n"
        "def work():\n"
        "    while not os.path.exists(go):\n"
        "        time.sleep(0.01)\n"
        "    print('from the child')\n"
        "forked.run_in_background(work)\n"
        "print(forked.background[0].pid, flush=True)\n"
        "forked.let_go()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    child = int(out.stdout.split()[0])  # (the output ended although the child still runs)
    assert out.returncode == 0 and out.stdout.split() == [str(child)]
    assert os.path.exists(f"/proc/{child}")
    go.write_text("")


def test_a_read_waits_for_another_process_writing_the_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry another process is writing (its lock held) is read once written; a writer that never ends is
    waited for ``WRITER_WAIT`` at most (a clock given here), then the entry is read as it is."""
    import fcntl

    from kschedctl.snapshot import cache

    entry = tmp_path / "e.model"
    lock = tmp_path / ("e.model" + cache.LOCK_SUFFIX)
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    now = [0.0]

    def clock() -> float:
        now[0] += 1.0
        return now[0]

    cache._wait_for_writer(entry, timeout=5, clock=clock, pause=0)
    assert now[0] >= 5  # (waited until the deadline)
    released = threading.Timer(0, lambda: fcntl.flock(fd, fcntl.LOCK_UN))
    now[0] = 0.0
    waited = threading.Event()

    def read() -> None:
        cache._wait_for_writer(entry, timeout=1e9, clock=clock, pause=0.001)
        waited.set()

    reader = threading.Thread(target=read)
    reader.start()
    released.start()
    reader.join(600)
    assert waited.is_set()
    os.close(fd)
    lock.unlink()
    now[0] = 0.0
    cache._wait_for_writer(entry, clock=clock)  # no lock: no wait
    assert now[0] == 0.0


def test_an_entry_is_written_under_its_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kschedctl.snapshot import cache

    entry = tmp_path / "e.model"
    seen: list[bool] = []

    def records() -> Iterator[Any]:
        seen.append((tmp_path / ("e.model" + cache.LOCK_SUFFIX)).exists())
        yield ("header",)

    cache.write_records(entry, records(), "*.model")
    assert seen == [True] and entry.is_file() and not (tmp_path / ("e.model" + cache.LOCK_SUFFIX)).exists()
