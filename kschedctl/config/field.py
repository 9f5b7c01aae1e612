"""Field paths, field errors and aggregate messages worded exactly like apimachinery v0.35.

kube-scheduler reports an invalid KubeSchedulerConfiguration as one line built
from ``field.Error`` values (``<path>: <Type>: <value>: <detail>``) joined by an
aggregate (``[a, b]`` when there is more than one distinct message). Users
compare our messages with the real scheduler's, so the rendering rules here
(how a bad value is printed, de-duplication, brackets) follow apimachinery
v0.35 precisely. Go ``time.Duration`` printing and parsing live here too,
because durations appear both in decoded values and in messages.

Upstream model: ``k8s.io/apimachinery pkg/util/validation/field/errors.go and path.go``.
"""

from __future__ import annotations

import re

from kschedctl.apivalidation import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    NOT_SUPPORTED,
    REQUIRED,
    FieldError,
    GoJSON,
    RawJSON,
    aggregate,
    duplicate,
    forbidden,
    go_float,
    go_json,
    go_quote,
    invalid,
    not_supported,
    render_value,
    required,
)

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
# value rendering and field errors live in kschedctl.apivalidation (shared with object validation)

__all__ = [
    "DUPLICATE",
    "FORBIDDEN",
    "INVALID",
    "NOT_SUPPORTED",
    "REQUIRED",
    "DurationError",
    "FieldError",
    "GoJSON",
    "RawJSON",
    "aggregate",
    "child",
    "duplicate",
    "forbidden",
    "go_duration_string",
    "go_float",
    "go_json",
    "go_quote",
    "index",
    "invalid",
    "key",
    "not_supported",
    "parse_go_duration",
    "render_value",
    "required",
]


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
