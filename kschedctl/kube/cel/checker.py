"""The compile-time type check of a CEL expression: static types, names in scope, declared functions.

cel-go refuses at compile time an expression that names an undeclared variable or function, reads
a field the ``device`` variable does not have, or applies an operator to operands whose types can
never match. This module holds those rules: the static type names (``dyn`` when unknown), the
schema of ``device``, the operator typing and the lookup of functions in the library's
declarations. The check is light: it covers only what the types of literals and of ``device``
decide, and leaves everything ``dyn`` to run time.

The evaluator calls a :class:`Checker` at each node of the syntax tree as it builds the node's
closure, so that one walk both checks and compiles, in the order cel-go reports its issues.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from kschedctl.kube.cel.errors import CelCompileError, CelUnsupported, issue
from kschedctl.kube.cel.library import GLOBAL_FUNCS, KNOWN_UNSUPPORTED, MEMBER_FUNCS
from kschedctl.kube.cel.syntax import Call, Ident, Node, Select
from kschedctl.kube.cel.values import type_name

# Static types used by the light type check ("dyn" = unknown).
DEVICE = "kubernetes.DRADevice"
ATTR_OUTER = "map(string, map(string, dyn))"
ATTR_INNER = "map(string, dyn)"
CAP_OUTER = "map(string, map(string, kubernetes.Quantity))"
CAP_INNER = "map(string, kubernetes.Quantity)"
DEVICE_FIELDS = {"driver": "string", "attributes": ATTR_OUTER, "capacity": CAP_OUTER}

_NUMERIC = {"int", "uint", "double"}
_ORDERED = ("bool", "int", "uint", "double", "string", "bytes")
_TYPE_NAMES = ("int", "uint", "double", "string", "bool", "bytes", "list", "map", "null_type", "type", "dyn")

#: The macros called on a range: ``r.all(x, p)`` and the like.
COMPREHENSIONS = ("all", "exists", "exists_one", "map", "filter")


def static_of(v: Any) -> str:
    """The static type of a literal (a list or map literal is ``dyn``: element types are not tracked)."""
    t = type_name(v)
    if t in ("list", "map"):
        return "dyn"
    return t


def concrete(t: str) -> bool:
    """Whether a static type is a scalar one, which the check can hold operators against."""
    return t in ("bool", "int", "uint", "double", "string", "bytes", "null_type", "kubernetes.Quantity", "kubernetes.Semver")


def element_type(container: str) -> str:
    """The static type of an element of a container (what indexing or selecting a field yields)."""
    if container == ATTR_OUTER:
        return ATTR_INNER
    if container == CAP_OUTER:
        return CAP_INNER
    if container == CAP_INNER:
        return "kubernetes.Quantity"
    return "dyn"


def overload_msg(op: str, types: Sequence[str]) -> str:
    return f"found no matching overload for '{op}' applied to '({', '.join(types)})'"


def _equality_ok(lt: str, rt: str) -> bool:
    return not (concrete(lt) and concrete(rt) and lt != rt and not (lt in _NUMERIC and rt in _NUMERIC) and "null_type" not in (lt, rt))


def _ordering_ok(lt: str, rt: str) -> bool:
    if not (concrete(lt) and concrete(rt)):
        return True
    return (lt == rt and lt in _ORDERED) or (lt in _NUMERIC and rt in _NUMERIC)


def operator_type(op: str, types: Sequence[str]) -> str | None:
    """The static result type of an operator (a Call named like ``_+_``) over operands of these
    types; None when no overload can match them."""
    if op == "_?_:_":
        ct, at, bt = types
        if concrete(ct) and ct != "bool":
            return None
        return at if at == bt else "dyn"
    if op == "!_":
        return None if concrete(types[0]) and types[0] != "bool" else "bool"
    if op == "-_":
        t = types[0]
        return None if concrete(t) and t not in ("int", "double") else t
    if op == "@in":
        rt = types[1]
        return None if concrete(rt) or rt == DEVICE else "bool"
    if op in ("_&&_", "_||_"):
        return None if any(concrete(t) and t != "bool" for t in types) else "bool"
    lt, rt = types
    if op in ("_==_", "_!=_"):
        return "bool" if _equality_ok(lt, rt) else None
    if op in ("_<_", "_<=_", "_>_", "_>=_"):
        return "bool" if _ordering_ok(lt, rt) else None
    if concrete(lt) and concrete(rt) and lt != rt:
        return None
    if lt == rt:
        return lt
    return _arithmetic_with_dyn(op, rt if lt == "dyn" else lt if rt == "dyn" else "dyn")


#: The scalar operand types of each arithmetic operator whose overloads take both operands of one
#: type and give that type (the timestamp and duration overloads are not tracked here).
_SAME_TYPE_ARITHMETIC = {
    "_+_": ("int", "uint", "double", "string", "bytes"),
    "_-_": ("int", "uint", "double"),
    "_*_": ("int", "uint", "double"),
    "_/_": ("int", "uint", "double"),
    "_%_": ("int", "uint"),
}


def _arithmetic_with_dyn(op: str, known: str) -> str:
    """The result of an arithmetic operator over ``dyn`` and an operand of type ``known``: as cel-go's
    checker resolves it, the one overload the known operand allows gives its type (``dyn + 1`` is an
    int); anything else stays ``dyn``."""
    return known if known in _SAME_TYPE_ARITHMETIC.get(op, ()) else "dyn"


class Checker:
    """The type check of one expression: its text (for the issues' positions) and the names in scope."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.scopes: list[set[str]] = []

    def err(self, node: Node, msg: str) -> CelCompileError:
        return CelCompileError(issue(self.src, node.pos, msg))

    def unsupported(self, node: Node, msg: str) -> CelUnsupported:
        return CelUnsupported(issue(self.src, node.pos, msg))

    def bound(self, name: str) -> bool:
        return any(name in s for s in self.scopes)

    @contextmanager
    def scope(self, var: str) -> Iterator[None]:
        """A macro's variable is in scope while its body is compiled."""
        self.scopes.append({var})
        try:
            yield
        finally:
            self.scopes.pop()

    def ident(self, node: Ident) -> str:
        """The static type of a name: a macro variable, or ``device``."""
        name = node.name
        if self.bound(name):
            return "dyn"
        if name == "device":
            return DEVICE
        if name in _TYPE_NAMES:
            raise self.unsupported(node, f"type values ('{name}') are not supported")
        raise self.err(node, f"undeclared reference to '{name}' (in container '')")

    def is_cel_namespace(self, node: Node | None) -> bool:
        """Whether a node names the ``cel`` namespace of ``cel.bind`` (not a variable called ``cel``)."""
        return isinstance(node, Ident) and node.name == "cel" and not self.bound("cel")

    def select_operand(self, node: Select) -> None:
        """Refuse a field of the ``cel`` namespace, before its operand is compiled."""
        if self.is_cel_namespace(node.operand):
            raise self.err(node, f"undeclared reference to 'cel.{node.field}' (in container '')")

    def select(self, node: Select, operand: str) -> str:
        """The static type of ``operand.field`` (``bool`` for the ``has()`` test)."""
        field = node.field
        if operand == DEVICE:
            if field not in DEVICE_FIELDS:
                raise self.err(node, f"undefined field '{field}'")
            return "bool" if node.test_only else DEVICE_FIELDS[field]
        if concrete(operand) and operand != "null_type":
            raise self.err(node, f"type '{operand}' does not support field selection")
        return "bool" if node.test_only else element_type(operand)

    def index(self, node: Node, operand: str, key: str) -> str:
        """The static type of ``operand[key]``."""
        if operand == DEVICE or concrete(operand):
            raise self.err(node, overload_msg("_[_]", [operand, key]))
        return element_type(operand)

    def operator(self, node: Call, types: Sequence[str]) -> str:
        """The static result type of an operator node over its operands' types."""
        out = operator_type(node.function, types)
        if out is None:
            raise self.err(node, overload_msg(node.function, types))
        return out

    def has_macro(self, node: Call) -> Select:
        """The field test that ``has(x.f)`` stands for."""
        args = node.args
        if len(args) != 1 or not isinstance(args[0], Select):
            raise self.err(node, "invalid argument to has() macro")
        sel = args[0]
        return Select(sel.pos, sel.operand, sel.field, test_only=True)

    def cel_bind(self, node: Call) -> str:
        """The variable a ``cel.bind(var, init, body)`` call binds (the only function of ``cel.``)."""
        if node.function == "bind" and len(node.args) == 3:
            return self.macro_var(node.args[0])
        raise self.unsupported(node, f"function 'cel.{node.function}' is not supported")

    def comprehension(self, node: Call) -> str:
        """The variable of a comprehension macro (only ``map`` has a three-argument form here)."""
        if len(node.args) == 3 and node.function != "map":
            raise self.unsupported(node, f"two-variable '{node.function}' comprehensions are not supported")
        return self.macro_var(node.args[0])

    def macro_var(self, node: Node) -> str:
        if not isinstance(node, Ident):
            raise self.err(node, "argument must be a simple name")
        return node.name

    def member_function(self, node: Call) -> tuple[Callable[..., Any], str]:
        """A function called as ``target.f(args)``: its implementation and result type."""
        fn = node.function
        spec = MEMBER_FUNCS.get(fn)
        if spec is None:
            if fn in GLOBAL_FUNCS or fn in KNOWN_UNSUPPORTED:
                raise self.unsupported(node, f"function '{fn}' is not supported as a method")
            raise self.err(node, f"undeclared reference to '{fn}' (in container '')")
        return spec

    def global_function(self, node: Call) -> tuple[Callable[..., Any], str]:
        """A function called as ``f(args)``: its implementation and result type."""
        fn = node.function
        spec = GLOBAL_FUNCS.get(fn)
        if spec is None:
            if fn in KNOWN_UNSUPPORTED or fn in MEMBER_FUNCS:
                raise self.unsupported(node, f"function '{fn}' is not supported")
            raise self.err(node, f"undeclared reference to '{fn}' (in container '')")
        return spec
