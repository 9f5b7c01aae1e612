"""What CEL's operators do at run time: equality, ordering, indexing, field selection, arithmetic.

These are the semantics behind ``== != < <= > >= in [] . + - * / % !`` and unary minus, with
CEL's error rules (no implicit conversions, heterogeneous equality, integer overflow and division
by zero as errors, numeric keys that match across int, uint and double). The evaluator's closures
call them; they know nothing of the syntax tree or of static types.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from kschedctl.kube.cel.errors import NO_SUCH_OVERLOAD, CelError
from kschedctl.kube.cel.values import (
    EMPTY,
    DefaultingMap,
    Quantity,
    Semver,
    Uint,
    check_int,
    check_uint,
    is_num,
)


def cel_equal(a: Any, b: Any) -> bool:
    """Heterogeneous equality: values of different types are unequal, numbers compare by value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_num(a) and is_num(b):
        if isinstance(a, float) and math.isnan(a):
            return False
        if isinstance(b, float) and math.isnan(b):
            return False
        return Fraction(a) == Fraction(b) if (isinstance(a, float) or isinstance(b, float)) else int(a) == int(b)
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if isinstance(a, bytes) and isinstance(b, bytes):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        for k, v in a.items():
            found, other = map_find(b, k)
            if not found or not cel_equal(v, other):
                return False
        return True
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return a.value == b.value
    if isinstance(a, Semver) and isinstance(b, Semver):
        return a.compare(b) == 0
    return False


def cel_compare(a: Any, b: Any) -> int:
    """Ordering for ``< <= > >=``: same types, or any two numbers."""
    if is_num(a) and is_num(b):
        if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            raise CelError(NO_SUCH_OVERLOAD)
        fa, fb = (Fraction(a), Fraction(b)) if isinstance(a, float) or isinstance(b, float) else (int(a), int(b))
        return (fa > fb) - (fa < fb)
    for t in (bool, str, bytes):
        if isinstance(a, t) and isinstance(b, t):
            return (a > b) - (a < b)  # type: ignore[operator]
    raise CelError(NO_SUCH_OVERLOAD)


def map_find(m: Mapping[Any, Any], key: Any) -> tuple[bool, Any]:
    """Look up a CEL map key (numeric keys match across int/uint/double)."""
    if isinstance(key, bool):
        for k, v in m.items():
            if isinstance(k, bool) and k == key:
                return True, v
        return False, None
    if isinstance(key, float):
        if not key.is_integer():
            return False, None
        key = int(key)
    if isinstance(key, int):
        for k, v in m.items():
            if isinstance(k, int) and not isinstance(k, bool) and int(k) == key:
                return True, v
        return False, None
    if key in m:
        return True, m[key]
    return False, None


def fmt_key(key: Any) -> str:
    """A map key as cel-go shows it in error texts."""
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def index_value(container: Any, key: Any) -> Any:
    """``container[key]`` for a map or a list."""
    if isinstance(container, dict):
        if isinstance(key, str):
            if key in container:
                return container[key]
        else:
            found, v = map_find(container, key)
            if found:
                return v
        if isinstance(container, DefaultingMap):
            return EMPTY
        raise CelError(f"no such key: {fmt_key(key)}")
    if isinstance(container, list):
        if isinstance(key, bool) or not is_num(key):
            raise CelError(NO_SUCH_OVERLOAD)
        if isinstance(key, float):
            if not key.is_integer():
                raise CelError(f"unsupported index value {key} in list")
            key = int(key)
        i = int(key)
        if i < 0 or i >= len(container):
            raise CelError(f"index out of bounds: {i}")
        return container[i]
    raise CelError(NO_SUCH_OVERLOAD)


def select_field(operand: Any, name: str) -> Any:
    """``operand.name``: a map key read as a field."""
    if isinstance(operand, dict):
        if name in operand:
            return operand[name]
        if isinstance(operand, DefaultingMap):
            return EMPTY
        raise CelError(f"no such key: {name}")
    raise CelError(NO_SUCH_OVERLOAD)


def has_field(operand: Any, name: str) -> bool:
    """The ``has(operand.name)`` test."""
    if isinstance(operand, dict):
        return isinstance(operand, DefaultingMap) or name in operand
    raise CelError(NO_SUCH_OVERLOAD)


def as_bool(v: Any) -> bool:
    """A value that must be a bool (the operand of ``!``, a macro predicate)."""
    if isinstance(v, bool):
        return v
    raise CelError(NO_SUCH_OVERLOAD)


def negate(v: Any) -> Any:
    """Unary minus (defined for int and double, not for uint)."""
    if isinstance(v, (bool, Uint)):
        raise CelError(NO_SUCH_OVERLOAD)
    if isinstance(v, int):
        return check_int(-v)
    if isinstance(v, float):
        return -v
    raise CelError(NO_SUCH_OVERLOAD)


def is_in(elem: Any, container: Any) -> bool:
    """``elem in container``: list membership by CEL equality, or a map key."""
    if isinstance(container, list):
        return any(cel_equal(elem, x) for x in container)
    if isinstance(container, dict):
        return map_find(container, elem)[0]
    raise CelError(NO_SUCH_OVERLOAD)


def arith(op: str) -> Callable[[Any, Any], Any]:
    """The binary arithmetic operator ``op`` (one of ``+ - * / %``), with CEL's overflow and zero-division errors."""
    def f(a: Any, b: Any) -> Any:
        if isinstance(a, bool) or isinstance(b, bool):
            raise CelError(NO_SUCH_OVERLOAD)
        if isinstance(a, Uint) and isinstance(b, Uint):
            if op == "+":
                return check_uint(a + b)
            if op == "-":
                return check_uint(a - b)
            if op == "*":
                return check_uint(a * b)
            if b == 0:
                raise CelError("division by zero" if op == "/" else "modulus by zero")
            return Uint(a // b) if op == "/" else Uint(a % b)
        if isinstance(a, int) and isinstance(b, int) and not isinstance(a, Uint) and not isinstance(b, Uint):
            if op == "+":
                return check_int(a + b)
            if op == "-":
                return check_int(a - b)
            if op == "*":
                return check_int(a * b)
            if b == 0:
                raise CelError("division by zero" if op == "/" else "modulus by zero")
            q = abs(a) // abs(b)
            if (a < 0) != (b < 0):
                q = -q
            if op == "/":
                return check_int(q)
            return a - q * b
        if isinstance(a, float) and isinstance(b, float):
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if op == "/":
                if b == 0:
                    if a == 0 or math.isnan(a):
                        return math.nan
                    return math.copysign(math.inf, a) * math.copysign(1.0, b)
                return a / b
            raise CelError(NO_SUCH_OVERLOAD)
        if op == "+":
            if isinstance(a, str) and isinstance(b, str):
                return a + b
            if isinstance(a, bytes) and isinstance(b, bytes):
                return a + b
            if isinstance(a, list) and isinstance(b, list):
                return a + b
        raise CelError(NO_SUCH_OVERLOAD)

    return f


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "_==_": cel_equal,
    "_!=_": lambda a, b: not cel_equal(a, b),
    "_<_": lambda a, b: cel_compare(a, b) < 0,
    "_<=_": lambda a, b: cel_compare(a, b) <= 0,
    "_>_": lambda a, b: cel_compare(a, b) > 0,
    "_>=_": lambda a, b: cel_compare(a, b) >= 0,
    "_+_": arith("+"),
    "_-_": arith("-"),
    "_*_": arith("*"),
    "_/_": arith("/"),
    "_%_": arith("%"),
}
