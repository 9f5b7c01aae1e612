"""JSON and YAML output of any plain result (a trace, check results, what-if results), and the format switch.

JSON is ``json.dumps(data, indent=2, default=str)``, character for character. The standard
library writes indented JSON with its pure-Python encoder (its C encoder only writes compact
JSON), a generator per container and a yield per token, which costs a quarter of a second on
a 5,000-node trace; ``to_json`` follows the same rules in one recursive pass that appends to a
list, escaping strings with the same C function.

Most results hold nothing but strings, integers, floats, booleans, None, lists and dicts; for
those ``orjson`` (already the snapshot writer's codec) writes the same text ten times faster:
its two-space indentation, separators, empty containers, escapes and floats are ``json``'s,
except that it writes non-ASCII characters and DEL as they are, a float below 1e-4 in its own
way (``0.00001``, ``1e-7`` for ``1e-05``, ``1e-07``) and NaN and infinities as null. So a result
is handed to it only after a walk finds no other type and no such float (an enum, a subclass,
an object ``str`` would name, are ``json``'s own), and its text is used only when it is all
ASCII without DEL; anything else, or anything orjson refuses (an integer beyond 64 bits, a lone
surrogate, a key that is not a string, nesting deeper than it goes), is written by the
pure-Python pass.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any

import orjson
import yaml

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_INDENT = "  "
_INFINITY = float("inf")
#: The types orjson writes as ``json`` does (exactly these: a subclass may carry its own text).
_PLAIN_SCALARS = frozenset({str, int, bool, type(None)})
#: The smallest magnitude of a float (other than zero) whose text orjson writes as ``json`` does.
_ORJSON_FLOAT_LOW = 1e-4
#: Nesting the walk follows before leaving a result to the pure-Python pass (orjson stops at 255).
_PLAIN_DEPTH = 250
#: Bytes of orjson's text written at a time.
_SLICE = 1 << 20


def to_json(data: Any) -> str:
    """``json.dumps(data, indent=2, sort_keys=False, default=str)``."""
    if isinstance(data, str):
        return encode_basestring_ascii(data)
    fast = _orjson_text(data)
    return fast if fast is not None else _python_text(data)


def _python_text(data: Any) -> str:
    """``to_json``'s text by the pure-Python pass alone."""
    out: list[str] = []
    _value(data, out, 0, set())
    return "".join(out)


def write_json(data: Any) -> None:
    """``print(to_json(data))`` without joining the text first (a 15,000-node trace is 12 MB of it)."""
    if isinstance(data, str):
        print(encode_basestring_ascii(data))
        return
    fast = _orjson_bytes(data)
    if fast is not None:  # (a slice at a time: not a second and third copy of 12 MB of text)
        for i in range(0, len(fast), _SLICE):
            sys.stdout.write(fast[i : i + _SLICE].decode("ascii"))
        sys.stdout.write("\n")
        return
    out: list[str] = []
    _value(data, out, 0, set())
    out.append("\n")
    write = sys.stdout.write  # (write, not writelines: cli/streams.py's PipeGuard handles a closed pipe on write)
    for i in range(0, len(out), 4096):
        write("".join(out[i : i + 4096]))


def _orjson_text(data: Any) -> str | None:
    """``data``'s JSON text as orjson writes it, when that is ``json``'s text; else None."""
    text = _orjson_bytes(data)
    return None if text is None else text.decode("ascii")


def _orjson_bytes(data: Any) -> bytes | None:
    """``_orjson_text`` in ASCII bytes."""
    if not _plain(data, 0):
        return None
    try:
        text = orjson.dumps(data, option=orjson.OPT_INDENT_2)
    except TypeError:  # (orjson.JSONEncodeError)
        return None
    if not text.isascii() or b"\x7f" in text:
        return None
    return text


def _plain(o: Any, depth: int) -> bool:
    """Whether ``o`` holds only exact strings, integers, booleans, None, lists, tuples, dicts and floats
    whose text orjson writes as ``json`` does."""
    t = type(o)
    if t is dict:
        items = o.values()
    elif t is list or t is tuple:
        items = o
    elif t is float:  # (NaN compares False)
        return o == 0.0 or _ORJSON_FLOAT_LOW <= abs(o) < _INFINITY
    else:
        return t in _PLAIN_SCALARS
    if depth >= _PLAIN_DEPTH:
        return False
    scalars = _PLAIN_SCALARS
    for v in items:  # noqa: SIM110 (a loop: half the time of all() over a generator)
        if type(v) not in scalars and not _plain(v, depth + 1):
            return False
    return True


def _float(o: float) -> str:
    """``json``'s float text (allow_nan)."""
    if o != o:
        return "NaN"
    if o == _INFINITY:
        return "Infinity"
    if o == -_INFINITY:
        return "-Infinity"
    return float.__repr__(o)


def _value(o: Any, out: list[str], level: int, markers: set[int]) -> None:
    """One value, tested in the standard encoder's order (``default=str`` for anything else)."""
    if isinstance(o, str):
        out.append(encode_basestring_ascii(o))
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif isinstance(o, int):
        out.append(int.__repr__(o))
    elif isinstance(o, float):
        out.append(_float(o))
    elif isinstance(o, list | tuple):
        _list(o, out, level, markers)
    elif isinstance(o, dict):
        _dict(o, out, level, markers)
    else:
        _enter(o, markers)
        _value(str(o), out, level, markers)
        markers.discard(id(o))


def _enter(o: Any, markers: set[int]) -> None:
    if id(o) in markers:
        raise ValueError("Circular reference detected")
    markers.add(id(o))


def _list(lst: list[Any] | tuple[Any, ...], out: list[str], level: int, markers: set[int]) -> None:
    if not lst:
        out.append("[]")
        return
    _enter(lst, markers)
    newline = "\n" + _INDENT * (level + 1)
    separator = "," + newline
    append = out.append
    head = "[" + newline
    for v in lst:
        t = type(v)
        if t is str:  # plain strings and integers (most of a trace) in one step
            append(head + encode_basestring_ascii(v))
        elif t is int:
            append(head + int.__repr__(v))
        else:
            append(head)
            _value(v, out, level + 1, markers)
        head = separator
    append("\n" + _INDENT * level + "]")
    markers.discard(id(lst))


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def _dict(dct: dict[Any, Any], out: list[str], level: int, markers: set[int]) -> None:
    if not dct:
        out.append("{}")
        return
    _enter(dct, markers)
    newline = "\n" + _INDENT * (level + 1)
    separator = "," + newline
    append = out.append
    head = "{" + newline
    for k, v in dct.items():
        key = head + encode_basestring_ascii(k if type(k) is str else _key(k)) + ": "
        t = type(v)
        if t is str:  # plain strings and integers (most of a trace) in one step
            append(key + encode_basestring_ascii(v))
        elif t is int:
            append(key + int.__repr__(v))
        else:
            append(key)
            _value(v, out, level + 1, markers)
        head = separator
    append("\n" + _INDENT * level + "}")
    markers.discard(id(dct))


def to_yaml(data: Any) -> str:
    return str(yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True))


def emit(
    data: Any,
    fmt: str,
    *,
    table: Callable[[Any], None],
    markdown: Callable[[Any], str] | None = None,
) -> None:
    """Print a plain result in the chosen format: json, yaml, markdown (when offered) or the table."""
    if fmt == "json":
        write_json(data)
    elif fmt == "yaml":
        print(to_yaml(data), end="")
    elif fmt == "markdown" and markdown is not None:
        print(markdown(data), end="")
    else:
        table(data)
