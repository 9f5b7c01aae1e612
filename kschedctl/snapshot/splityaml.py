"""Reading one big YAML snapshot in two processes at once.

``simpleyaml`` reads a 58 MB snapshot (15,000 nodes, 150,000 pods) in about three seconds, the
largest single share of a cold explain, on one core. Its reading of a stream is local: each
``---`` document is read on its own, and each top-level item of a ``kind: List`` document
(``kubectl get -o yaml``) too. So a big text can be cut in two where its reading is the
concatenation of both pieces' readings: at a ``---`` line near the middle (``simpleyaml`` starts a
document at every line that begins with ``---``, whatever comes before it), or, in a text that is one
List, at a column-0 ``- `` item line near the middle, the items from there to the end of the List
becoming a piece of their own (``items:`` and them) and the rest (head, first items, what follows the
items) the other. A forked process (``forked.Child``) reads the second piece and hands its documents
back in ``marshal``'s format while this process reads the first; the documents are then the same list,
in the same order, as one reading of the whole text gives.

The pieces are only a shortcut to that list: when either piece is left to PyYAML (``load_simple``
gives None), or the child fails in any way, the whole text is read in-process exactly as before, so
what PyYAML then reports (errors, their lines and documents) is unchanged. The fork is used only
where it pays and is safe (``forked.pays``: Linux, a second core that is free, no other thread in this
process) and for a text of at least ``MIN_SIZE`` characters. The child is always waited for (stopped
first when its piece is no longer wanted).
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kschedctl.snapshot import forked, simpleyaml

#: Texts shorter than this (characters) are read in one process: the fork and the hand-over would cost
#: more than half the reading saves.
MIN_SIZE = 8 << 20
#: Where the cut is aimed, as a share of the text (the second piece, from there, is the child's; reading
#: costs about the same per character all along a snapshot).
CUT_AT = 0.5
#: A cut is taken only if each piece holds at least this share of the text.
MIN_SHARE = 0.25

#: The line that opens a List's items at column 0, and a column-0 line that ends them (a key, not an item
#: line, a comment or a blank line).
_ITEMS = "\nitems:\n"
_ITEMS_END = re.compile(r"\n[^ \-#\n]")


@dataclass(frozen=True, slots=True)
class Cut:
    """Where a text is cut: this process reads ``text[:at] + text[resume:]``; the child reads
    ``text[at:resume]``, as a List's items (behind an ``items:`` line) when ``items``, else as it is."""

    at: int
    resume: int
    items: bool

    def first(self, text: str) -> str:
        return text[: self.at] + text[self.resume :] if self.resume < len(text) else text[: self.at]

    def second(self, text: str) -> str:
        piece = text[self.at : self.resume]
        return "items:\n" + piece if self.items else piece

    def join(self, first: list[Any], second: list[Any]) -> list[Any] | None:
        """The whole text's documents from both pieces' (None if they are not what the cut leads to expect)."""
        if not self.items:
            return first + second
        if len(first) != 1 or len(second) != 1:
            return None
        head, tail = first[0], second[0]
        if type(head) is not dict or type(tail) is not dict or list(tail) != ["items"]:
            return None
        items, more = head.get("items"), tail["items"]
        if type(items) is not list or type(more) is not list:
            return None
        items.extend(more)
        return first


def find_cut(text: str, aim: float = CUT_AT, least: float = MIN_SHARE) -> Cut | None:
    """A place near ``aim`` (a share of the text) where ``simpleyaml``'s reading of ``text`` is the
    concatenation of both pieces' readings (``Cut``), or None when there is none that leaves ``least``
    of the text on each side."""
    n = len(text)
    target, low, high = int(n * aim), max(1, int(n * least)), n - int(n * least)
    if text.startswith("---") or "\n---" in text:
        at = text.find("\n---", target) + 1
        if not low <= at <= high:
            at = text.rfind("\n---", 0, target) + 1
        return Cut(at, n, items=False) if low <= at <= high else None
    # one document: a List whose items start at column 0 right after a column-0 ``items:`` line
    if not text[:1].isalpha():
        return None
    start = text.find(_ITEMS) + len(_ITEMS)
    if start < len(_ITEMS) or not text.startswith("- ", start):
        return None
    end = _ITEMS_END.search(text, start)  # (a scan of the items, about 0.05 s for 60 MB)
    resume = end.start() + 1 if end is not None else n
    at = text.find("\n- ", max(target, start), resume) + 1
    return Cut(at, resume, items=True) if low <= at <= high else None


def load(text: str) -> list[Any] | None:
    """``simpleyaml.load_simple(text)``: the same documents (None likewise), read in two processes when
    that pays (``forked.pays``)."""
    if len(text) >= MIN_SIZE and forked.pays():
        cut = find_cut(text)
        if cut is not None:
            docs = load_cut(text, cut)
            if docs is not None:
                return docs
    return simpleyaml.load_simple(text)


def load_cut(
    text: str, cut: Cut, read: Callable[[str], list[Any] | None] = simpleyaml.load_simple
) -> list[Any] | None:
    """The documents of ``text`` read as two pieces, the second in a forked process; None when a piece is
    left to PyYAML or the child fails (the caller then reads the whole text)."""
    try:
        child = forked.Child(lambda answer: answer(_marshalled(read(cut.second(text)))))
    except OSError:  # no memory or process left to fork
        return None
    stop = True
    try:
        try:
            first = read(cut.first(text))
        except Exception:  # (the whole text, read in-process, fails as it always did)
            return None
        if first is None:
            return None
        try:
            data = child.answer()  # (before the wait: the child's answer may not fit the pipe)
        except forked.ChildLost:
            return None
        stop = False
    finally:
        child.wait(stop=stop)
    if type(data) is not bytes:  # None (left to PyYAML) or the child's error
        return None
    try:
        second = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None
    return cut.join(first, second) if type(second) is list else None


def _marshalled(docs: list[Any] | None) -> bytes | None:
    """A piece's documents as the child hands them over: ``marshal``, the fastest format to write and load
    them in (the answer's pickle only wraps the bytes); None when the piece is left to PyYAML."""
    return None if docs is None else marshal.dumps(docs)
