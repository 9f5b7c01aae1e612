"""CEL's functions as the DRA selectors see them: strings, conversions, quantities and semvers.

Each function takes already evaluated arguments and returns a value or raises :class:`CelError`
with cel-go's text. Two tables declare them for the checker and the evaluator, by how they are
called (``target.f(args)`` or ``f(args)``) with their result type; a third names real cel-go and
Kubernetes functions this evaluator leaves out, so that an expression calling one is refused as
unsupported rather than as an undeclared reference. Adding a function means adding it here only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from kschedctl.kube.cel.errors import NO_SUCH_OVERLOAD, CelError
from kschedctl.kube.cel.values import INT64_MAX, INT64_MIN, Quantity, Semver, Uint, check_int, check_uint
from kschedctl.kube.quantity import QuantityError, parse_quantity


def _want(cond: bool) -> None:
    if not cond:
        raise CelError(NO_SUCH_OVERLOAD)


def _str(v: Any) -> str:
    _want(isinstance(v, str))
    return v


def _int_arg(v: Any) -> int:
    _want(isinstance(v, int) and not isinstance(v, (bool, Uint)))
    return int(v)


def _size(v: Any) -> int:
    if isinstance(v, (str, bytes, list, dict)):
        return len(v)
    raise CelError(NO_SUCH_OVERLOAD)


_REGEX_CACHE: dict[str, re.Pattern[str]] = {}


def _regex(pattern: str) -> re.Pattern[str]:
    r = _REGEX_CACHE.get(pattern)
    if r is None:
        try:
            r = re.compile(pattern)
        except re.error as e:
            raise CelError(f"invalid regex string: {e}") from None
        _REGEX_CACHE[pattern] = r
    return r


def _matches(s: Any, pattern: Any) -> bool:
    return _regex(_str(pattern)).search(_str(s)) is not None


def _to_int(v: Any) -> int:
    if isinstance(v, bool):
        raise CelError(NO_SUCH_OVERLOAD)
    if isinstance(v, int):
        return check_int(int(v))
    if isinstance(v, float):
        if math.isnan(v) or v <= -(2.0**63) or v >= 2.0**63:
            raise CelError("integer overflow")
        return int(v)
    if isinstance(v, str):
        if not re.fullmatch(r"[+-]?[0-9]+", v):
            raise CelError(f"cannot convert '{v}' to int")
        return check_int(int(v))
    raise CelError(NO_SUCH_OVERLOAD)


def _to_uint(v: Any) -> Uint:
    if isinstance(v, bool):
        raise CelError(NO_SUCH_OVERLOAD)
    if isinstance(v, int):
        return check_uint(int(v))
    if isinstance(v, float):
        if math.isnan(v) or v < 0 or v >= 2.0**64:
            raise CelError("unsigned integer overflow")
        return Uint(int(v))
    if isinstance(v, str):
        if not re.fullmatch(r"[+]?[0-9]+", v):
            raise CelError(f"cannot convert '{v}' to uint")
        return check_uint(int(v))
    raise CelError(NO_SUCH_OVERLOAD)


def _to_double(v: Any) -> float:
    if isinstance(v, bool):
        raise CelError(NO_SUCH_OVERLOAD)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            raise CelError(f"cannot convert '{v}' to double") from None
    raise CelError(NO_SUCH_OVERLOAD)


def _to_string(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return repr(v) if not v.is_integer() or abs(v) >= 1e21 else str(int(v))
    if isinstance(v, str):
        return v
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise CelError("invalid UTF-8 in bytes, cannot convert to string") from None
    raise CelError(NO_SUCH_OVERLOAD)


def _to_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        if v in ("1", "t", "T", "TRUE", "true", "True"):
            return True
        if v in ("0", "f", "F", "FALSE", "false", "False"):
            return False
        raise CelError("type conversion error from 'string' to 'bool'")
    raise CelError(NO_SUCH_OVERLOAD)


def _quantity(v: Any) -> Quantity:
    try:
        return Quantity(parse_quantity(_str(v)))
    except QuantityError:
        raise CelError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") from None


def _is_quantity(v: Any) -> bool:
    try:
        parse_quantity(_str(v))
    except QuantityError:
        return False
    return True


def _q(v: Any) -> Quantity:
    _want(isinstance(v, Quantity))
    return v


def _q_other(v: Any) -> Fraction:
    if isinstance(v, Quantity):
        return v.value
    return Fraction(_int_arg(v))


def _q_cmp(a: Any, b: Any) -> int:
    x, y = _q(a).value, _q(b).value
    return (x > y) - (x < y)


def _q_as_integer(a: Any) -> int:
    v = _q(a).value
    if v.denominator != 1 or v < INT64_MIN or v > INT64_MAX:
        raise CelError("cannot convert value to integer")
    return int(v)


def _q_is_integer(a: Any) -> bool:
    v = _q(a).value
    return v.denominator == 1 and INT64_MIN <= v <= INT64_MAX


def _q_sign(a: Any) -> int:
    v = _q(a).value
    return (v > 0) - (v < 0)


def _semver(v: Any, normalize: Any = False) -> Semver:
    s = _str(v)
    if normalize is not False:
        _want(isinstance(normalize, bool))
        if normalize:
            s = _normalize_semver(s)
    try:
        return Semver.parse(s)
    except ValueError as e:
        raise CelError(str(e)) from None


def _normalize_semver(s: str) -> str:
    s = s[1:] if s.startswith("v") else s
    m = re.match(r"^([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(.*)$", s)
    if m is None:
        return s
    parts = [str(int(p)) if p is not None else "0" for p in m.group(1, 2, 3)]
    return ".".join(parts) + m.group(4)


def _is_semver(v: Any, normalize: Any = False) -> bool:
    try:
        _semver(v, normalize)
    except CelError:
        return False
    return True


def _sv(v: Any) -> Semver:
    _want(isinstance(v, Semver))
    return v


def _sv_cmp(a: Any, b: Any) -> int:
    return _sv(a).compare(_sv(b))


def _index_of(s: Any, sub: Any, start: Any = 0) -> int:
    s, sub, start = _str(s), _str(sub), _int_arg(start)
    if start < 0 or start > len(s):
        raise CelError(f"index out of range: {start}")
    return s.find(sub, start)


def _last_index_of(s: Any, sub: Any, end: Any = None) -> int:
    s, sub = _str(s), _str(sub)
    if end is None:
        return s.rfind(sub)
    e = _int_arg(end)
    if e < 0 or e >= len(s):
        raise CelError(f"index out of range: {e}")
    return s.rfind(sub, 0, e + len(sub))


def _substring(s: Any, start: Any, end: Any = None) -> str:
    s = _str(s)
    b = _int_arg(start)
    e = len(s) if end is None else _int_arg(end)
    if b < 0 or b > len(s):
        raise CelError(f"index out of range: {b}")
    if e < 0 or e > len(s):
        raise CelError(f"index out of range: {e}")
    if b > e:
        raise CelError(f"invalid substring range. start: {b}, end: {e}")
    return s[b:e]


def _char_at(s: Any, i: Any) -> str:
    s, n = _str(s), _int_arg(i)
    if n < 0 or n > len(s):
        raise CelError(f"index out of range: {n}")
    return s[n : n + 1]


def _replace(s: Any, old: Any, new: Any, n: Any = -1) -> str:
    s, old, new, count = _str(s), _str(old), _str(new), _int_arg(n)
    return s.replace(old, new) if count < 0 else s.replace(old, new, count)


def _split(s: Any, sep: Any, n: Any = -1) -> list[str]:
    s, sep, count = _str(s), _str(sep), _int_arg(n)
    if count == 0:
        return []
    if sep == "":
        chars = list(s)
        if count > 0 and len(chars) > count:
            chars = [*chars[:count - 1], "".join(chars[count - 1:])]
        return chars
    return s.split(sep) if count < 0 else s.split(sep, count - 1)


def _join(lst: Any, sep: Any = "") -> str:
    _want(isinstance(lst, list))
    return _str(sep).join(_str(x) for x in lst)


def _ascii_lower(s: Any) -> str:
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in _str(s))


def _ascii_upper(s: Any) -> str:
    return "".join(c.upper() if "a" <= c <= "z" else c for c in _str(s))


def _trim(s: Any) -> str:
    return _str(s).strip()


def _contains(s: Any, sub: Any) -> bool:
    return _str(sub) in _str(s)


def _starts(s: Any, p: Any) -> bool:
    return _str(s).startswith(_str(p))


def _ends(s: Any, p: Any) -> bool:
    return _str(s).endswith(_str(p))


def _dispatch_compare(a: Any, b: Any) -> int:
    if isinstance(a, Quantity):
        return _q_cmp(a, b)
    return _sv_cmp(a, b)


def _dispatch_add(a: Any, b: Any) -> Quantity:
    return Quantity(_q(a).value + _q_other(b))


def _dispatch_sub(a: Any, b: Any) -> Quantity:
    return Quantity(_q(a).value - _q_other(b))


def _q_mul(a: Any, b: Any) -> Quantity:
    return Quantity(_q(a).value * _int_arg(b))


def _major(v: Any) -> int:
    return _sv(v).major


def _minor(v: Any) -> int:
    return _sv(v).minor


def _patch(v: Any) -> int:
    return _sv(v).patch


#: Functions called as ``target.f(args)``: (implementation taking the target first, result type).
MEMBER_FUNCS: dict[str, tuple[Callable[..., Any], str]] = {
    "size": (_size, "int"),
    "contains": (_contains, "bool"),
    "startsWith": (_starts, "bool"),
    "endsWith": (_ends, "bool"),
    "matches": (_matches, "bool"),
    "lowerAscii": (_ascii_lower, "string"),
    "upperAscii": (_ascii_upper, "string"),
    "trim": (_trim, "string"),
    "replace": (_replace, "string"),
    "split": (_split, "dyn"),
    "join": (_join, "string"),
    "indexOf": (_index_of, "int"),
    "lastIndexOf": (_last_index_of, "int"),
    "substring": (_substring, "string"),
    "charAt": (_char_at, "string"),
    "compareTo": (_dispatch_compare, "int"),
    "isGreaterThan": (lambda a, b: _dispatch_compare(a, b) > 0, "bool"),
    "isLessThan": (lambda a, b: _dispatch_compare(a, b) < 0, "bool"),
    "add": (_dispatch_add, "kubernetes.Quantity"),
    "sub": (_dispatch_sub, "kubernetes.Quantity"),
    "mul": (_q_mul, "kubernetes.Quantity"),
    "asInteger": (_q_as_integer, "int"),
    "isInteger": (_q_is_integer, "bool"),
    "asApproximateFloat": (lambda a: float(_q(a).value), "double"),
    "sign": (_q_sign, "int"),
    "major": (_major, "int"),
    "minor": (_minor, "int"),
    "patch": (_patch, "int"),
}

#: Functions called as ``f(args)``.
GLOBAL_FUNCS: dict[str, tuple[Callable[..., Any], str]] = {
    "size": (_size, "int"),
    "int": (_to_int, "int"),
    "uint": (_to_uint, "uint"),
    "double": (_to_double, "double"),
    "string": (_to_string, "string"),
    "bool": (_to_bool, "bool"),
    "dyn": (lambda v: v, "dyn"),
    "matches": (_matches, "bool"),
    "quantity": (_quantity, "kubernetes.Quantity"),
    "isQuantity": (_is_quantity, "bool"),
    "sign": (_q_sign, "int"),
    "semver": (_semver, "kubernetes.Semver"),
    "isSemver": (_is_semver, "bool"),
}

#: Names of real cel-go/Kubernetes functions this evaluator does not implement.
KNOWN_UNSUPPORTED = {
    "timestamp", "duration", "type", "bytes", "getFullYear", "getMonth", "getDate", "getDayOfMonth",
    "getDayOfWeek", "getDayOfYear", "getHours", "getMinutes", "getSeconds", "getMilliseconds",
    "ip", "isIP", "cidr", "isCIDR", "url", "isURL", "format", "quote", "reverse", "find", "findAll",
    "isSorted", "sum", "min", "max", "optional", "or", "orValue", "hasValue", "value", "div", "divInt",
    "all", "exists", "exists_one", "map", "filter", "transformList", "transformMap", "transformMapEntry",
    "sets", "authorizer", "image", "lists",
}

