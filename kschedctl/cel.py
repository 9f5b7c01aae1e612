"""A CEL evaluator for the selector expressions of Dynamic Resource Allocation.

DeviceClasses and ResourceClaims choose devices with CEL expressions over one
variable, ``device`` (``driver``, ``attributes`` keyed by domain then attribute
name, ``capacity`` keyed the same way with Kubernetes quantities). kube-scheduler
evaluates them with cel-go and the Kubernetes CEL libraries. The PyPI CEL
packages were evaluated for this and do not fit: neither knows the Kubernetes
``quantity``/``semver`` types, the attribute map that yields an empty map for an
unknown domain, ``cel.bind`` or the Kubernetes string extensions, and their
error texts differ from cel-go's (which reach the user through Filter errors).

It sits at the top of the package, importing nothing but the quantity parser, because two layers
compile these expressions: the DynamicResources plugin (which evaluates them) and the API server's
create-time validation of DeviceClasses and ResourceClaims (``apivalidation.dra``), which refuses one
that does not compile.

So this module implements the part of CEL that device selectors use, compiled
once per expression into Python closures (fast enough to evaluate every device
of a large cluster per scheduling cycle):

* literals (int, uint, double, string, bytes, bool, null, lists, maps),
  ``! - * / % + - < <= > >= == != in && || ?:``, with CEL's error rules
  (``&&``/``||`` absorb an error when the other side decides the result,
  integer overflow and division by zero are errors, cross-type numeric
  comparison and heterogeneous equality as in Kubernetes' environment);
* member access and indexing, ``has()``, the macros ``all``, ``exists``,
  ``exists_one``, ``map``, ``filter`` and ``cel.bind``;
* ``size``, ``contains``, ``startsWith``, ``endsWith``, ``matches``, the
  conversions ``int uint double string bool dyn``, the Kubernetes string
  extensions (``lowerAscii upperAscii trim replace split join indexOf
  lastIndexOf substring charAt``), the quantity library (``quantity
  isQuantity compareTo isGreaterThan isLessThan add sub mul asInteger isInteger
  asApproximateFloat sign``) and the semver library (``semver isSemver major
  minor patch compareTo isGreaterThan isLessThan``).

Anything else (optional types, timestamps and durations, the IP/CIDR/URL/format
libraries, message construction, ...) raises :class:`CelUnsupported` when the
expression is compiled, so the caller reports a clear error instead of guessing.
Known differences from cel-go: no runtime cost limit, and the compile-time type
check covers only undeclared names, unknown ``device`` fields, operators whose
operand types are statically incompatible and a non-boolean result type.

Upstream model: ``k8s.io/dynamic-resource-allocation cel/compile.go``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from kschedctl.kube.quantity import QuantityError, parse_quantity

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1


# --------------------------------------------------------------------------- errors


class CelError(Exception):
    """A CEL runtime error value (cel-go's ``types.Err``); the message is cel-go's text."""


class CelCompileError(Exception):
    """The expression does not compile (syntax or type-check error), formatted like cel-go's issues."""


class CelUnsupported(CelCompileError):
    """The expression uses CEL that this evaluator does not implement."""


NO_SUCH_OVERLOAD = "no such overload"


# --------------------------------------------------------------------------- values


class Uint(int):
    """A CEL ``uint`` (Python ints are CEL ``int``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


class Quantity:
    """A Kubernetes ``resource.Quantity`` as the CEL quantity library sees it (exact value)."""

    __slots__ = ("value",)

    def __init__(self, value: Fraction) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Quantity({self.value})"


_SEMVER_NUM = r"(?:0|[1-9][0-9]*)"
_SEMVER_ID = r"(?:[0-9A-Za-z-]+)"
_SEMVER_RE = re.compile(
    rf"^({_SEMVER_NUM})\.({_SEMVER_NUM})\.({_SEMVER_NUM})"
    rf"(?:-({_SEMVER_ID}(?:\.{_SEMVER_ID})*))?(?:\+({_SEMVER_ID}(?:\.{_SEMVER_ID})*))?$"
)


class Semver:
    """A semantic version (blang/semver rules: pre-release ordering, build metadata ignored)."""

    __slots__ = ("build", "major", "minor", "patch", "pre")

    def __init__(self, major: int, minor: int, patch: int, pre: tuple[str, ...] = (), build: tuple[str, ...] = ()) -> None:
        self.major = major
        self.minor = minor
        self.patch = patch
        self.pre = pre
        self.build = build

    @classmethod
    def parse(cls, text: str) -> Semver:
        m = _SEMVER_RE.match(text)
        if m is None:
            raise ValueError(f"invalid semantic version {text!r}")
        pre = tuple(m.group(4).split(".")) if m.group(4) else ()
        for p in pre:
            if p.isdigit() and len(p) > 1 and p.startswith("0"):
                raise ValueError(f"Numeric PreRelease version must not contain leading zeroes {p!r}")
        build = tuple(m.group(5).split(".")) if m.group(5) else ()
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre, build)

    def compare(self, other: Semver) -> int:
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if not self.pre and not other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            xn, yn = x.isdigit(), y.isdigit()
            if xn and yn:
                return -1 if int(x) < int(y) else 1
            if xn:
                return -1
            if yn:
                return 1
            return -1 if x < y else 1
        if len(self.pre) == len(other.pre):
            return 0
        return -1 if len(self.pre) < len(other.pre) else 1

    def __repr__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(self.pre)
        return f"Semver({s})"


class DefaultingMap(dict):
    """A map whose lookups of unknown keys yield an empty map (DRA's attribute/capacity maps).

    Presence tests through ``has()`` therefore always succeed, while ``in`` and
    ``size()`` see the real keys, as with the Kubernetes implementation.
    """

    __slots__ = ()


_EMPTY: dict[Any, Any] = {}


def type_name(v: Any) -> str:
    """cel-go's name of a value's type (used in error texts)."""
    if v is None:
        return "null_type"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, Uint):
        return "uint"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bytes):
        return "bytes"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, Quantity):
        return "kubernetes.Quantity"
    if isinstance(v, Semver):
        return "kubernetes.Semver"
    return type(v).__name__


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check_int(v: int) -> int:
    if v < INT64_MIN or v > INT64_MAX:
        raise CelError("integer overflow")
    return v


def _check_uint(v: int) -> Uint:
    if v < 0 or v > UINT64_MAX:
        raise CelError("unsigned integer overflow")
    return Uint(v)


def cel_equal(a: Any, b: Any) -> bool:
    """Heterogeneous equality: values of different types are unequal, numbers compare by value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_num(a) and _is_num(b):
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
    if _is_num(a) and _is_num(b):
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


def _fmt_key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def index_value(container: Any, key: Any) -> Any:
    if isinstance(container, dict):
        if isinstance(key, str):
            if key in container:
                return container[key]
        else:
            found, v = map_find(container, key)
            if found:
                return v
        if isinstance(container, DefaultingMap):
            return _EMPTY
        raise CelError(f"no such key: {_fmt_key(key)}")
    if isinstance(container, list):
        if isinstance(key, bool) or not _is_num(key):
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
    if isinstance(operand, dict):
        if name in operand:
            return operand[name]
        if isinstance(operand, DefaultingMap):
            return _EMPTY
        raise CelError(f"no such key: {name}")
    raise CelError(NO_SUCH_OVERLOAD)


def has_field(operand: Any, name: str) -> bool:
    if isinstance(operand, dict):
        return isinstance(operand, DefaultingMap) or name in operand
    raise CelError(NO_SUCH_OVERLOAD)


def _as_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    raise CelError(NO_SUCH_OVERLOAD)


# --------------------------------------------------------------------------- lexer

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+|//[^\n]*)
  | (?P<float>(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|\.[0-9]+(?:[eE][+-]?[0-9]+)?))
  | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)
  | (?P<int>[0-9]+[uU]?)
  | (?P<string>[rR]?[bB]?[rR]?(?:\"\"\"(?:.|\n)*?\"\"\"|'''(?:.|\n)*?'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))
  | (?P<ident>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|\?\.|\[\?|[<>!+\-*/%?:.,\[\](){}])
    """,
    re.VERBOSE,
)

_RESERVED = {
    "as", "break", "const", "continue", "else", "for", "function", "if", "import", "let", "loop",
    "package", "namespace", "return", "var", "void", "while",
}


class _Tok:
    __slots__ = ("kind", "pos", "text")

    def __init__(self, kind: str, text: str, pos: int) -> None:
        self.kind = kind
        self.text = text
        self.pos = pos

    def __repr__(self) -> str:
        return f"{self.kind}:{self.text!r}@{self.pos}"


def _location(src: str, pos: int) -> tuple[int, int, str]:
    line = src.count("\n", 0, pos) + 1
    start = src.rfind("\n", 0, pos) + 1
    end = src.find("\n", pos)
    text = src[start:] if end < 0 else src[start:end]
    return line, pos - start, text


def _issue(src: str, pos: int, msg: str) -> str:
    """One cel-go issue: ``ERROR: <input>:L:C: msg`` plus the source line and a caret."""
    line, col, text = _location(src, pos)
    return f"ERROR: <input>:{line}:{col + 1}: {msg}\n | {text}\n | {'.' * col}^"


def _tokenize(src: str) -> list[_Tok]:
    out: list[_Tok] = []
    i = 0
    n = len(src)
    while i < n:
        m = _TOKEN_RE.match(src, i)
        if m is None:
            raise CelCompileError(_issue(src, i, f"Syntax error: token recognition error at: '{src[i]}'"))
        kind = m.lastgroup or ""
        if kind != "ws":
            out.append(_Tok(kind, m.group(), i))
        i = m.end()
    out.append(_Tok("eof", "", n))
    return out


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?"}


def _unquote(text: str, src: str, pos: int) -> str | bytes:
    prefix_len = 0
    raw = is_bytes = False
    while text[prefix_len] not in "\"'":
        c = text[prefix_len].lower()
        raw = raw or c == "r"
        is_bytes = is_bytes or c == "b"
        prefix_len += 1
    body = text[prefix_len:]
    q = 3 if body[:3] in ('"""', "'''") else 1
    body = body[q:-q]
    if raw:
        return body.encode() if is_bytes else body
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= len(body):
            raise CelCompileError(_issue(src, pos, "Syntax error: invalid escape sequence"))
        e = body[i]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 1
        elif e in "xX":
            out.append(chr(int(body[i + 1 : i + 3], 16)))
            i += 3
        elif e == "u":
            out.append(chr(int(body[i + 1 : i + 5], 16)))
            i += 5
        elif e == "U":
            out.append(chr(int(body[i + 1 : i + 9], 16)))
            i += 9
        elif e in "0123":
            out.append(chr(int(body[i : i + 3], 8)))
            i += 3
        else:
            raise CelCompileError(_issue(src, pos, "Syntax error: invalid escape sequence"))
    s = "".join(out)
    return s.encode("utf-8") if is_bytes else s


# --------------------------------------------------------------------------- AST


class Node:
    __slots__ = ("pos",)

    def __init__(self, pos: int) -> None:
        self.pos = pos


class Lit(Node):
    __slots__ = ("value",)

    def __init__(self, pos: int, value: Any) -> None:
        super().__init__(pos)
        self.value = value


class Ident(Node):
    __slots__ = ("name",)

    def __init__(self, pos: int, name: str) -> None:
        super().__init__(pos)
        self.name = name


class Select(Node):
    __slots__ = ("field", "operand", "test_only")

    def __init__(self, pos: int, operand: Node, field: str, test_only: bool = False) -> None:
        super().__init__(pos)
        self.operand = operand
        self.field = field
        self.test_only = test_only


class Index(Node):
    __slots__ = ("index", "operand")

    def __init__(self, pos: int, operand: Node, index: Node) -> None:
        super().__init__(pos)
        self.operand = operand
        self.index = index


class Call(Node):
    __slots__ = ("args", "function", "target")

    def __init__(self, pos: int, function: str, target: Node | None, args: list[Node]) -> None:
        super().__init__(pos)
        self.function = function
        self.target = target
        self.args = args


class ListLit(Node):
    __slots__ = ("elems",)

    def __init__(self, pos: int, elems: list[Node]) -> None:
        super().__init__(pos)
        self.elems = elems


class MapLit(Node):
    __slots__ = ("entries",)

    def __init__(self, pos: int, entries: list[tuple[Node, Node]]) -> None:
        super().__init__(pos)
        self.entries = entries


class _Parser:
    """Recursive descent over CEL's grammar (operators become Calls named like cel-go's: ``_&&_``)."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.toks = _tokenize(src)
        self.i = 0

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def next(self) -> _Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def accept(self, text: str) -> _Tok | None:
        t = self.toks[self.i]
        if t.kind == "op" and t.text == text:
            self.i += 1
            return t
        return None

    def expect(self, text: str) -> _Tok:
        t = self.accept(text)
        if t is None:
            got = self.peek()
            shown = "<EOF>" if got.kind == "eof" else got.text
            raise CelCompileError(_issue(self.src, got.pos, f"Syntax error: mismatched input '{shown}' expecting '{text}'"))
        return t

    def parse(self) -> Node:
        if self.peek().kind == "eof":
            raise CelCompileError(_issue(self.src, 0, "Syntax error: mismatched input '<EOF>' expecting expression"))
        e = self.expr()
        t = self.peek()
        if t.kind != "eof":
            raise CelCompileError(_issue(self.src, t.pos, f"Syntax error: extraneous input '{t.text}' expecting <EOF>"))
        return e

    def expr(self) -> Node:
        cond = self.cond_or()
        q = self.accept("?")
        if q is None:
            return cond
        a = self.cond_or()
        self.expect(":")
        b = self.expr()
        return Call(q.pos, "_?_:_", None, [cond, a, b])

    def cond_or(self) -> Node:
        left = self.cond_and()
        while (t := self.accept("||")) is not None:
            left = Call(t.pos, "_||_", None, [left, self.cond_and()])
        return left

    def cond_and(self) -> Node:
        left = self.relation()
        while (t := self.accept("&&")) is not None:
            left = Call(t.pos, "_&&_", None, [left, self.relation()])
        return left

    _RELOPS = {"<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_", "!=": "_!=_"}

    def relation(self) -> Node:
        left = self.addition()
        while True:
            t = self.peek()
            if t.kind == "op" and t.text in self._RELOPS:
                self.i += 1
                left = Call(t.pos, self._RELOPS[t.text], None, [left, self.addition()])
            elif t.kind == "ident" and t.text == "in":
                self.i += 1
                left = Call(t.pos, "@in", None, [left, self.addition()])
            else:
                return left

    def addition(self) -> Node:
        left = self.multiplication()
        while True:
            t = self.peek()
            if t.kind == "op" and t.text in ("+", "-"):
                self.i += 1
                left = Call(t.pos, f"_{t.text}_", None, [left, self.multiplication()])
            else:
                return left

    def multiplication(self) -> Node:
        left = self.unary()
        while True:
            t = self.peek()
            if t.kind == "op" and t.text in ("*", "/", "%"):
                self.i += 1
                left = Call(t.pos, f"_{t.text}_", None, [left, self.unary()])
            else:
                return left

    def unary(self) -> Node:
        t = self.peek()
        if t.kind == "op" and t.text == "!":
            self.i += 1
            return Call(t.pos, "!_", None, [self.unary()])
        if t.kind == "op" and t.text == "-":
            self.i += 1
            nt = self.peek()
            if nt.kind in ("int", "hex", "float") and nt.pos == t.pos + 1:
                # A negative literal (so that -9223372036854775808 is representable).
                self.i += 1
                lit = self._number(nt, negative=True)
                return self.member_suffix(lit)
            return Call(t.pos, "-_", None, [self.unary()])
        return self.member()

    def member(self) -> Node:
        return self.member_suffix(self.primary())

    def member_suffix(self, node: Node) -> Node:
        while True:
            t = self.peek()
            if t.kind == "op" and t.text == ".":
                self.i += 1
                name = self.next()
                if name.kind != "ident":
                    raise CelCompileError(_issue(self.src, name.pos, f"Syntax error: no viable alternative at input '.{name.text}'"))
                if self.accept("(") is not None:
                    node = Call(name.pos - 1, name.text, node, self.args(")"))
                else:
                    node = Select(name.pos - 1, node, name.text)
            elif t.kind == "op" and t.text == "[":
                self.i += 1
                idx = self.expr()
                self.expect("]")
                node = Index(t.pos, node, idx)
            elif t.kind == "op" and t.text in ("?.", "[?"):
                raise CelUnsupported(_issue(self.src, t.pos, "optional field selection and indexing are not supported"))
            elif t.kind == "op" and t.text == "{":
                raise CelUnsupported(_issue(self.src, t.pos, "message construction is not supported"))
            else:
                return node

    def args(self, close: str) -> list[Node]:
        out: list[Node] = []
        if self.accept(close) is not None:
            return out
        while True:
            out.append(self.expr())
            if self.accept(",") is not None:
                continue
            self.expect(close)
            return out

    def _number(self, t: _Tok, negative: bool = False) -> Lit:
        text = t.text
        sign = -1 if negative else 1
        if t.kind == "float":
            return Lit(t.pos, sign * float(text))
        unsigned = text[-1] in "uU"
        digits = text[:-1] if unsigned else text
        value = int(digits, 16) if t.kind == "hex" else int(digits)
        if unsigned:
            if negative or value > UINT64_MAX:
                raise CelCompileError(_issue(self.src, t.pos, "invalid uint literal"))
            return Lit(t.pos, Uint(value))
        value *= sign
        if value < INT64_MIN or value > INT64_MAX:
            raise CelCompileError(_issue(self.src, t.pos, "invalid int literal"))
        return Lit(t.pos, value)

    def primary(self) -> Node:
        t = self.next()
        if t.kind in ("int", "hex", "float"):
            return self._number(t)
        if t.kind == "string":
            return Lit(t.pos, _unquote(t.text, self.src, t.pos))
        if t.kind == "ident":
            if t.text == "true":
                return Lit(t.pos, True)
            if t.text == "false":
                return Lit(t.pos, False)
            if t.text == "null":
                return Lit(t.pos, None)
            if t.text in _RESERVED or t.text == "in":
                raise CelCompileError(_issue(self.src, t.pos, f"reserved identifier: {t.text}"))
            if self.accept("(") is not None:
                return Call(t.pos, t.text, None, self.args(")"))
            return Ident(t.pos, t.text)
        if t.kind == "op":
            if t.text == "(":
                e = self.expr()
                self.expect(")")
                return e
            if t.text == "[":
                elems: list[Node] = []
                if self.accept("]") is None:
                    while True:
                        elems.append(self.expr())
                        if self.accept(",") is not None:
                            if self.accept("]") is not None:
                                break
                            continue
                        self.expect("]")
                        break
                return ListLit(t.pos, elems)
            if t.text == "{":
                entries: list[tuple[Node, Node]] = []
                if self.accept("}") is None:
                    while True:
                        if self.peek().kind == "op" and self.peek().text == "?":
                            raise CelUnsupported(_issue(self.src, self.peek().pos, "optional map entries are not supported"))
                        k = self.expr()
                        self.expect(":")
                        v = self.expr()
                        entries.append((k, v))
                        if self.accept(",") is not None:
                            if self.accept("}") is not None:
                                break
                            continue
                        self.expect("}")
                        break
                return MapLit(t.pos, entries)
            if t.text == ".":
                name = self.next()
                if name.kind == "ident":
                    raise CelUnsupported(_issue(self.src, t.pos, "leading-dot identifiers are not supported"))
        shown = "<EOF>" if t.kind == "eof" else t.text
        raise CelCompileError(_issue(self.src, t.pos, f"Syntax error: mismatched input '{shown}' expecting expression"))


# --------------------------------------------------------------------------- compilation

Act = dict[str, Any]
Fn = Callable[[Act], Any]

# Static types used by the light type check ("dyn" = unknown).
DEVICE = "kubernetes.DRADevice"
ATTR_OUTER = "map(string, map(string, dyn))"
ATTR_INNER = "map(string, dyn)"
CAP_OUTER = "map(string, map(string, kubernetes.Quantity))"
CAP_INNER = "map(string, kubernetes.Quantity)"
DEVICE_FIELDS = {"driver": "string", "attributes": ATTR_OUTER, "capacity": CAP_OUTER}

_NUMERIC = {"int", "uint", "double"}


def _static_of(v: Any) -> str:
    t = type_name(v)
    if t in ("list", "map"):
        return "dyn"
    return t


def _concrete(t: str) -> bool:
    return t in ("bool", "int", "uint", "double", "string", "bytes", "null_type", "kubernetes.Quantity", "kubernetes.Semver")


def _overload_msg(op: str, types: list[str]) -> str:
    return f"found no matching overload for '{op}' applied to '({', '.join(types)})'"


class _Compiler:
    def __init__(self, src: str) -> None:
        self.src = src
        self.scopes: list[set[str]] = []

    def err(self, node: Node, msg: str) -> CelCompileError:
        return CelCompileError(_issue(self.src, node.pos, msg))

    def unsupported(self, node: Node, msg: str) -> CelUnsupported:
        return CelUnsupported(_issue(self.src, node.pos, msg))

    def bound(self, name: str) -> bool:
        return any(name in s for s in self.scopes)

    # returns (closure, static type)
    def compile(self, node: Node) -> tuple[Fn, str]:
        if isinstance(node, Lit):
            v = node.value
            return (lambda act: v), _static_of(v)
        if isinstance(node, Ident):
            name = node.name
            if self.bound(name):
                return (lambda act: act[name]), "dyn"
            if name == "device":
                return (lambda act: act["device"]), DEVICE
            if name in ("int", "uint", "double", "string", "bool", "bytes", "list", "map", "null_type", "type", "dyn"):
                raise self.unsupported(node, f"type values ('{name}') are not supported")
            raise self.err(node, f"undeclared reference to '{name}' (in container '')")
        if isinstance(node, Select):
            return self._select(node)
        if isinstance(node, Index):
            return self._index(node)
        if isinstance(node, ListLit):
            elems = [self.compile(e)[0] for e in node.elems]
            return (lambda act: [f(act) for f in elems]), "dyn"
        if isinstance(node, MapLit):
            entries = [(self.compile(k)[0], self.compile(v)[0]) for k, v in node.entries]

            def make_map(act: Act) -> Any:
                out: dict[Any, Any] = {}
                for kf, vf in entries:
                    k = kf(act)
                    if not isinstance(k, (str, int)):
                        raise CelError(f"unsupported key type: {type_name(k)}")
                    if map_find(out, k)[0]:
                        raise CelError(f"Failed with repeated key: {_fmt_key(k)}")
                    out[k] = vf(act)
                return out

            return make_map, "dyn"
        if isinstance(node, Call):
            return self._call(node)
        raise self.unsupported(node, "unsupported expression")

    def _select(self, node: Select) -> tuple[Fn, str]:
        field = node.field
        if isinstance(node.operand, Ident) and node.operand.name == "cel" and not self.bound("cel"):
            raise self.err(node, f"undeclared reference to 'cel.{field}' (in container '')")
        of, ot = self.compile(node.operand)
        if ot == DEVICE:
            if field not in DEVICE_FIELDS:
                raise self.err(node, f"undefined field '{field}'")
            rt = DEVICE_FIELDS[field]
            if node.test_only:
                return (lambda act: True), "bool"
            return (lambda act: of(act)[field]), rt
        if _concrete(ot) and ot != "null_type":
            raise self.err(node, f"type '{ot}' does not support field selection")
        rt = _element_type(ot)
        if node.test_only:
            return (lambda act: has_field(of(act), field)), "bool"
        return (lambda act: select_field(of(act), field)), rt

    def _index(self, node: Index) -> tuple[Fn, str]:
        of, ot = self.compile(node.operand)
        xf, xt = self.compile(node.index)
        if ot == DEVICE:
            raise self.err(node, _overload_msg("_[_]", [DEVICE, xt]))
        if _concrete(ot):
            raise self.err(node, _overload_msg("_[_]", [ot, xt]))
        return (lambda act: index_value(of(act), xf(act))), _element_type(ot)

    def _macro_var(self, node: Node) -> str:
        if not isinstance(node, Ident):
            raise self.err(node, "argument must be a simple name")
        return node.name

    def _call(self, node: Call) -> tuple[Fn, str]:
        fn = node.function
        args = node.args
        tgt = node.target
        # ---- macros
        if fn == "has" and tgt is None:
            if len(args) != 1 or not isinstance(args[0], Select):
                raise self.err(node, "invalid argument to has() macro")
            sel = args[0]
            return self._select(Select(sel.pos, sel.operand, sel.field, test_only=True))
        if tgt is not None and isinstance(tgt, Ident) and tgt.name == "cel" and not self.bound("cel"):
            if fn == "bind" and len(args) == 3:
                var = self._macro_var(args[0])
                init_f, _ = self.compile(args[1])
                self.scopes.append({var})
                try:
                    body_f, body_t = self.compile(args[2])
                finally:
                    self.scopes.pop()

                def bind(act: Act) -> Any:
                    inner = dict(act)
                    inner[var] = init_f(act)
                    return body_f(inner)

                return bind, body_t
            raise self.unsupported(node, f"function 'cel.{fn}' is not supported")
        if tgt is not None and fn in ("all", "exists", "exists_one", "map", "filter") and len(args) in (2, 3):
            return self._comprehension(node, tgt)
        # ---- operators
        if fn == "_&&_" or fn == "_||_":
            return self._logical(node)
        if fn == "_?_:_":
            cf, ct = self.compile(args[0])
            af, at = self.compile(args[1])
            bf, bt = self.compile(args[2])
            if _concrete(ct) and ct != "bool":
                raise self.err(node, _overload_msg("_?_:_", [ct, at, bt]))

            def cond(act: Act) -> Any:
                c = cf(act)
                if not isinstance(c, bool):
                    raise CelError(NO_SUCH_OVERLOAD)
                return af(act) if c else bf(act)

            return cond, at if at == bt else "dyn"
        if fn == "!_":
            f, t = self.compile(args[0])
            if _concrete(t) and t != "bool":
                raise self.err(node, _overload_msg("!_", [t]))
            return (lambda act: not _as_bool(f(act))), "bool"
        if fn == "-_":
            f, t = self.compile(args[0])
            if _concrete(t) and t not in ("int", "double"):
                raise self.err(node, _overload_msg("-_", [t]))
            return (lambda act: _negate(f(act))), t
        if fn in _BINARY:
            return self._binary(node)
        if fn == "@in":
            lf, lt = self.compile(args[0])
            rf, rt = self.compile(args[1])
            if _concrete(rt) or rt == DEVICE:
                raise self.err(node, _overload_msg("@in", [lt, rt]))
            return (lambda act: _in(lf(act), rf(act))), "bool"
        # ---- functions
        return self._function(node)

    def _logical(self, node: Call) -> tuple[Fn, str]:
        lf, lt = self.compile(node.args[0])
        rf, rt = self.compile(node.args[1])
        for t in (lt, rt):
            if _concrete(t) and t != "bool":
                raise self.err(node, _overload_msg(node.function, [lt, rt]))
        is_and = node.function == "_&&_"
        decisive = not is_and  # && is decided by false, || by true

        def logical(act: Act) -> Any:
            err: CelError | None = None
            try:
                lv = lf(act)
                if not isinstance(lv, bool):
                    raise CelError(NO_SUCH_OVERLOAD)
                if lv is decisive:
                    return decisive
            except CelError as e:
                err = e
            try:
                rv = rf(act)
                if not isinstance(rv, bool):
                    raise CelError(NO_SUCH_OVERLOAD)
            except CelError:
                if err is not None:
                    raise err from None
                raise
            if rv is decisive:
                return decisive
            if err is not None:
                raise err
            return not decisive

        return logical, "bool"

    def _binary(self, node: Call) -> tuple[Fn, str]:
        fn = node.function
        lf, lt = self.compile(node.args[0])
        rf, rt = self.compile(node.args[1])
        op = _BINARY[fn]
        if fn in ("_==_", "_!=_"):
            if _concrete(lt) and _concrete(rt) and lt != rt and not (lt in _NUMERIC and rt in _NUMERIC) and "null_type" not in (lt, rt):
                raise self.err(node, _overload_msg(fn, [lt, rt]))
            return (lambda act: op(lf(act), rf(act))), "bool"
        if fn in ("_<_", "_<=_", "_>_", "_>=_"):
            if _concrete(lt) and _concrete(rt):
                ok = (lt == rt and lt in ("bool", "int", "uint", "double", "string", "bytes")) or (lt in _NUMERIC and rt in _NUMERIC)
                if not ok:
                    raise self.err(node, _overload_msg(fn, [lt, rt]))
            return (lambda act: op(lf(act), rf(act))), "bool"
        if _concrete(lt) and _concrete(rt) and lt != rt:
            raise self.err(node, _overload_msg(fn, [lt, rt]))
        return (lambda act: op(lf(act), rf(act))), lt if lt == rt else "dyn"

    def _comprehension(self, node: Call, tgt: Node) -> tuple[Fn, str]:
        fn = node.function
        args = node.args
        if len(args) == 3 and fn != "map":
            raise self.unsupported(node, f"two-variable '{fn}' comprehensions are not supported")
        var = self._macro_var(args[0])
        rng_f, _ = self.compile(tgt)
        self.scopes.append({var})
        try:
            fs = [self.compile(a)[0] for a in args[1:]]
        finally:
            self.scopes.pop()

        def items(act: Act) -> list[Any]:
            r = rng_f(act)
            if isinstance(r, list):
                return r
            if isinstance(r, dict):
                return list(r.keys())
            raise CelError(NO_SUCH_OVERLOAD)

        def scope(act: Act, v: Any) -> Act:
            inner = dict(act)
            inner[var] = v
            return inner

        pred = fs[0]
        if fn == "all" or fn == "exists":
            decisive = fn == "exists"

            def quantifier(act: Act) -> Any:
                err: CelError | None = None
                for v in items(act):
                    try:
                        r = pred(scope(act, v))
                        if not isinstance(r, bool):
                            raise CelError(NO_SUCH_OVERLOAD)
                    except CelError as e:
                        if err is None:
                            err = e
                        continue
                    if r is decisive:
                        return decisive
                if err is not None:
                    raise err
                return not decisive

            return quantifier, "bool"
        if fn == "exists_one":

            def exists_one(act: Act) -> Any:
                n = 0
                for v in items(act):
                    if _as_bool(pred(scope(act, v))):
                        n += 1
                return n == 1

            return exists_one, "bool"
        if fn == "filter":

            def filt(act: Act) -> Any:
                return [v for v in items(act) if _as_bool(pred(scope(act, v)))]

            return filt, "dyn"
        if len(fs) == 1:
            return (lambda act: [pred(scope(act, v)) for v in items(act)]), "dyn"
        transform = fs[1]

        def map_filter(act: Act) -> Any:
            out = []
            for v in items(act):
                inner = scope(act, v)
                if _as_bool(pred(inner)):
                    out.append(transform(inner))
            return out

        return map_filter, "dyn"

    def _function(self, node: Call) -> tuple[Fn, str]:
        fn = node.function
        compiled = [self.compile(a) for a in node.args]
        arg_fs = [c[0] for c in compiled]
        if node.target is not None:
            tf, _tt = self.compile(node.target)
            spec = _MEMBER_FUNCS.get(fn)
            if spec is None:
                if fn in _GLOBAL_FUNCS or fn in _KNOWN_UNSUPPORTED:
                    raise self.unsupported(node, f"function '{fn}' is not supported as a method")
                raise self.err(node, f"undeclared reference to '{fn}' (in container '')")
            impl, rtype = spec
            n = len(arg_fs)
            if n == 0:
                return (lambda act: impl(tf(act))), rtype
            if n == 1:
                a0 = arg_fs[0]
                return (lambda act: impl(tf(act), a0(act))), rtype
            return (lambda act: impl(tf(act), *[f(act) for f in arg_fs])), rtype
        gspec = _GLOBAL_FUNCS.get(fn)
        if gspec is None:
            if fn in _KNOWN_UNSUPPORTED or fn in _MEMBER_FUNCS:
                raise self.unsupported(node, f"function '{fn}' is not supported")
            raise self.err(node, f"undeclared reference to '{fn}' (in container '')")
        gimpl, grtype = gspec
        if len(arg_fs) == 1:
            a0 = arg_fs[0]
            return (lambda act: gimpl(a0(act))), grtype
        return (lambda act: gimpl(*[f(act) for f in arg_fs])), grtype


def _element_type(container: str) -> str:
    if container == ATTR_OUTER:
        return ATTR_INNER
    if container == CAP_OUTER:
        return CAP_INNER
    if container == CAP_INNER:
        return "kubernetes.Quantity"
    return "dyn"


def _negate(v: Any) -> Any:
    if isinstance(v, (bool, Uint)):
        raise CelError(NO_SUCH_OVERLOAD)
    if isinstance(v, int):
        return _check_int(-v)
    if isinstance(v, float):
        return -v
    raise CelError(NO_SUCH_OVERLOAD)


def _in(elem: Any, container: Any) -> bool:
    if isinstance(container, list):
        return any(cel_equal(elem, x) for x in container)
    if isinstance(container, dict):
        return map_find(container, elem)[0]
    raise CelError(NO_SUCH_OVERLOAD)


def _arith(op: str) -> Callable[[Any, Any], Any]:
    def f(a: Any, b: Any) -> Any:
        if isinstance(a, bool) or isinstance(b, bool):
            raise CelError(NO_SUCH_OVERLOAD)
        if isinstance(a, Uint) and isinstance(b, Uint):
            if op == "+":
                return _check_uint(a + b)
            if op == "-":
                return _check_uint(a - b)
            if op == "*":
                return _check_uint(a * b)
            if b == 0:
                raise CelError("division by zero" if op == "/" else "modulus by zero")
            return Uint(a // b) if op == "/" else Uint(a % b)
        if isinstance(a, int) and isinstance(b, int) and not isinstance(a, Uint) and not isinstance(b, Uint):
            if op == "+":
                return _check_int(a + b)
            if op == "-":
                return _check_int(a - b)
            if op == "*":
                return _check_int(a * b)
            if b == 0:
                raise CelError("division by zero" if op == "/" else "modulus by zero")
            q = abs(a) // abs(b)
            if (a < 0) != (b < 0):
                q = -q
            if op == "/":
                return _check_int(q)
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


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "_==_": cel_equal,
    "_!=_": lambda a, b: not cel_equal(a, b),
    "_<_": lambda a, b: cel_compare(a, b) < 0,
    "_<=_": lambda a, b: cel_compare(a, b) <= 0,
    "_>_": lambda a, b: cel_compare(a, b) > 0,
    "_>=_": lambda a, b: cel_compare(a, b) >= 0,
    "_+_": _arith("+"),
    "_-_": _arith("-"),
    "_*_": _arith("*"),
    "_/_": _arith("/"),
    "_%_": _arith("%"),
}


# --------------------------------------------------------------------------- function library


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
        return _check_int(int(v))
    if isinstance(v, float):
        if math.isnan(v) or v <= -(2.0**63) or v >= 2.0**63:
            raise CelError("integer overflow")
        return int(v)
    if isinstance(v, str):
        if not re.fullmatch(r"[+-]?[0-9]+", v):
            raise CelError(f"cannot convert '{v}' to int")
        return _check_int(int(v))
    raise CelError(NO_SUCH_OVERLOAD)


def _to_uint(v: Any) -> Uint:
    if isinstance(v, bool):
        raise CelError(NO_SUCH_OVERLOAD)
    if isinstance(v, int):
        return _check_uint(int(v))
    if isinstance(v, float):
        if math.isnan(v) or v < 0 or v >= 2.0**64:
            raise CelError("unsigned integer overflow")
        return Uint(int(v))
    if isinstance(v, str):
        if not re.fullmatch(r"[+]?[0-9]+", v):
            raise CelError(f"cannot convert '{v}' to uint")
        return _check_uint(int(v))
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
_MEMBER_FUNCS: dict[str, tuple[Callable[..., Any], str]] = {
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
_GLOBAL_FUNCS: dict[str, tuple[Callable[..., Any], str]] = {
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
_KNOWN_UNSUPPORTED = {
    "timestamp", "duration", "type", "bytes", "getFullYear", "getMonth", "getDate", "getDayOfMonth",
    "getDayOfWeek", "getDayOfYear", "getHours", "getMinutes", "getSeconds", "getMilliseconds",
    "ip", "isIP", "cidr", "isCIDR", "url", "isURL", "format", "quote", "reverse", "find", "findAll",
    "isSorted", "sum", "min", "max", "optional", "or", "orValue", "hasValue", "value", "div", "divInt",
    "all", "exists", "exists_one", "map", "filter", "transformList", "transformMap", "transformMapEntry",
    "sets", "authorizer", "image", "lists",
}


# --------------------------------------------------------------------------- public API


class Program:
    """A compiled selector expression."""

    __slots__ = ("expression", "fn", "output_type")

    def __init__(self, expression: str, fn: Fn, output_type: str) -> None:
        self.expression = expression
        self.fn = fn
        self.output_type = output_type

    def evaluate(self, device: Mapping[str, Any]) -> bool:
        """Evaluate for one device (see :func:`device_value`); CelError on a runtime error."""
        result = self.fn({"device": device})
        if not isinstance(result, bool):
            raise CelError(
                f"CEL result of type {type_name(result)} could not be converted to bool: "
                f"type conversion error from '{type_name(result)}' to 'bool'"
            )
        return result


def compile_expression(expression: str) -> Program:
    """Compile a DRA selector; CelCompileError (or CelUnsupported) when it cannot be used.

    The messages follow the Kubernetes CEL compiler: ``compilation failed: ERROR: ...``
    for syntax and type errors, ``must evaluate to bool ...`` for a wrong result type.
    """
    try:
        ast = _Parser(expression).parse()
        fn, out = _Compiler(expression).compile(ast)
    except CelUnsupported as e:
        raise CelUnsupported(f"expression not supported by kschedctl: {e}") from None
    except CelCompileError as e:
        raise CelCompileError(f"compilation failed: {e}") from None
    except RecursionError:
        raise CelUnsupported("expression not supported by kschedctl: nesting is too deep") from None
    if out not in ("bool", "dyn"):
        raise CelCompileError(f"must evaluate to bool or the unknown type, not {out}")
    return Program(expression, fn, out)


class _DeviceFields(dict):
    """The ``device`` variable; ``capacity`` is built on first use (quantities are costly to parse)."""

    __slots__ = ("_capacity",)

    def __init__(self, values: dict[str, Any], capacity: Callable[[], DefaultingMap]) -> None:
        super().__init__(values)
        self._capacity = capacity

    def __missing__(self, key: str) -> Any:
        if key != "capacity":
            raise KeyError(key)
        v = self._capacity()
        self[key] = v
        return v


def device_value(
    driver: str,
    attributes: Mapping[str, Any],
    capacity: Mapping[str, Fraction] | Callable[[], Mapping[str, Fraction]],
) -> dict[str, Any]:
    """The ``device`` variable: attribute and capacity names split into domain and id.

    ``attributes`` maps qualified names to already converted values (int, bool,
    str or :class:`Semver`); a name without a domain gets the driver's domain.
    ``capacity`` maps qualified names to exact quantities, or is a function
    returning that map when an expression first reads ``device.capacity``.
    """
    attrs: DefaultingMap = DefaultingMap()
    for name, value in attributes.items():
        domain, ident = split_qualified_name(name, driver)
        attrs.setdefault(domain, {})[ident] = value

    def caps() -> DefaultingMap:
        out: DefaultingMap = DefaultingMap()
        for name, q in (capacity() if callable(capacity) else capacity).items():
            domain, ident = split_qualified_name(name, driver)
            out.setdefault(domain, {})[ident] = Quantity(q)
        return out

    return _DeviceFields({"driver": driver, "attributes": attrs}, caps)


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    sep = name.find("/")
    if sep < 0:
        return default_domain, name
    return name[:sep], name[sep + 1 :]


class ProgramCache:
    """Compiled expressions by text (compile errors are cached too)."""

    def __init__(self) -> None:
        self._cache: dict[str, Program | CelCompileError] = {}

    def get(self, expression: str) -> Program:
        entry = self._cache.get(expression)
        if entry is None:
            try:
                entry = compile_expression(expression)
            except CelCompileError as e:
                entry = e
            self._cache[expression] = entry
        if isinstance(entry, CelCompileError):
            raise entry
        return entry


__all__ = [
    "CelCompileError",
    "CelError",
    "CelUnsupported",
    "DefaultingMap",
    "Program",
    "ProgramCache",
    "Quantity",
    "Semver",
    "Uint",
    "compile_expression",
    "device_value",
    "split_qualified_name",
]
