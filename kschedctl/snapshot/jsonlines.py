"""A snapshot file's items read one line at a time, when the file is one kschedctl wrote.

``kschedctl snapshot`` writes a ``kind: List`` whose items are one compact JSON object a line
(``writer``). Decoding such a file whole with ``json`` costs a 15,000-node snapshot about 2 s and
holds every object of it at once (about 430 MB) while the model is built; decoding it a line at a
time with ``orjson`` costs about 0.3 s, and each object can be built into the model and let go of
before the next is decoded. So a text known to be kschedctl's (signed: ``vouch``; or loaded without
error before: ``cache.validated``) is read this way: the List's head (everything before its items)
is decoded alone, then each line. The answer is the one the whole-text decoding gives: a line that
``orjson`` does not read (``NaN``, a lone surrogate) is read by ``json``, and so is any line of a text
holding a run of 19 digits or more (``orjson`` reads an integer beyond 64 bits as a float, ``json``
as the integer), and a line that is not one whole item (an edited file) hands over to the caller's
whole-text decoding for the items not yet given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import orjson

#: Where a List's items start, as the writer writes it.
ITEMS = '"items": ['
#: How far into the text (after its comment lines) the items' start is looked for.
HEAD = 16 * 1024
_WHITESPACE = " \t\r"
#: The shortest run of digits that may be an integer beyond 64 bits (-9223372036854775809 has 19).
LONG_RUN = 19
#: Every byte to a space but the digits, to "9": a text holding no run of ``LONG_RUN`` "9" then has no long number.
_DIGITS = bytes(ord("9") if chr(b).isdigit() and b < 128 else ord(" ") for b in range(256))
_LONG_NUMBER = re.compile(f"[0-9]{{{LONG_RUN}}}")


def listed_items(
    text: str, start: int, whole: Callable[[], list[Any]], long_runs: Callable[[], bool] | None = None
) -> tuple[dict[str, Any], Iterator[Any]] | None:
    """The List that ``text`` holds from ``start`` on, without its items, and its items one by one; None
    when the text does not start as a List with one item a line. ``whole``: the List's items decoded the
    usual way, for the items of a text that turns out not to be one item a line. ``long_runs``:
    ``has_long_run(text)``, when the caller knows it already."""
    at = text.find(ITEMS, start, start + HEAD)
    newline = text.find("\n", start, start + HEAD)
    if at < 0 or newline != at + len(ITEMS):
        return None
    try:
        head = orjson.loads(text[start:at] + '"items": []}')
    except orjson.JSONDecodeError:
        return None
    kind = head.get("kind") if isinstance(head, dict) else None
    if not isinstance(kind, str) or not kind.endswith("List"):
        return None
    del head["items"]
    return head, _items(text, newline + 1, whole, long_runs() if long_runs else has_long_run(text))


def has_long_run(text: str) -> bool:
    """Whether ``text`` holds ``LONG_RUN`` digits in a row (in a number or not: a byte-wise look, not a parse)."""
    return b"9" * LONG_RUN in text.encode("utf-8", "surrogatepass").translate(_DIGITS)


def _items(text: str, pos: int, whole: Callable[[], list[Any]], long_runs: bool) -> Iterator[Any]:
    """Each item line's value from ``pos`` to the List's end (``]}``); the rest from ``whole`` when a line
    is not one item followed by a comma (or by the end). ``long_runs``: the text may hold long numbers."""
    given = 0
    end = len(text)
    while pos < end:
        nl = text.find("\n", pos)
        stop = end if nl < 0 else nl
        line = text[pos:stop].strip(_WHITESPACE)
        pos = stop + 1
        if line == "]}" and not text[pos:].strip():
            return
        value = _item(line[:-1] if line.endswith(",") else line, long_runs)
        if value is _NOT_AN_ITEM or (not line.endswith(",") and not _ends_list(text, pos)):
            yield from _rest(whole, given)
            return
        given += 1
        yield value
    yield from _rest(whole, given)


_NOT_AN_ITEM = object()


def _item(line: str, long_runs: bool) -> Any:
    """The value of one item line (``json`` reads what ``orjson`` refuses or may read otherwise);
    ``_NOT_AN_ITEM`` when the line is not a whole object."""
    if not line.startswith("{"):
        return _NOT_AN_ITEM
    if not (long_runs and _LONG_NUMBER.search(line)):
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    try:
        value = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return _NOT_AN_ITEM
    return value if isinstance(value, dict) else _NOT_AN_ITEM


def _ends_list(text: str, pos: int) -> bool:
    """Whether only the List's closing ``]}`` (and whitespace) follows ``pos``."""
    return text[pos:].strip() == "]}"


def _rest(whole: Callable[[], list[Any]], given: int) -> Iterator[Any]:
    """The items after the first ``given`` of the List the whole text decodes to."""
    yield from whole()[given:]
