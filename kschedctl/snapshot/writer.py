"""Writing a snapshot file as the API server's lists arrive, page by page.

A snapshot is one ``kind: List`` holding every object read, with the server's version as an
annotation (``source.SERVER_VERSION_ANNOTATION``). Building that whole document in memory and
then dumping it as block YAML cost seconds and a gigabyte on a 5,000-node cluster, and parsing
the YAML back cost as much again. So the file is written as the lists stream in, one object a
line, in JSON's syntax:

* a ``.json`` file is that JSON document;
* any other file (the YAML snapshot) is the same document after ``#`` comment lines saying what
  it holds. JSON's syntax is YAML's flow style, so the file is YAML as before (``kubectl apply -f``
  and any YAML parser read it, to the same objects); kschedctl's loader sees the JSON behind the
  comments and parses it as JSON, many times faster than YAML.

For the text to be the same YAML as JSON, characters YAML does not allow raw (the C1 controls,
DEL, the BOM) or reads as line breaks inside a quoted string (NEL, U+2028, U+2029) are written
as ``\\u`` escapes, which mean the same in both.

A list that must start again (an expired ``continue`` token) is written again over its own
items: the output is a real file (standard output gets a temporary file's text at the end), and
``-o FILE`` is written beside FILE and moved over it only when complete, so a failed read never
leaves a truncated snapshot behind. The List's annotations end with the digest of the items'
text (``vouch``): the API server validated the objects, and the file's first load does not
validate them again unless the file was edited since.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import IO, Any

from kschedctl.snapshot import vouch
from kschedctl.snapshot.source import SERVER_VERSION_ANNOTATION, APIResource, Encoded, Page, Raw

#: Characters written as \u escapes: not allowed raw in YAML, or line breaks to YAML (see above).
_NOT_YAML_SAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


#: The same characters in UTF-8 (a lead byte starts each: UTF-8 never has one inside another character).
_NOT_YAML_SAFE_UTF8 = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]|\xef\xbb\xbf|\xef\xbf[\xbe\xbf]")


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


_ENCODE = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode  # decoded JSON has no cycles


def _object_encoder() -> Callable[[Any], str]:
    """``_ENCODE`` for the objects of a page, the same text without ``JSONEncoder.encode``'s per-call
    set-up (a new C encoder, its type checks): one C encoder made once (json's own when the C
    accelerator is missing)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    quote = getattr(json.encoder, "c_encode_basestring", None)
    if make is None or quote is None:
        return _ENCODE
    # (markers, default, string encoder, indent, key separator, item separator, sort_keys, skipkeys, allow_nan)
    chunks = make(None, json.JSONEncoder().default, quote, None, ": ", ", ", False, False, True)
    return lambda obj: "".join(chunks(obj, 0))


_ENCODE_OBJECT = _object_encoder()


def to_line(obj: Any) -> str:
    """One object as one line of JSON that YAML reads the same."""
    text = _ENCODE(obj)
    return _NOT_YAML_SAFE.sub(_escape, text) if _NOT_YAML_SAFE.search(text) else text


def _escape_utf8(m: re.Match[bytes]) -> bytes:
    return f"\\u{ord(m.group().decode('utf-8')):04x}".encode()


def encode_items(items: list[dict[str, Any]]) -> bytes:
    """A page's objects as the snapshot's lines in UTF-8, joined by ``,\\n``, YAML-safe (compact JSON
    from ``jsoncodec``; ``json``'s text, with spaces, for a page it cannot write)."""
    from kschedctl.snapshot import jsoncodec  # (here: a command that writes no snapshot does without orjson)

    lines = [line for line in map(jsoncodec.dumps, items) if line is not None]
    if len(lines) == len(items):
        data = b",\n".join(lines)
        del lines
    else:
        data = ",\n".join(map(_ENCODE_OBJECT, items)).encode("utf-8")
    if b"\x7f" in data if data.isascii() else _NOT_YAML_SAFE_UTF8.search(data):  # (isascii: a fast scan)
        data = _NOT_YAML_SAFE_UTF8.sub(_escape_utf8, data)
    return data


def _open(path: str) -> tuple[IO[bytes], str | None]:
    """Where the snapshot is written as it streams, and the temporary file to move over ``path`` (the
    file it names, through a symbolic link) at the end. None: copied at the end, to standard output or
    to a path that is not a regular file, such as /dev/null."""
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if path == "-" or (os.path.exists(path) and not os.path.isfile(path)):
        return tempfile.TemporaryFile("w+b"), None
    target = os.path.realpath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)  # the mode open() would have given it
    return os.fdopen(fd, "w+b"), tmp


class SnapshotWriter:
    """``with SnapshotWriter(path, ...) as w: w.take(res, pages) ...``: the snapshot file, written as it
    streams (``path`` ``-``: standard output, at the end). A ``source.Sink``."""

    def __init__(self, path: str, *, header: list[str], server_version: str | None, as_json: bool) -> None:
        self.path = path
        self.counts: Counter[str] = Counter()
        self._first = True
        self._out, self._tmp = _open(path)
        annotations = {SERVER_VERSION_ANNOTATION: server_version} if server_version else {}
        annotations[vouch.ANNOTATION] = vouch.PLACEHOLDER
        head = "" if as_json else "".join(f"# {h}\n" for h in header)
        text = (head + '{"apiVersion": "v1", "kind": "List", "metadata": ' + to_line({"annotations": annotations})).encode()
        #: Where the digest goes once the items are written, and where the items start (``vouch``).
        self._digest_at = text.index(vouch.PLACEHOLDER.encode())
        self._out.write(text + b", " + vouch.ITEMS.encode())
        self._items_at = self._out.tell()

    def __enter__(self) -> SnapshotWriter:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if e is None:
            self._finish()
        else:
            self._discard()

    #: ``live`` may hand this sink big pages already encoded (``Encoded``, from ``offload``'s worker).
    takes_encoded = True

    def take(self, res: APIResource, pages: Iterable[Page | None]) -> None:
        """Write every page of ``res``'s list as it arrives; a None page (the list started again) or a
        failure takes back what was written of it."""
        mark = (self._out.tell(), self._first)
        self.counts[res.kind] += 0
        try:
            for page in pages:
                if page is None:
                    self._rewind(res, mark)
                else:
                    self._write(res, page)
        except BaseException:
            self._rewind(res, mark)
            del self.counts[res.kind]
            raise

    def _write(self, res: APIResource, items: Page) -> None:
        if isinstance(items, Raw):
            raise TypeError("a snapshot is written from objects or their lines, not undecoded pages")
        page = items if isinstance(items, Encoded) else Encoded(encode_items(items) if items else b"", len(items))
        if not page.objects:
            return
        self._out.write(b"\n" if self._first else b",\n")
        self._out.write(page.data)
        self._first = False
        self.counts[res.kind] += page.objects

    def _rewind(self, res: APIResource, mark: tuple[int, bool]) -> None:
        self._out.seek(mark[0])
        self._out.truncate()
        self._first = mark[1]
        self.counts[res.kind] = 0

    def _finish(self) -> None:
        self._out.write(b"\n]}\n")
        self._sign()
        if self._tmp is not None:
            self._out.close()
            os.replace(self._tmp, os.path.realpath(self.path))
            return
        self._out.seek(0)
        if self.path == "-":
            sys.stdout.flush()
            shutil.copyfileobj(self._out, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        else:
            with open(self.path, "wb") as dest:
                shutil.copyfileobj(self._out, dest)
        self._out.close()

    def _sign(self) -> None:
        """The items' digest into the header (``vouch``): their objects were validated by the API server
        that stored them, and the file's first load need not validate them again."""
        self._out.seek(self._items_at)
        h = hashlib.sha256()
        while chunk := self._out.read(1 << 20):
            h.update(chunk)
        self._out.seek(self._digest_at)
        self._out.write(h.hexdigest().encode())
        self._out.seek(0, os.SEEK_END)

    def _discard(self) -> None:
        self._out.close()
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._tmp)
