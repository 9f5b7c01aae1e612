"""Decoding, redacting and encoding a snapshot's big pages on the second core.

``kschedctl snapshot`` spends most of its CPU on each page of the API server's answer: decoding its
JSON, redacting the objects and encoding them again as the snapshot's lines (``writer.encode_items``).
None of that needs the main process, which meanwhile only asks for the next page and writes the
file. So a big page's raw body is handed to one worker process (forked on Linux, spawned elsewhere;
started when the snapshot's reading starts, before any other thread runs) that returns the page's
lines (UTF-8), while the main process reads the ``continue`` token and ``remainingItemCount`` from
the head of the body itself (a list's JSON puts ``kind``, ``apiVersion`` and ``metadata`` before
``items``: ``list_head``). A worker that fails on a page (not JSON, no items list) or dies leaves
that page to the main process, which then fails as it always did, with the same one-line error.
Small pages stay in-process: a worker pays off only on big ones. And a big page that arrives while
the worker is still busy with the one before is done by the main process meanwhile, so that the
two cores share the pages instead of one waiting on the other.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import TYPE_CHECKING, Any

from kschedctl.snapshot.source import APIResource, Encoded, list_items
from kschedctl.snapshot.writer import encode_items

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

#: A page's body from this size on goes to the worker (a 500-object page of pods or nodes is 1-3 MB).
MIN_BODY = 512 * 1024
#: How far into a body its ``"items":`` key is looked for.
_HEAD_LIMIT = 64 * 1024
_HEAD_KEYS = frozenset({"kind", "apiVersion", "metadata"})


def list_head(body: bytes) -> dict[str, Any] | None:
    """The list's ``metadata`` read from the part of ``body`` before its items, without decoding those;
    None when that part is not the head of a list as the API server writes it."""
    at = body.find(b'"items":', 0, _HEAD_LIMIT)
    if at <= 0:
        return None
    head = body[:at].rstrip()
    if not head.endswith(b","):
        return None
    try:
        data = json.loads(head[:-1] + b"}")
    except ValueError:
        return None
    if not isinstance(data, dict) or not set(data) <= _HEAD_KEYS or not isinstance(data.get("metadata"), dict):
        return None
    return data["metadata"]


def encode_page(res: APIResource, body: bytes, *, redacted: bool) -> Encoded:
    """One page's body decoded, redacted and encoded; ValueError or the loader's errors when it is no list."""
    answer = json.loads(body)
    if not isinstance(answer, dict):
        raise ValueError("not a JSON object")
    items = list_items(res, answer, redacted=redacted)
    del answer
    return Encoded(encode_items(items), len(items))


def _serve(conn: Connection, parents_end: Connection) -> None:
    """The worker: (resource, redacted) and a body in, the page's count and lines out; count -1 on failure.
    It ends when told (None) or when the main process is gone; Ctrl-C is the main process's to handle."""
    import signal

    from kschedctl.snapshot.bulk import bulk_build

    parents_end.close()  # (a forked copy of it would keep the pipe open after the main process died)
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    with bulk_build():
        while True:
            try:
                job = conn.recv()
                if job is None:
                    return
                res, redacted = job
                body = conn.recv_bytes()
            except EOFError:
                return
            try:
                page = encode_page(res, body, redacted=redacted)
            except Exception:  # the main process decodes this page itself, and reports the failure
                conn.send(-1)
                continue
            del body
            conn.send(page.objects)
            conn.send_bytes(page.data)


class Offload:
    """The one worker process, started at the first big page; at most one page in it at a time.

    ``submit(res, body, redacted)`` then ``result()``; a page submitted must be collected (or
    ``close()``) before the next is submitted."""

    def __init__(self) -> None:
        self._conn: Connection | None = None
        self._proc: BaseProcess | None = None
        self._broken = False
        self._pending = False

    def head(self, body: bytes) -> dict[str, Any] | None:
        """The list's metadata when this page is one for the worker (big enough, its head readable)."""
        return list_head(body) if not self._broken and len(body) >= MIN_BODY else None

    def start(self) -> None:
        """Start the worker (before any other thread runs, when it is forked)."""
        if self._proc is not None or self._broken:
            return
        import multiprocessing

        # forked on Linux (no second interpreter to start and import); elsewhere fork is unsafe or missing
        method = "fork" if sys.platform.startswith("linux") else "spawn"
        ctx = multiprocessing.get_context(method)
        ours, theirs = ctx.Pipe()
        try:
            proc = ctx.Process(target=_serve, args=(theirs, ours), daemon=True, name="kschedctl-encode")  # type: ignore[attr-defined]
            proc.start()
        except OSError:
            self._broken = True
            return
        theirs.close()
        self._conn, self._proc = ours, proc

    def submit(self, res: APIResource, body: bytes, *, redacted: bool) -> bool:
        """Hand a page to the worker; False when there is none (the caller does the page itself)."""
        assert not self._pending
        if self._conn is None:
            return False
        try:
            self._conn.send((res, redacted))
            self._conn.send_bytes(body)
        except OSError:
            self._fail()
            return False
        self._pending = True
        return True

    def result(self) -> Encoded | None:
        """The submitted page's lines; None when the worker could not do it (the caller does it)."""
        assert self._pending and self._conn is not None
        self._pending = False
        try:
            count = self._conn.recv()
            if count < 0:
                return None
            return Encoded(self._conn.recv_bytes(), count)
        except (OSError, EOFError):
            self._fail()
            return None

    def drop(self) -> None:
        """Forget a submitted page whose result is no longer wanted."""
        if self._pending:
            self.result()

    def _fail(self) -> None:
        self._broken = True
        self.close()

    def close(self) -> None:
        conn, proc = self._conn, self._proc
        self._conn = self._proc = None
        self._pending = False
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.send(None)
            conn.close()
        if proc is not None:
            proc.join(1)  # (a worker stuck sending a page nobody reads, after Ctrl-C, is killed)
            if proc.is_alive():
                proc.kill()
                proc.join()
