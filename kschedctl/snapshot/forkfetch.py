"""Reading a live cluster's lists in a second process while this one builds the model of them.

An explain of a live 5,000-node cluster spends its time on three things in a row: the lists'
transfer and JSON decoding, building the model (``loader.build_cluster``), and the scheduling
cycle. The first two need not wait for each other: a forked process (the reader) asks for the
pages, decodes and redacts them, and hands each page's objects over as soon as they are in, in
``marshal``'s format (several times faster to load than the JSON it came from, and smaller, the
managedFields being gone); meanwhile this process builds the model of the pages before. When it has
nothing left to build, the reader hands it the next page undecoded (``Raw``) to decode itself, so that
the two processes share the decoding. On two cores the transfer and decoding then cost about half of
what they cost in one process, and they run beside the build.

Everything the reader says goes through one pipe, in order: a page (the resource's index in
``RESOURCES`` and its objects), a progress report, a list that started again (its ``continue``
token expired), the notes of the read at its end, or its error (pickled, raised here when it is
the cluster's answer). A page goes to a temporary file, the pipe only saying where, so that the
reader never waits for the build (the file starts again whenever every page written has been
read). The count of pages read is shared memory the reader looks at to decide which page to hand
over undecoded. When a list starts again after objects of it were built, or the reader dies or
fails on its own (no room for the file), ``Restart`` tells the caller to read the cluster again
without the reader. The reader needs fork (Linux) and a second core that is free (``forked.available``);
elsewhere, or on a busy machine, the caller reads in-process as before.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import pickle
import signal
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any

from kschedctl.errors import ClusterAccessError, KschedctlError
from kschedctl.snapshot.forked import pickled
from kschedctl.snapshot.source import RESOURCES, APIResource, Encoded, Fetched, Page, Progress, Raw, Sink

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from kschedctl.snapshot.loader import Document

#: What the reader runs: every list into the sink, the read's notes into the Fetched, progress reported,
#: a page handed over undecoded when the callable says so.
Read = Callable[[Sink, Fetched, Progress, Callable[[], bool]], None]
#: How this process decodes a page handed over undecoded: its objects, as the reader would have made them.
Decode = Callable[[APIResource, bytes], list[dict[str, Any]]]
#: Pages the reader may be ahead by before it stops handing pages over undecoded.
AHEAD = 2


class Restart(Exception):
    """The objects handed over so far cannot be used (a list started again, the reader died): read again."""


class _Forward:
    """The reader's Sink: each page to the pipe as it arrives."""

    takes_encoded = False

    def __init__(self, conn: Connection, fd: int, taken: Any) -> None:
        self._conn = conn
        self._fd = fd
        self._end = 0
        self._sent = 0  # pages
        self._taken = taken  # pages the main process has taken (shared memory it counts in)

    def hand_over(self) -> bool:
        """Whether the next page goes undecoded: when the main process has taken nearly every page sent, it
        would otherwise wait for the reader, so it decodes this one itself meanwhile."""
        return self._sent - self._taken.value < AHEAD

    def take(self, res: APIResource, pages: Iterable[Page | None]) -> None:
        index = RESOURCES.index(res)
        for page in pages:
            if page is None:
                self.send(("restart", index))
            elif isinstance(page, Encoded):
                raise TypeError("the reader forwards objects, not encoded pages")
            elif page:
                if self._sent == self._taken.value:  # every page sent has been read: the file starts again
                    self._end = 0
                data = page.body if isinstance(page, Raw) else marshal.dumps(page)
                os.pwrite(self._fd, data, self._end)  # (a file, not the pipe: the reader never waits for the build)
                self.send(("raw" if isinstance(page, Raw) else "page", index, self._end, len(data)))
                self._end += len(data)
                self._sent += 1

    def progress(self, resource: str, done: int, total: int | None) -> None:
        self.send(("progress", resource, done, total))

    def send(self, message: tuple[Any, ...]) -> None:
        self._conn.send_bytes(marshal.dumps(message))


def _read(conn: Connection, parents_end: Connection, fd: int, taken: Any, read: Read, source: str) -> None:
    """The reader: the whole read, then its notes; its error, pickled, instead when it fails. Ctrl-C is
    the main process's to handle; the reader ends with the read, or when the main process is gone."""
    import gc

    parents_end.close()  # (a forked copy of it would keep the pipe open after the main process died)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.disable()  # decoded JSON has no cycles, and every page is dropped once sent
    forward = _Forward(conn, fd, taken)
    fetched = Fetched(source)
    try:
        read(forward, fetched, forward.progress, forward.hand_over)
        forward.send(("done", fetched.notes))
    except (BrokenPipeError, EOFError):  # the main process is gone, or stopped listening
        pass
    except BaseException as e:  # handed to the main process, which raises it
        with contextlib.suppress(OSError):
            forward.send(("error", _error_pickled(e)))
    finally:
        conn.close()
        # not multiprocessing's exit, which would flush a copy of the main process's buffered output
        os._exit(0)


def _error_pickled(e: BaseException) -> bytes:
    """``e`` pickled for the main process; one that does not come back from pickling as its one line."""
    return pickled(e, lambda: ClusterAccessError(str(e) or type(e).__name__))


class ForkedRead:
    """``with ForkedRead(read, source) as r: build(r.documents(notes, progress))``: the reader forked at
    the start (before this process starts any thread of its own), stopped at the end."""

    def __init__(self, read: Read, decode: Decode, source: str) -> None:
        import multiprocessing
        import tempfile

        self.source = source
        self._decode = decode
        self._pages = tempfile.TemporaryFile(prefix="kschedctl-read-")  # noqa: SIM115 (closed by close())
        ctx = multiprocessing.get_context("fork")
        ours, theirs = ctx.Pipe(duplex=False)
        self._taken = ctx.RawValue("q", 0)
        self._proc: BaseProcess = ctx.Process(
            target=_read,
            args=(theirs, ours, self._pages.fileno(), self._taken, read, source),
            daemon=True,
            name="kschedctl-read",
        )
        try:
            self._proc.start()
        except OSError as e:  # (no memory or no process left to fork): the caller reads in-process
            ours.close()
            theirs.close()
            self._pages.close()
            raise Restart(f"cannot start the reading process: {e}") from e
        theirs.close()
        self._conn = ours
        self._over = False  # the reader said its last (done, or its error)

    def _next(self) -> tuple[Any, ...]:
        try:
            return tuple(marshal.loads(self._conn.recv_bytes()))
        except (EOFError, OSError):
            raise Restart("the reading process ended before the read did") from None

    def documents(self, notes: list[str], progress: Progress | None = None) -> Iterator[Document]:
        """The objects of every list, as the loader's documents, as the reader hands them over; the read's
        notes are added to ``notes`` at the end. Its error is raised here; ``Restart`` when the objects so
        far are not to be used."""
        from kschedctl.snapshot.loader import Document

        counts = [0] * len(RESOURCES)
        fd = self._pages.fileno()
        while True:
            message = self._next()
            tag = message[0]
            if tag in ("page", "raw"):
                index, at, size = message[1:]
                data = os.pread(fd, size, at)
                self._taken.value += 1  # (once read: the reader may then write over it)
                items = marshal.loads(data) if tag == "page" else self._decode(RESOURCES[index], data)
                del data
                where = f"{self.source}{RESOURCES[index].list_path()}"
                first = counts[index] + 1
                counts[index] += len(items)
                for i, obj in enumerate(items, first):
                    yield Document(where, i, obj)
                del items
            elif tag == "progress":
                if progress is not None:
                    progress(message[1], message[2], message[3])
            elif tag == "restart":
                if counts[message[1]]:
                    raise Restart("a list started again")
            elif tag == "done":
                self._over = True
                notes.extend(message[1])
                return
            else:
                self._over = True
                error = pickle.loads(message[1])
                if isinstance(error, KschedctlError):  # the cluster's answer: the in-process read's error too
                    raise error
                # anything else (no room for the temporary file, a bug) is the reader's: read without it,
                # which fails the same way if the cause is not the reader's
                raise Restart(f"the reading process failed: {error}") from error

    def __enter__(self) -> ForkedRead:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Stop the reader: wait for its end once the read is over, else end it (its pages are no longer
        wanted)."""
        if not self._over:
            self._proc.kill()
        self._proc.join(5)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        self._conn.close()
        self._pages.close()
