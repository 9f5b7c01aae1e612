"""The syntax of CEL: tokens, the syntax tree and the parser that builds it from an expression's text.

The parser is a recursive descent over CEL's grammar; operators become :class:`Call` nodes named
like cel-go's (``_&&_``, ``_?_:_``, ``@in``), and syntax errors are raised as cel-go formats
them. Syntax that this evaluator does not implement (optional selection, message construction,
leading-dot names) is refused here as :class:`CelUnsupported`. Nothing in this module knows about
types or evaluation: the checker and the evaluator read the tree it returns.
"""

from __future__ import annotations

import re
from typing import Any

from kschedctl.kube.cel.errors import CelCompileError, CelUnsupported, issue
from kschedctl.kube.cel.values import INT64_MAX, INT64_MIN, UINT64_MAX, Uint

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


class Token:
    """One lexical token: its kind (a group of ``_TOKEN_RE``, or ``eof``), its text and offset."""

    __slots__ = ("kind", "pos", "text")

    def __init__(self, kind: str, text: str, pos: int) -> None:
        self.kind = kind
        self.text = text
        self.pos = pos

    def __repr__(self) -> str:
        return f"{self.kind}:{self.text!r}@{self.pos}"


def tokenize(src: str) -> list[Token]:
    """The tokens of an expression, whitespace and comments dropped, ending with an ``eof`` token."""
    out: list[Token] = []
    i = 0
    n = len(src)
    while i < n:
        m = _TOKEN_RE.match(src, i)
        if m is None:
            raise CelCompileError(issue(src, i, f"Syntax error: token recognition error at: '{src[i]}'"))
        kind = m.lastgroup or ""
        if kind != "ws":
            out.append(Token(kind, m.group(), i))
        i = m.end()
    out.append(Token("eof", "", n))
    return out


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?"}


def _unquote(text: str, src: str, pos: int) -> str | bytes:
    """The value of a string or bytes literal token (prefixes, triple quotes and escapes resolved)."""
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
            raise CelCompileError(issue(src, pos, "Syntax error: invalid escape sequence"))
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
            raise CelCompileError(issue(src, pos, "Syntax error: invalid escape sequence"))
    s = "".join(out)
    return s.encode("utf-8") if is_bytes else s


# --------------------------------------------------------------------------- AST


class Node:
    """A node of the syntax tree; ``pos`` is its offset in the text, where its issues point."""

    __slots__ = ("pos",)

    def __init__(self, pos: int) -> None:
        self.pos = pos


class Lit(Node):
    """A literal scalar: int, :class:`Uint`, float, str, bytes, bool or None."""

    __slots__ = ("value",)

    def __init__(self, pos: int, value: Any) -> None:
        super().__init__(pos)
        self.value = value


class Ident(Node):
    """A name: a variable, or the ``cel`` namespace."""

    __slots__ = ("name",)

    def __init__(self, pos: int, name: str) -> None:
        super().__init__(pos)
        self.name = name


class Select(Node):
    """``operand.field``; ``test_only`` marks the presence test that ``has()`` stands for."""

    __slots__ = ("field", "operand", "test_only")

    def __init__(self, pos: int, operand: Node, field: str, test_only: bool = False) -> None:
        super().__init__(pos)
        self.operand = operand
        self.field = field
        self.test_only = test_only


class Index(Node):
    """``operand[index]``."""

    __slots__ = ("index", "operand")

    def __init__(self, pos: int, operand: Node, index: Node) -> None:
        super().__init__(pos)
        self.operand = operand
        self.index = index


class Call(Node):
    """A function, method, macro or operator call (``target`` is None unless written ``target.f()``)."""

    __slots__ = ("args", "function", "target")

    def __init__(self, pos: int, function: str, target: Node | None, args: list[Node]) -> None:
        super().__init__(pos)
        self.function = function
        self.target = target
        self.args = args


class ListLit(Node):
    """A list literal ``[a, b]``."""

    __slots__ = ("elems",)

    def __init__(self, pos: int, elems: list[Node]) -> None:
        super().__init__(pos)
        self.elems = elems


class MapLit(Node):
    """A map literal ``{k: v}``."""

    __slots__ = ("entries",)

    def __init__(self, pos: int, entries: list[tuple[Node, Node]]) -> None:
        super().__init__(pos)
        self.entries = entries


class Parser:
    """Recursive descent over CEL's grammar (operators become Calls named like cel-go's: ``_&&_``)."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.toks = tokenize(src)
        self.i = 0

    def peek(self) -> Token:
        return self.toks[self.i]

    def next(self) -> Token:
        t = self.toks[self.i]
        self.i += 1
        return t

    def accept(self, text: str) -> Token | None:
        t = self.toks[self.i]
        if t.kind == "op" and t.text == text:
            self.i += 1
            return t
        return None

    def expect(self, text: str) -> Token:
        t = self.accept(text)
        if t is None:
            got = self.peek()
            shown = "<EOF>" if got.kind == "eof" else got.text
            raise CelCompileError(issue(self.src, got.pos, f"Syntax error: mismatched input '{shown}' expecting '{text}'"))
        return t

    def parse(self) -> Node:
        if self.peek().kind == "eof":
            raise CelCompileError(issue(self.src, 0, "Syntax error: mismatched input '<EOF>' expecting expression"))
        e = self.expr()
        t = self.peek()
        if t.kind != "eof":
            raise CelCompileError(issue(self.src, t.pos, f"Syntax error: extraneous input '{t.text}' expecting <EOF>"))
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
                    raise CelCompileError(issue(self.src, name.pos, f"Syntax error: no viable alternative at input '.{name.text}'"))
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
                raise CelUnsupported(issue(self.src, t.pos, "optional field selection and indexing are not supported"))
            elif t.kind == "op" and t.text == "{":
                raise CelUnsupported(issue(self.src, t.pos, "message construction is not supported"))
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

    def _number(self, t: Token, negative: bool = False) -> Lit:
        text = t.text
        sign = -1 if negative else 1
        if t.kind == "float":
            return Lit(t.pos, sign * float(text))
        unsigned = text[-1] in "uU"
        digits = text[:-1] if unsigned else text
        value = int(digits, 16) if t.kind == "hex" else int(digits)
        if unsigned:
            if negative or value > UINT64_MAX:
                raise CelCompileError(issue(self.src, t.pos, "invalid uint literal"))
            return Lit(t.pos, Uint(value))
        value *= sign
        if value < INT64_MIN or value > INT64_MAX:
            raise CelCompileError(issue(self.src, t.pos, "invalid int literal"))
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
                raise CelCompileError(issue(self.src, t.pos, f"reserved identifier: {t.text}"))
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
                            raise CelUnsupported(issue(self.src, self.peek().pos, "optional map entries are not supported"))
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
                    raise CelUnsupported(issue(self.src, t.pos, "leading-dot identifiers are not supported"))
        shown = "<EOF>" if t.kind == "eof" else t.text
        raise CelCompileError(issue(self.src, t.pos, f"Syntax error: mismatched input '{shown}' expecting expression"))

