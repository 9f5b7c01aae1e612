"""A cache of parsed YAML snapshot files, keyed by their content.

Parsing a large YAML snapshot takes seconds; the same file is often explained many
times. The documents PyYAML built are stored, after the first parse, in the user's
cache directory (``$XDG_CACHE_HOME/kschedctl``, else ``~/.cache/kschedctl``; never next to
the snapshot) under the SHA-256 of the file's text, so an edited file is a different
key and a stale entry can never be served. Entries are ``marshal`` data (exact Python
types, fast to read) behind a header holding a magic string and the SHA-256 of the
payload: a truncated, corrupt or foreign file fails the check and the snapshot is
parsed again. The key also covers the kschedctl, Python and PyYAML versions and the
cache format. Only files of at least ``MIN_SIZE`` characters are cached, at most
``MAX_ENTRIES`` entries are kept (least recently used go first), and
``KSCHEDCTL_NO_CACHE=1`` turns the cache off.

Beside the parsed documents, the cache keeps a verdict per file content (YAML or JSON): an
empty ``.valid`` file saying that every object of that text passed load-time validation
(``apivalidation``), under the text's SHA-256 and a digest of the validation code
(``VALIDATION_MODULES``), so that loading the same snapshot again does not check the same
objects again. Only a load that validated every object writes it.

A big entry is written by a forked process while the command goes on (``forked``); a read of the
cache waits for such a write first, and every command waits for it before it exits.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import marshal
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

from kschedctl import __version__
from kschedctl.snapshot import forked

FORMAT = 1
MAGIC = b"kschedctl-snapshot-cache\n"
#: An entry's header: MAGIC, then the SHA-256 of the payload that follows.
HEAD = len(MAGIC) + 32
MIN_SIZE = 1 << 20
MAX_ENTRIES = 8
DISABLE_ENV = "KSCHEDCTL_NO_CACHE"
_VARIANT = hashlib.sha256(
    f"{FORMAT}|{__version__}|{sys.version}|{yaml.__version__}|{getattr(yaml, '__with_libyaml__', False)}".encode()
).hexdigest()[:16]


#: The modules whose code decides what load-time validation reports (``apivalidation.validate_object``):
#: a validation verdict is kept per version of them.
VALIDATION_MODULES = (
    *sorted(f"apivalidation/{p.name}" for p in (Path(__file__).resolve().parent.parent / "apivalidation").glob("*.py")),
    *sorted(f"kube/cel/{p.name}" for p in (Path(__file__).resolve().parent.parent / "kube" / "cel").glob("*.py")),
    "kube/goformat.py",
    "kube/names.py",
    "kube/quantity.py",
    "kube/selectors.py",
)


def enabled() -> bool:
    return os.environ.get(DISABLE_ENV, "") in ("", "0")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "kschedctl" / "snapshots"


def key_of(text: str) -> str | None:
    """The key of a file's text: its SHA-256 (None for a text the cache does not keep: too small, or
    the cache is off). The parsed documents and the validation verdict are both filed under it."""
    if len(text) < MIN_SIZE or not enabled():
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def key_of_file(data: bytes) -> str | None:
    """``key_of`` of the text a file's bytes ``data`` read as (UTF-8, universal newlines), without
    decoding them: the same SHA-256 when reading changes no byte (no carriage return) and the text is
    surely big enough (four bytes a character at most); None when that is not sure (ask ``key_of``)."""
    if len(data) < 4 * MIN_SIZE or b"\r" in data or not enabled():
        return None
    return hashlib.sha256(data).hexdigest()


def entry_path(key: str) -> Path:
    return cache_dir() / f"{key}-{_VARIANT}.marshal"


@functools.lru_cache(maxsize=1)
def _validation_variant() -> str:
    h = hashlib.sha256(_VARIANT.encode())
    package = Path(__file__).resolve().parent.parent
    for name in VALIDATION_MODULES:
        try:
            h.update((package / name).read_bytes())
        except OSError:  # no sources to tell versions apart: no verdict is kept
            return ""
    return h.hexdigest()[:16]


def verdict_path(key: str) -> Path | None:
    variant = _validation_variant()
    return cache_dir() / f"{key}-{variant}.valid" if variant else None


def validated(key: str | None) -> bool:
    """Whether every object of the text with this key passed load-time validation before
    (``mark_validated``), with the same validation code: checking them again would find nothing."""
    if key is None:
        return False
    path = verdict_path(key)
    return path is not None and path.is_file()


def mark_validated(key: str | None) -> None:
    """Remember that every object of the text with this key passed load-time validation (an empty file
    named by the key and the validation code's version; silently skipped when not possible)."""
    if key is None:
        return
    path = verdict_path(key)
    if path is None or path.is_file():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.touch()
        _prune(path.parent, "*.valid")
    except OSError:
        return


def read(key: str | None) -> list[Any] | None:
    """The documents cached for the text with this key, or None (no entry, unreadable or failing its check)."""
    if key is None:
        return None
    docs = read_entry(entry_path(key))
    return docs if isinstance(docs, list) else None


def read_entry(path: Path) -> Any:
    """The value stored at ``path`` by ``write_entry``, or None (no entry, unreadable or failing its check)."""
    data = _checked(path)
    if data is None:
        return None
    payload = memoryview(data)[HEAD:]
    try:
        value = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    del payload, data
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used
    return value


def write(key: str | None, docs: list[Any]) -> None:
    """Store the documents parsed from the text with this key (silently skipped when that is not possible);
    many of them in a forked process while this one goes on (``forked.run_in_background``)."""
    if key is None:
        return
    path = entry_path(key)
    if _objects(docs) > forked.MANY:
        forked.run_in_background(lambda: write_entry(path, docs))
    else:
        write_entry(path, docs)


def _objects(docs: list[Any]) -> int:
    """How many objects the documents hold (a List's items each)."""
    n = 0
    for doc in docs:
        items = doc.get("items") if isinstance(doc, dict) else None
        n += len(items) if isinstance(items, list) else 1
    return n


def write_entry(path: Path, value: Any, pattern: str = "*.marshal") -> None:
    """Store ``value`` at ``path`` (``marshal`` behind the magic string and the payload's SHA-256), then keep
    the ``MAX_ENTRIES`` most recently used files of ``pattern`` there (silently skipped when not possible)."""
    try:
        payload = marshal.dumps(value)
    except ValueError:  # a type marshal cannot store (explicit !!timestamp, say): not cached
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with _writing(path):
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(MAGIC)
                    fh.write(hashlib.sha256(payload).digest())
                    fh.write(payload)
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        _prune(path.parent, pattern)
    except OSError:
        return


def write_records(path: Path, records: Iterable[Any], pattern: str) -> None:
    """Store ``records`` at ``path`` one ``marshal`` value after another (each after its length), as they come (none of them needs
    to exist beside the others), behind the magic string and the payload's SHA-256; then keep the
    ``MAX_ENTRIES`` most recently used files of ``pattern`` there. Silently skipped when not possible
    (a value marshal cannot store: no entry)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return
    with _writing(path):
        _write_records(path, records)
    with contextlib.suppress(OSError):
        _prune(path.parent, pattern)


def _write_records(path: Path, records: Iterable[Any]) -> None:
    """``write_records``' file, written whole under a temporary name, then given the entry's."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(MAGIC + bytes(32))
            digest = hashlib.sha256()
            for record in records:
                data = marshal.dumps(record)
                size = len(data).to_bytes(8, "little")
                digest.update(size)
                digest.update(data)
                fh.write(size)
                fh.write(data)
            fh.seek(len(MAGIC))
            fh.write(digest.digest())
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, (OSError, ValueError)):
            return
        raise


#: What an entry's lock file is named after (the entry's name and this): it is held while the entry is written.
LOCK_SUFFIX = ".lock"
#: How long a read waits at most for another process still writing the entry (seconds).
WRITER_WAIT = 120.0


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[None]:
    """The entry ``path`` written while its lock is held: a process that wants the entry meanwhile waits for
    it (``_wait_for_writer``) rather than doing again what the writer did (a command's background write goes
    on after the command's end: ``forked.let_go``). Where files cannot be locked, the entry is written alone."""
    lock = path.with_name(path.name + LOCK_SUFFIX)
    try:
        import fcntl

        fd = os.open(lock, os.O_WRONLY | os.O_CREAT, 0o600)
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        os.close(fd)


def _wait_for_writer(
    path: Path, timeout: float | None = None, clock: Callable[[], float] = time.monotonic, pause: float = 0.01
) -> None:
    """Return once no other process is writing the entry ``path`` (its lock is free or gone), or after
    ``timeout`` seconds (``WRITER_WAIT``: the entry is then read as it is, most likely not there yet)."""
    lock = path.with_name(path.name + LOCK_SUFFIX)
    try:
        import fcntl

        fd = os.open(lock, os.O_RDONLY)
    except (ImportError, OSError):  # (no write under way)
        return
    try:
        deadline = clock() + (WRITER_WAIT if timeout is None else timeout)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if clock() >= deadline:
                    return
                time.sleep(pause)
            except OSError:
                return
    finally:
        os.close(fd)


def read_records(path: Path) -> Iterator[Any] | None:
    """The values ``write_records`` stored at ``path``, one at a time, or None (no entry, unreadable or
    failing its check; the check is made before the first value is read)."""
    data = _checked(path)
    if data is None:
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used
    return _records(data, HEAD)


def _checked(path: Path) -> bytes | None:
    """The bytes of an entry (its header, then its payload from ``HEAD`` on) when it starts with MAGIC and
    its payload has the SHA-256 the header records; None when it cannot be read or fails that check. A
    write still under way, in a forked process or another command's, is waited for first."""
    forked.settle()
    _wait_for_writer(path)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) < HEAD or not data.startswith(MAGIC):
        return None
    if hashlib.sha256(memoryview(data)[HEAD:]).digest() != data[len(MAGIC) : HEAD]:
        return None
    return data


def _records(data: bytes, pos: int) -> Iterator[Any]:
    """Each value of ``data`` from ``pos`` on (8 bytes of length, then the value as ``marshal`` wrote it)."""
    view = memoryview(data)
    while pos < len(data):
        size = int.from_bytes(view[pos : pos + 8], "little")
        pos += 8
        yield marshal.loads(view[pos : pos + size])
        pos += size


def _prune(directory: Path, pattern: str = "*.marshal") -> None:
    entries = []
    for p in directory.glob(pattern):
        with contextlib.suppress(OSError):
            entries.append((p.stat().st_mtime, p))
    entries.sort(reverse=True)
    for _, p in entries[MAX_ENTRIES:]:
        with contextlib.suppress(OSError):
            p.unlink()
