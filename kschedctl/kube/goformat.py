"""Values printed as Go prints them: field errors quote strings with ``strconv.Quote`` and render
other values with ``%v`` or as JSON, and the API server's messages are matched word for word.

(apimachinery ``util/validation/field/errors.go``, the value formatting.)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GoJSON:
    """A bad value Go prints through ``json.Marshal``, given as ready-made JSON-able data."""

    data: Any


@dataclass(frozen=True)
class RawJSON:
    """A bad value whose JSON text is already known (e.g. a ``runtime.Unknown``'s raw bytes)."""

    text: str


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(s: str) -> str:
    """``strconv.Quote``: double quotes, backslash escapes, printable Unicode kept as is."""
    out = ['"']
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            cp = ord(ch)
            if cp < 0x80:
                out.append(f"\\x{cp:02x}")
            elif cp <= 0xFFFF:
                out.append(f"\\u{cp:04x}")
            else:
                out.append(f"\\U{cp:08x}")
    out.append('"')
    return "".join(out)


def go_json(data: Any, sort_keys: bool = False) -> str:
    """``json.Marshal`` output: compact, HTML-sensitive characters escaped.

    ``sort_keys`` for data that went through a Go map (YAML converted to JSON), whose keys Go sorts.
    """
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def go_float(v: float) -> str:
    """``%v`` of a float: shortest representation, Go style exponent."""
    if v == int(v) and abs(v) < 1e21:
        return str(int(v))
    r = repr(v)
    if "e" in r:
        mant, exp = r.split("e")
        sign = exp[0] if exp[0] in "+-" else "+"
        digits = exp.lstrip("+-").rjust(2, "0")
        r = f"{mant}e{sign}{digits}"
    return r


def render_value(v: Any) -> str:
    """How ``field.Error.ErrorBody`` prints a bad value (apimachinery v0.35)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, str):
        return go_quote(v)
    if isinstance(v, RawJSON):
        return v.text
    if isinstance(v, GoJSON):
        return go_json(v.data)
    return go_json(v)


def json_kind(v: Any) -> str:
    """The JSON type name Go's encoding/json puts in 'cannot unmarshal <kind> into ...' errors."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"
