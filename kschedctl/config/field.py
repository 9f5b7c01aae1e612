"""Field paths, field errors and aggregate messages worded exactly like apimachinery v0.35.

kube-scheduler reports an invalid KubeSchedulerConfiguration as one line built
from ``field.Error`` values (``<path>: <Type>: <value>: <detail>``) joined by an
aggregate (``[a, b]`` when there is more than one distinct message). Users
compare our messages with the real scheduler's, so the rendering rules here
(how a bad value is printed, de-duplication, brackets) follow apimachinery
v0.35 precisely. Go ``time.Duration`` printing and parsing live here too,
because durations appear both in decoded values and in messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# ---------------------------------------------------------------------------------------
# paths (field.Path.String())


def child(path: str | None, *names: str) -> str:
    """``path.Child(names...)``; a None path is Go's nil *Path (the first name becomes the root)."""
    out = path or ""
    for n in names:
        out = f"{out}.{n}" if out else n
    return out


def index(path: str | None, i: int) -> str:
    return f"{path or ''}[{i}]"


def key(path: str | None, k: str) -> str:
    return f"{path or ''}[{k}]"


# ---------------------------------------------------------------------------------------
# value rendering


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
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys)
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


# ---------------------------------------------------------------------------------------
# field errors

REQUIRED = "Required value"
INVALID = "Invalid value"
DUPLICATE = "Duplicate value"
NOT_SUPPORTED = "Unsupported value"
FORBIDDEN = "Forbidden"

_NO_VALUE_TYPES = {REQUIRED, FORBIDDEN}


@dataclass(frozen=True)
class FieldError:
    """One ``field.Error``: a path, an error type, the offending value and a detail."""

    type: str
    field: str
    value: Any = None
    detail: str = ""

    def body(self) -> str:
        s = self.type if self.type in _NO_VALUE_TYPES else f"{self.type}: {render_value(self.value)}"
        if self.detail:
            s += f": {self.detail}"
        return s

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(REQUIRED, path, "", detail)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(INVALID, path, value, detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(DUPLICATE, path, value, "")


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(FORBIDDEN, path, "", detail)


def not_supported(path: str, value: Any, valid: Iterable[str]) -> FieldError:
    quoted = ", ".join(go_quote(v) for v in valid)
    return FieldError(NOT_SUPPORTED, path, value, f"supported values: {quoted}" if quoted else "")


def aggregate(errors: Iterable[object]) -> str:
    """``utilerrors.NewAggregate(...).Error()`` over already flattened errors.

    Identical messages are shown once; several distinct ones are bracketed and
    comma separated, exactly as Go prints them.
    """
    msgs: list[str] = []
    for e in errors:
        m = str(e)
        if m not in msgs:
            msgs.append(m)
    if not msgs:
        return ""
    if len(msgs) == 1:
        return msgs[0]
    return "[" + ", ".join(msgs) + "]"


# ---------------------------------------------------------------------------------------
# Go durations

_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5
    "μs": 1_000,  # U+03BC
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_DIGITS = re.compile(r"[0-9]*")
_UNIT = re.compile(r"[^0-9.]*")


class DurationError(ValueError):
    """A string ``time.ParseDuration`` rejects; ``str()`` is Go's message."""


def parse_go_duration(text: str) -> int:
    """``time.ParseDuration``: returns nanoseconds."""
    quoted = '"' + text + '"'
    invalid_msg = f"time: invalid duration {quoted}"
    neg = False
    s = text
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise DurationError(invalid_msg)
    total = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise DurationError(invalid_msg)
        whole = _DIGITS.match(s).group()  # type: ignore[union-attr]
        s = s[len(whole) :]
        frac = ""
        if s.startswith("."):
            s = s[1:]
            frac = _DIGITS.match(s).group()  # type: ignore[union-attr]
            s = s[len(frac) :]
        if not whole and not frac:
            raise DurationError(invalid_msg)
        unit = _UNIT.match(s).group()  # type: ignore[union-attr]
        if not unit:
            raise DurationError(f"time: missing unit in duration {quoted}")
        s = s[len(unit) :]
        if unit not in _UNITS:
            raise DurationError(f'time: unknown unit "{unit}" in duration {quoted}')
        scale = _UNITS[unit]
        value = int(whole or "0") * scale
        if frac:
            value += int(float(int(frac)) * (scale / (10 ** len(frac))))
        total += value
        if total > (1 << 63) - 1:
            raise DurationError(invalid_msg)
    return -total if neg else total


def _fmt_frac(v: int, prec: int) -> tuple[str, int]:
    """Digits after the point of ``v`` at ``prec`` places (trailing zeros dropped), and the whole part."""
    digits = ""
    printed = False
    for _ in range(prec):
        d = v % 10
        printed = printed or d != 0
        if printed:
            digits = str(d) + digits
        v //= 10
    return ("." + digits if digits else ""), v


def go_duration_string(ns: int) -> str:
    """``time.Duration.String()``."""
    if ns == 0:
        return "0s"
    neg = ns < 0
    u = -ns if neg else ns
    if u < 1_000_000_000:
        if u < 1_000:
            out = f"{u}ns"
        elif u < 1_000_000:
            frac, whole = _fmt_frac(u, 3)
            out = f"{whole}{frac}µs"
        else:
            frac, whole = _fmt_frac(u, 6)
            out = f"{whole}{frac}ms"
    else:
        frac, secs = _fmt_frac(u, 9)
        out = f"{secs % 60}{frac}s"
        mins = secs // 60
        if mins > 0:
            out = f"{mins % 60}m" + out
            hours = mins // 60
            if hours > 0:
                out = f"{hours}h" + out
    return "-" + out if neg else out
