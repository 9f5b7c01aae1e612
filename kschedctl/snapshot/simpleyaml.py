"""The YAML that ``kubectl get -o yaml`` writes, read without PyYAML's per-node machinery.

On a large snapshot nearly all of the cold time went to PyYAML: libyaml scans fast, but every
scalar, mapping and sequence then costs several Python calls (a node object, tag resolution,
construction). Snapshots use a small part of YAML: block mappings and sequences laid out by
indentation, one-line plain and quoted scalars, small one-line flow collections
(``{cpu: 100m, memory: 1Gi}``) and literal block scalars (``|``, ``|-``: kubectl writes a
multi-line string, such as a last-applied-configuration annotation, that way). ``load_simple``
reads exactly that part, a line at a time, and gives up (returns None) on anything else, so the
caller parses the whole stream with PyYAML as before: anchors, aliases, tags, folded and ``|+``
block scalars or ones with an indentation indicator or leading blank lines, multi-line plain,
quoted and flow scalars, comments after a value, tabs, CR line ends, directives, ``...``, complex
keys, keys set twice, a scalar document, escapes it does not know, any error. Within that part
the result is the one PyYAML gives (``yamldocs.ReferenceLoader``: timestamps stay strings): every
plain scalar is typed by PyYAML's own resolver and constructors (once per distinct text), and
``tests/test_simpleyaml.py`` compares the two on random documents.
"""

from __future__ import annotations

import re
from typing import Any

from yaml.nodes import ScalarNode

from kschedctl.snapshot.yamldocs import ReferenceLoader

_STR = "tag:yaml.org,2002:str"

#: Characters this reader does not handle anywhere in a text: those YAML treats specially or refuses
#: (tabs, CR and the other line breaks, a BOM, control characters).
_UNHANDLED_CHAR = re.compile(
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
#: The ASCII characters it handles (an ASCII text is checked by deleting these from its bytes: much faster).
_HANDLED_ASCII = b"\n" + bytes(range(0x20, 0x7F))
#: Lines it does not handle: directives and document end markers (a document start followed by more
#: on its line is found while the text is split into documents).
_UNHANDLED_LINE_STARTS = ("\n%", "\n...")

#: Characters a plain scalar may not start with (``-`` in a value is allowed before a non-blank).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")

#: A one-line double-quoted scalar without escapes, one with escapes, a one-line single-quoted scalar.
_DQ = re.compile(r'"([^"\\]*)"')
_DQ_ESCAPED = re.compile(r'"(?:[^"\\]|\\.)*"')
_SQ = re.compile(r"'((?:[^']|'')*)'")
#: A quoted key and what follows its colon.
_DQ_KEY = re.compile(r'"([^"\\]*)":(?: +(.*))?')
_SQ_KEY = re.compile(r"'((?:[^']|'')*)':(?: +(.*))?")
#: A plain scalar inside a flow collection: no flow indicators, no ``#``, no ``?``, a ``:`` only before a
#: character that keeps it inside the scalar, spaces only between words.
_FLOW_PLAIN = re.compile(
    r"(?:[^\s\-?:,\[\]{}#&*!|>'\"%@`]|-(?=[^\s,\[\]{}?:#]))(?:[^\s,\[\]{}#:?]|:(?=[^\s,\[\]{}?:#])| +(?=[^\s,\[\]{}#:?]))*"
)
_FLOW_DQ = re.compile(r'"([^"\\]*)"')
_FLOW_SQ = re.compile(r"'((?:[^']|'')*)'")
_SPACES = re.compile(r" *")

#: The longest key PyYAML reads as a simple key is 1024 characters.
_MAX_KEY = 1000


#: What a line says (``_Reader._read_line``): (indent, code, key, value). Codes: a key and its scalar
#: value, a key and its one-line flow collection, a key whose value is on the next lines; then the same
#: for a sequence entry (no key), and an entry whose line holds its mapping's first key (the value is
#: that line's own reading, indented to where the key starts).
_Op = tuple[int, int, Any, Any]
_SCALAR, _FLOW, _OPEN, _DASH_SCALAR, _DASH_FLOW, _DASH_OPEN, _DASH_KEY = range(7)
#: A key whose value is a literal block scalar (``|`` or ``|-``) starting on the next line: replaced by
#: a _SCALAR line once ``_lines`` has read the block (never among a document's lines).
_LITERAL = 7


class _Unhandled(Exception):
    """Text outside the part of YAML read here: PyYAML reads the stream."""


def load_simple(text: str) -> list[Any] | None:
    """The documents of a YAML stream, as PyYAML's safe loader (timestamps as strings) builds them; None
    when the text uses YAML this reader leaves to PyYAML (or is not valid YAML)."""
    if not _handled_text(text):
        return None
    try:
        return _Reader().documents(text)
    except (_Unhandled, RecursionError):
        return None


def _handled_text(text: str) -> bool:
    """No character or line start this reader leaves to PyYAML (``_Reader.documents`` checks ``---``)."""
    if text.isascii():
        if text.encode("ascii").translate(None, _HANDLED_ASCII):
            return False
    elif _UNHANDLED_CHAR.search(text):
        return False
    return not text.startswith(("%", "...")) and not any(s in text for s in _UNHANDLED_LINE_STARTS)


def _document_starts(text: str) -> list[int]:
    """Where each ``---`` line starts (_Unhandled for a ``---`` with more on its line)."""
    starts: list[int] = []
    at = 0 if text.startswith("---") else (text.find("\n---") + 1 or -1)
    while at >= 0:
        if text[at + 3 : at + 4] not in ("", "\n"):
            raise _Unhandled  # '--- content', '----', ...
        starts.append(at)
        at = text.find("\n---", at + 3) + 1 or -1
    return starts


def _is_dash(c: str) -> bool:
    """A line (without its indentation) that is a block sequence entry."""
    return c[0] == "-" and (len(c) == 1 or c[1] == " ")


class _Reader:
    """One stream's reader: the lines of the document being read, and what it has typed so far."""

    def __init__(self) -> None:
        self._resolver = ReferenceLoader("")
        self._make = {
            "tag:yaml.org,2002:int": self._resolver.construct_yaml_int,
            "tag:yaml.org,2002:float": self._resolver.construct_yaml_float,
            "tag:yaml.org,2002:bool": self._resolver.construct_yaml_bool,
            "tag:yaml.org,2002:null": self._resolver.construct_yaml_null,
        }
        self._plain: dict[
            str, Any
        ] = {}  # a plain scalar's text -> its value (one object per distinct string)
        self._ops: dict[str, _Op | None] = {}  # a line -> what it says (None: blank or a comment)
        self.ops: list[_Op] = []
        self.i = 0

    def documents(self, text: str) -> list[Any]:
        starts = _document_starts(text)
        docs: list[Any] = []
        first = text[: starts[0]] if starts else text
        if self._lines(first):
            docs.append(self._document())
        for n, at in enumerate(starts):
            end = starts[n + 1] if n + 1 < len(starts) else len(text)
            docs.append(self._document() if self._lines(text[at + 3 : end]) else None)
        return docs

    def _lines(self, chunk: str) -> bool:
        """Take one document's lines, read (blank and comment lines left out); whether there are any.
        Snapshots repeat most lines many times over: each distinct line is read once (a literal block
        scalar's lines are the value of the line that starts it)."""
        known = self._ops
        ops: list[_Op] = []
        lines = chunk.split("\n")
        n = len(lines)
        i = 0
        while i < n:
            line = lines[i]
            i += 1
            try:
                op = known[line]
            except KeyError:
                op = known[line] = self._read_line(line)
            if op is None:
                continue
            code = op[1]
            if code == _LITERAL:
                text, i = _literal(lines, i, op[0], op[3] == "|-")
                op = (op[0], _SCALAR, op[2], text)
            elif code == _DASH_KEY and op[3][1] == _LITERAL:
                inner = op[3]
                text, i = _literal(lines, i, inner[0], inner[3] == "|-")
                op = (op[0], _DASH_KEY, None, (inner[0], _SCALAR, inner[2], text))
            ops.append(op)
        self.ops, self.i = ops, 0
        return bool(ops)

    def _read_line(self, line: str) -> _Op | None:
        c = line.lstrip(" ")
        if not c or c[0] == "#":
            return None
        indent = len(line) - len(c)
        c = c.rstrip(" ")
        if not _is_dash(c):
            return self._mapping_line(indent, c)
        rest = c[1:].lstrip(" ")
        if not rest:
            return (indent, _DASH_OPEN, None, None)
        if _is_dash(rest):
            raise _Unhandled  # a sequence in a sequence entry's line
        if self._is_key_line(rest):
            # the entry is a mapping whose first key is on the dash's line: that line is read as if
            # it were indented to where the key starts
            return (indent, _DASH_KEY, None, self._mapping_line(indent + len(c) - len(rest), rest))
        code, value = self._inline(rest)
        if code == _LITERAL:
            raise _Unhandled  # a block scalar as a sequence entry
        return (indent, _DASH_SCALAR if code == _SCALAR else _DASH_FLOW, None, value)

    def _mapping_line(self, indent: int, c: str) -> _Op:
        key, rest = self._key(c)
        if not rest:
            return (indent, _OPEN, key, None)
        code, value = self._inline(rest)
        return (indent, code, key, value)

    def _document(self) -> Any:
        root = self._block(self.ops[0][0])
        if self.i != len(self.ops):
            raise _Unhandled
        return root

    def _block(self, indent: int) -> Any:
        """The block collection whose first line is the current one, at ``indent``."""
        if self.ops[self.i][1] >= _DASH_SCALAR:
            return self._sequence(indent)
        return self._mapping(indent)

    def _mapping(self, indent: int) -> dict[Any, Any]:
        ops = self.ops
        n = len(ops)
        i = self.i
        out: dict[Any, Any] = {}
        while i < n:
            op = ops[i]
            code = op[1]
            if op[0] != indent or code >= _DASH_SCALAR:
                break
            i += 1
            if code == _SCALAR:
                value = op[3]
            elif code == _FLOW:
                value = _fresh(op[3])
            elif i < n and ops[i][0] > indent:
                self.i = i
                value = self._block(ops[i][0])
                i = self.i
            elif i < n and ops[i][0] == indent and ops[i][1] >= _DASH_SCALAR:
                self.i = i
                value = self._sequence(indent)
                i = self.i
            else:
                value = None
            if code < _OPEN and i < n and ops[i][0] > indent:
                raise _Unhandled  # a multi-line scalar (or an error)
            key = op[2]
            if key in out:
                raise _Unhandled  # PyYAML reports the repeated key
            out[key] = value
        self.i = i
        return out

    def _sequence(self, indent: int) -> list[Any]:
        ops = self.ops
        n = len(ops)
        i = self.i
        out: list[Any] = []
        while i < n:
            op = ops[i]
            code = op[1]
            if op[0] != indent or code < _DASH_SCALAR:
                break
            if code == _DASH_KEY:
                inner = op[3]
                ops[i] = inner
                self.i = i
                out.append(self._mapping(inner[0]))
                i = self.i
                continue
            i += 1
            if code == _DASH_SCALAR:
                out.append(op[3])
            elif code == _DASH_FLOW:
                out.append(_fresh(op[3]))
            elif i < n and ops[i][0] > indent:
                self.i = i
                out.append(self._block(ops[i][0]))
                i = self.i
                continue
            else:
                out.append(None)
                continue
            if i < n and ops[i][0] > indent:
                raise _Unhandled
        self.i = i
        return out

    @staticmethod
    def _is_key_line(c: str) -> bool:
        if c[0] in "\"'":
            return bool(_DQ_KEY.fullmatch(c) or _SQ_KEY.fullmatch(c))
        return c[0] not in "[{" and (": " in c or c[-1] == ":")

    def _key(self, c: str) -> tuple[Any, str]:
        """A mapping line's key and the text after its ``:`` (empty when the value is on the next lines)."""
        if c[0] == '"' or c[0] == "'":
            m = (_DQ_KEY if c[0] == '"' else _SQ_KEY).fullmatch(c)
            if m is None:
                raise _Unhandled
            key = m.group(1) if c[0] == '"' else m.group(1).replace("''", "'")
            return key, (m.group(2) or "").lstrip(" ")
        j = c.find(": ")
        if j < 0:
            if c[-1] != ":":
                raise _Unhandled  # a scalar where a key belongs (a multi-line scalar, or an error)
            text, rest = c[:-1], ""
        else:
            text, rest = c[:j], c[j + 2 :].lstrip(" ")
        if not text or text[0] in _INDICATORS or text[-1] in " :" or "#" in text or len(text) > _MAX_KEY:
            raise _Unhandled
        return self._scalar(text), rest

    def _inline(self, s: str) -> tuple[int, Any]:
        """A value written on its key's (or dash's) line, to the end of the line: (_SCALAR, the value) or
        (_FLOW, a flow collection to copy for each use)."""
        ch = s[0]
        if ch == "|" and (s == "|" or s == "|-"):
            return _LITERAL, s  # read with the lines after it (``_lines``)
        if ch == "{" or ch == "[":
            value, end = self._flow(s, 0)
            if end != len(s):
                raise _Unhandled
            return _FLOW, (value, _holds_collections(value))
        if ch == '"':
            m = _DQ.fullmatch(s)
            if m is not None:
                return _SCALAR, m.group(1)
            if _DQ_ESCAPED.fullmatch(s) is None:
                raise _Unhandled
            return _SCALAR, self._quoted_with_escapes(s)
        if ch == "'":
            m = _SQ.fullmatch(s)
            if m is None:
                raise _Unhandled
            return _SCALAR, m.group(1).replace("''", "'")
        if (
            (ch in _INDICATORS and (ch != "-" or s[1:2] in ("", " ")))
            or ": " in s
            or s[-1] == ":"
            or " #" in s
        ):
            raise _Unhandled
        return _SCALAR, self._scalar(s)

    def _scalar(self, text: str) -> Any:
        """A plain scalar's value, typed as PyYAML types it (once per distinct text)."""
        try:
            return self._plain[text]
        except KeyError:
            pass
        tag = self._resolver.resolve(ScalarNode, text, (True, False))
        if tag == _STR:
            value: Any = text
        else:
            make = self._make.get(tag)
            if make is None:
                raise _Unhandled  # merge keys, value keys
            value = make(ScalarNode(tag, text))
        self._plain[text] = value
        return value

    @staticmethod
    def _quoted_with_escapes(s: str) -> str:
        """A one-line double-quoted scalar with backslash escapes, read by PyYAML itself."""
        loader = ReferenceLoader(s)
        try:
            value = loader.get_single_data()
        except Exception:
            raise _Unhandled from None
        finally:
            loader.dispose()
        if not isinstance(value, str):
            raise _Unhandled
        return value

    def _flow(self, s: str, j: int) -> tuple[Any, int]:
        """The flow collection starting at ``s[j]`` and where it ends."""
        closing = "}" if s[j] == "{" else "]"
        j = _SPACES.match(s, j + 1).end()  # type: ignore[union-attr]
        items: Any = {} if closing == "}" else []
        if s[j : j + 1] == closing:
            return items, j + 1
        while True:
            if closing == "}":
                key, j = self._flow_scalar(s, j)
                if s[j : j + 2] != ": ":
                    raise _Unhandled
                j = _SPACES.match(s, j + 2).end()  # type: ignore[union-attr]
                value, j = self._flow_item(s, j)
                if key in items:
                    raise _Unhandled
                items[key] = value
            else:
                value, j = self._flow_item(s, j)
                items.append(value)
            j = _SPACES.match(s, j).end()  # type: ignore[union-attr]
            ch = s[j : j + 1]
            if ch == closing:
                return items, j + 1
            if ch != ",":
                raise _Unhandled
            j = _SPACES.match(s, j + 1).end()  # type: ignore[union-attr]

    def _flow_item(self, s: str, j: int) -> tuple[Any, int]:
        if s[j : j + 1] in ("{", "["):
            return self._flow(s, j)
        return self._flow_scalar(s, j)

    def _flow_scalar(self, s: str, j: int) -> tuple[Any, int]:
        ch = s[j : j + 1]
        if ch == '"' or ch == "'":
            m = (_FLOW_DQ if ch == '"' else _FLOW_SQ).match(s, j)
            if m is None:
                raise _Unhandled
            text = m.group(1)
            return (text if ch == '"' else text.replace("''", "'")), m.end()
        m = _FLOW_PLAIN.match(s, j)
        if m is None:
            raise _Unhandled
        return self._scalar(m.group()), m.end()


def _fresh(flow: tuple[Any, bool]) -> Any:
    """A copy of a flow collection read once for a line (equal lines must not share mutable objects)."""
    value, nested = flow
    if nested:
        return _copy(value)
    return value.copy()


def _literal(lines: list[str], i: int, parent: int, strip: bool) -> tuple[str, int]:
    """The text of a literal block scalar whose lines start at ``lines[i]`` under a key indented by
    ``parent`` (``strip``: ``|-``, else ``|``: one final line break kept), and the index of the line after
    it. Only the plain case: the first line holds text, no line holds spaces only beyond the block's
    indentation, and the block ends before a last line without a line break (``_Unhandled`` otherwise:
    PyYAML reads the stream)."""
    end = len(lines) - 1  # the text after the chunk's last line break is not a line of the block
    if i >= end:
        raise _Unhandled
    first = lines[i]
    c = first.lstrip(" ")
    indent = len(first) - len(c)
    if not c or indent <= parent:
        raise _Unhandled  # leading blank lines, or an empty block
    body: list[str] = []
    last = 0
    j = i
    while j < end:
        line = lines[j]
        c = line.lstrip(" ")
        if c:
            if len(line) - len(c) < indent:
                break
            body.append(line[indent:])
            last = len(body)
        elif len(line) > indent:
            raise _Unhandled  # spaces beyond the indentation on a line of nothing else
        else:
            body.append("")
        j += 1
    if j == end and lines[end]:
        raise _Unhandled  # the stream's last line, without a line break, may end the block
    text = "\n".join(body[:last])
    return (text if strip else text + "\n"), j


def _holds_collections(value: Any) -> bool:
    items = value.values() if type(value) is dict else value
    return any(type(v) is dict or type(v) is list for v in items)


def _copy(value: Any) -> Any:
    if type(value) is dict:
        return {k: _copy(v) for k, v in value.items()}
    if type(value) is list:
        return [_copy(v) for v in value]
    return value
