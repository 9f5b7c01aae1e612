"""The errors of the CEL evaluator, and cel-go's way of pointing at a place in an expression.

Every part of the package raises them (the parser and the checker at compile time, the
operators and the function library at run time), and the DRA plugin and the API validation
catch them, so they sit in a module of their own that imports nothing. Their texts are
cel-go's, since they reach the user through Filter errors and validation messages.
"""

from __future__ import annotations


class CelError(Exception):
    """A CEL runtime error value (cel-go's ``types.Err``); the message is cel-go's text."""


class CelCompileError(Exception):
    """The expression does not compile (syntax or type-check error), formatted like cel-go's issues."""


class CelUnsupported(CelCompileError):
    """The expression uses CEL that this evaluator does not implement."""


NO_SUCH_OVERLOAD = "no such overload"


def _location(src: str, pos: int) -> tuple[int, int, str]:
    line = src.count("\n", 0, pos) + 1
    start = src.rfind("\n", 0, pos) + 1
    end = src.find("\n", pos)
    text = src[start:] if end < 0 else src[start:end]
    return line, pos - start, text


def issue(src: str, pos: int, msg: str) -> str:
    """One cel-go issue: ``ERROR: <input>:L:C: msg`` plus the source line and a caret."""
    line, col, text = _location(src, pos)
    return f"ERROR: <input>:{line}:{col + 1}: {msg}\n | {text}\n | {'.' * col}^"
