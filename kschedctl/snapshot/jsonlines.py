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

Making the model of each item costs more than decoding it. For a big text, when a core is free, a
forked process makes the objects of the lines after the first ``SHARE`` of the text (``Half``: what
the caller makes of an item, and of the state it comes back as) while this process reads the lines
before; the objects come back as plain values, which cost half as much to make an object of as the
line does, in the items' order. What the forked process does not make is read here as above.
"""

from __future__ import annotations

import json
import marshal
import re
from collections.abc import Callable, Generator, Iterator
from typing import Any, Protocol

import orjson

from kschedctl.snapshot import forked

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


#: An item and its line, when the line reads as that item with ``orjson.loads`` (else None).
Item = tuple[Any, "str | None"]


class Half(Protocol):
    """What a forked process makes of the items of the second half of a big List (``listed_items``), and what
    this process makes of its answer: made objects come back as plain values (``marshal``), not as the
    items they were made of, which would cost as much to send as to decode again."""

    def make(self, value: dict[str, Any], line: str) -> tuple[Any, ...] | None:
        """In the forked process: the state of the object the item ``value`` (read from ``line``) makes; None
        for an item it does not make (this process takes that item as it is)."""
        ...

    def shared(self) -> Any:
        """In the forked process, once every state is made: what the states need besides (``marshal``-able)."""
        ...

    def made(self, state: tuple[Any, ...], shared: Any, line: str) -> Any:
        """In this process: the object of ``state`` (``shared``: as the forked process answered), made of the
        item of ``line``."""
        ...


def listed_items(
    text: str,
    start: int,
    whole: Callable[[], list[Any]],
    long_runs: Callable[[], bool] | None = None,
    half: Half | None = None,
) -> tuple[dict[str, Any], Iterator[Item]] | None:
    """The List that ``text`` holds from ``start`` on, without its items, and its items one by one (each
    with its line: ``Item``); None when the text does not start as a List with one item a line. ``whole``:
    the List's items decoded the usual way, for the items of a text that turns out not to be one item a
    line. ``long_runs``: ``has_long_run(text)``, when the caller knows it already. ``half``: the items of the
    text's second half are made into objects by a forked process (``Half``), given in their place (with no
    line) as the items are taken, in order, when the text is big enough (``SPLIT``)."""
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
    runs = long_runs() if long_runs else has_long_run(text)
    if half is not None and len(text) - newline >= SPLIT:
        return head, _halves(text, newline + 1, whole, runs, half)
    return head, _items(text, newline + 1, whole, runs)


def has_long_run(text: str, data: bytes | None = None) -> bool:
    """Whether ``text`` holds ``LONG_RUN`` digits in a row (in a number or not: a byte-wise look, not a parse;
    ``data``: the text's UTF-8 bytes, when the caller has them)."""
    if data is None:
        data = text.encode("utf-8", "surrogatepass")
    return b"9" * LONG_RUN in data.translate(_DIGITS)


def _items(text: str, pos: int, whole: Callable[[], list[Any]], long_runs: bool, given: int = 0) -> Iterator[Item]:
    """Each item line's value from ``pos`` to the List's end (``]}``); the rest from ``whole`` when a line
    is not one item followed by a comma (or by the end). ``long_runs``: the text may hold long numbers.
    ``given``: the items before ``pos``."""
    _, why, n = yield from _walk(text, pos, len(text), long_runs)
    if why is not _END:
        yield from _rest(whole, given + n)


def _walk(text: str, pos: int, until: int, long_runs: bool) -> Generator[Item, None, tuple[int, object, int]]:
    """Each item of the lines from ``pos`` to ``until``; then where it stopped, why (``_END``: the List's end,
    ``_NOT_AN_ITEM``: a line that is not one item; None: ``until``) and how many items it gave."""
    n = 0
    while pos < until:
        pos, item = _line(text, pos, long_runs)
        if item[0] is _END or item[0] is _NOT_AN_ITEM:
            return pos, item[0], n
        n += 1
        yield item
    return pos, None, n


def _line(text: str, pos: int, long_runs: bool) -> tuple[int, Item]:
    """The line at ``pos``: where the next one starts, and its item (``_END``: the List's end; ``_NOT_AN_ITEM``:
    not one whole item followed by a comma, or by the end)."""
    end = len(text)
    nl = text.find("\n", pos)
    stop = end if nl < 0 else nl
    line = text[pos:stop].strip(_WHITESPACE)
    pos = stop + 1
    if line == "]}" and not text[pos:].strip():
        return pos, (_END, None)
    comma = line.endswith(",")
    item = _item(line[:-1] if comma else line, long_runs)
    if not comma and item[0] is not _NOT_AN_ITEM and not _ends_list(text, pos):
        return pos, (_NOT_AN_ITEM, None)
    return pos, item


_END = object()
#: A text this long (characters after the List's head) has its items made by two processes (``Half``):
#: below, the fork costs more than half the items take.
SPLIT = 8 * 1024 * 1024
#: How much of the text this process reads itself: making an object of a state costs about half what
#: making it of its line does, and this process does that for the forked process's objects after its own.
SHARE = 0.6


def _halves(text: str, pos: int, whole: Callable[[], list[Any]], long_runs: bool, half: Half) -> Iterator[Item]:
    """``_items``, the lines after the first ``SHARE`` of the text made into objects by a forked process
    (``half``) while this one decodes the lines before; what it did not make, and what follows where it
    stopped (a line that is not one item), is taken here as ``_items`` would. Where no process can be forked,
    or it ends without answering, this process takes every line."""
    middle = text.find("\n", pos + int((len(text) - pos) * SHARE))
    if middle < 0:
        yield from _items(text, pos, whole, long_runs)
        return
    middle += 1
    try:
        child = forked.Child(lambda answer: answer(marshal.dumps(_made(text, middle, long_runs, half))))
    except OSError:
        yield from _items(text, pos, whole, long_runs)
        return
    try:
        pos, why, given = yield from _walk(text, pos, middle, long_runs)
        if why is not None:
            if why is _NOT_AN_ITEM:
                yield from _rest(whole, given)
            return
        try:
            records, ended, shared = marshal.loads(child.answer(keep=False))
        except (forked.ChildLost, ValueError, EOFError, TypeError):
            records, ended, shared = [], None, None
        records.reverse()  # (each state let go of once its object is made)
        while records:
            start, stop, state = records.pop()
            if state is None:  # (the line from ``start`` to ``stop``)
                pos, item = _line(text, start, long_runs)
            else:  # (the item's text from ``start`` to ``stop``, the next line after it)
                item = half.made(state, shared, text[start:stop]), None
                pos = text.find("\n", stop) + 1 or len(text)
            given += 1
            yield item
        if not ended:
            yield from _items(text, pos, whole, long_runs, given)
    finally:
        child.wait(stop=True)


def _made(text: str, pos: int, long_runs: bool, half: Half) -> tuple[list[tuple[int, int, Any]], bool, Any]:
    """In the forked process of ``_halves``: from ``pos`` on, the state of what ``half`` makes of each item
    line with its item's span (None, with the line's span: not made), up to the List's end, or to a line that is not one item (whether
    the List ended there), and ``half.shared()``."""
    records: list[tuple[int, int, Any]] = []
    end = len(text)
    while pos < end:
        nxt, (value, line) = _line(text, pos, long_runs)
        if value is _END or value is _NOT_AN_ITEM:
            return records, value is _END, half.shared()
        state = None if line is None else _state(half, value, line)
        if line is None or state is None:
            records.append((pos, nxt, None))
        else:  # (an item orjson read starts with its line's first "{")
            start = text.index("{", pos)
            records.append((start, start + len(line), state))
        pos = nxt
    return records, False, half.shared()


_NOT_AN_ITEM = object()


def _item(line: str, long_runs: bool) -> Item:
    """The value of one item line (``json`` reads what ``orjson`` refuses or may read otherwise), with the
    line when ``orjson`` read it; ``_NOT_AN_ITEM`` when the line is not a whole object."""
    if not line.startswith("{"):
        return _NOT_AN_ITEM, None
    if not (long_runs and _LONG_NUMBER.search(line)):
        try:
            return orjson.loads(line), line
        except orjson.JSONDecodeError:
            pass
    try:
        value = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return _NOT_AN_ITEM, None
    return (value if isinstance(value, dict) else _NOT_AN_ITEM), None


def _ends_list(text: str, pos: int) -> bool:
    """Whether only the List's closing ``]}`` (and whitespace) follows ``pos``."""
    return text[pos:].strip() == "]}"


def _rest(whole: Callable[[], list[Any]], given: int) -> Iterator[Item]:
    """The items after the first ``given`` of the List the whole text decodes to."""
    for value in whole()[given:]:
        yield value, None


def _state(half: Half, value: Any, line: str) -> tuple[Any, ...] | None:
    """``half.make``, None when it fails (this process takes the item then, and says what is wrong with it)."""
    try:
        return half.make(value, line)
    except Exception:
        return None
