"""A DRA selector expression compiled once and evaluated per device: compilation, programs, their cache.

This is where the parts meet: :func:`compile_expression` parses the text, checks and compiles the
tree, and turns every failure into the message the Kubernetes CEL compiler gives (``compilation
failed: ...``, ``must evaluate to bool ...``); a :class:`Program` evaluates the result for one
``device`` and insists on a boolean. Both the DynamicResources plugin and the API validation of
DeviceClasses and ResourceClaims compile through here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kschedctl.kube.cel.errors import CelCompileError, CelError, CelUnsupported
from kschedctl.kube.cel.evaluator import Compiler, Fn
from kschedctl.kube.cel.syntax import Parser
from kschedctl.kube.cel.values import type_name


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
        ast = Parser(expression).parse()
        fn, out = Compiler(expression).compile(ast)
    except CelUnsupported as e:
        raise CelUnsupported(f"expression not supported by kschedctl: {e}") from None
    except CelCompileError as e:
        raise CelCompileError(f"compilation failed: {e}") from None
    except RecursionError:
        raise CelUnsupported("expression not supported by kschedctl: nesting is too deep") from None
    if out not in ("bool", "dyn"):
        raise CelCompileError(f"must evaluate to bool or the unknown type, not {out}")
    return Program(expression, fn, out)



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

