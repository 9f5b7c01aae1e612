"""How a checked CEL syntax tree becomes Python closures that evaluate it.

An expression is compiled once into nested closures, each taking the activation (the variables'
values by name) and returning the node's value or raising :class:`CelError`; evaluating every
device of a large cluster per scheduling cycle is then a few Python calls per node rather than a
walk of the tree. The :class:`Compiler` walks the tree once, asking the
:class:`~kschedctl.kube.cel.checker.Checker` for each node's static type (which raises the
compile-time errors) and building the closure from the operators and the function library.

The closures carry CEL's error rules that are not plain function calls: ``&&`` and ``||``
absorb an error when the other side decides the result, ``all`` and ``exists`` do the same over
their elements, and the macros (``cel.bind``, the comprehensions) evaluate their bodies with the
macro variable added to the activation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kschedctl.kube.cel.checker import COMPREHENSIONS, DEVICE, Checker, static_of
from kschedctl.kube.cel.errors import NO_SUCH_OVERLOAD, CelError
from kschedctl.kube.cel.operators import (
    BINARY,
    as_bool,
    fmt_key,
    has_field,
    index_value,
    is_in,
    map_find,
    negate,
    select_field,
)
from kschedctl.kube.cel.syntax import Call, Ident, Index, ListLit, Lit, MapLit, Node, Select
from kschedctl.kube.cel.values import type_name

#: The variables' values by name while an expression is evaluated.
Act = dict[str, Any]
#: A compiled node: its value under an activation.
Fn = Callable[[Act], Any]


class Compiler:
    """Compiles the syntax tree of one expression into a closure and its static result type."""

    def __init__(self, src: str) -> None:
        self.check = Checker(src)

    def compile(self, node: Node) -> tuple[Fn, str]:
        """The closure evaluating ``node`` and the node's static type."""
        if isinstance(node, Lit):
            v = node.value
            return (lambda act: v), static_of(v)
        if isinstance(node, Ident):
            name = node.name
            return (lambda act: act[name]), self.check.ident(node)
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
                        raise CelError(f"Failed with repeated key: {fmt_key(k)}")
                    out[k] = vf(act)
                return out

            return make_map, "dyn"
        if isinstance(node, Call):
            return self._call(node)
        raise self.check.unsupported(node, "unsupported expression")

    def _select(self, node: Select) -> tuple[Fn, str]:
        field = node.field
        self.check.select_operand(node)
        of, ot = self.compile(node.operand)
        rt = self.check.select(node, ot)
        if ot == DEVICE:
            if node.test_only:
                return (lambda act: True), rt
            return (lambda act: of(act)[field]), rt
        if node.test_only:
            return (lambda act: has_field(of(act), field)), rt
        return (lambda act: select_field(of(act), field)), rt

    def _index(self, node: Index) -> tuple[Fn, str]:
        of, ot = self.compile(node.operand)
        xf, xt = self.compile(node.index)
        rt = self.check.index(node, ot, xt)
        return (lambda act: index_value(of(act), xf(act))), rt

    def _call(self, node: Call) -> tuple[Fn, str]:
        fn = node.function
        args = node.args
        tgt = node.target
        # ---- macros
        if fn == "has" and tgt is None:
            return self._select(self.check.has_macro(node))
        if tgt is not None and self.check.is_cel_namespace(tgt):
            var = self.check.cel_bind(node)
            init_f, _ = self.compile(args[1])
            with self.check.scope(var):
                body_f, body_t = self.compile(args[2])

            def bind(act: Act) -> Any:
                inner = dict(act)
                inner[var] = init_f(act)
                return body_f(inner)

            return bind, body_t
        if tgt is not None and fn in COMPREHENSIONS and len(args) in (2, 3):
            return self._comprehension(node, tgt)
        # ---- operators
        if fn == "_&&_" or fn == "_||_":
            return self._logical(node)
        if fn == "_?_:_":
            cf, ct = self.compile(args[0])
            af, at = self.compile(args[1])
            bf, bt = self.compile(args[2])
            rtype = self.check.operator(node, [ct, at, bt])

            def cond(act: Act) -> Any:
                c = cf(act)
                if not isinstance(c, bool):
                    raise CelError(NO_SUCH_OVERLOAD)
                return af(act) if c else bf(act)

            return cond, rtype
        if fn == "!_":
            f, t = self.compile(args[0])
            return (lambda act: not as_bool(f(act))), self.check.operator(node, [t])
        if fn == "-_":
            f, t = self.compile(args[0])
            return (lambda act: negate(f(act))), self.check.operator(node, [t])
        if fn in BINARY:
            return self._binary(node)
        if fn == "@in":
            lf, lt = self.compile(args[0])
            rf, rt = self.compile(args[1])
            return (lambda act: is_in(lf(act), rf(act))), self.check.operator(node, [lt, rt])
        # ---- functions
        return self._function(node)

    def _logical(self, node: Call) -> tuple[Fn, str]:
        lf, lt = self.compile(node.args[0])
        rf, rt = self.compile(node.args[1])
        rtype = self.check.operator(node, [lt, rt])
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

        return logical, rtype

    def _binary(self, node: Call) -> tuple[Fn, str]:
        lf, lt = self.compile(node.args[0])
        rf, rt = self.compile(node.args[1])
        op = BINARY[node.function]
        return (lambda act: op(lf(act), rf(act))), self.check.operator(node, [lt, rt])

    def _comprehension(self, node: Call, tgt: Node) -> tuple[Fn, str]:
        fn = node.function
        var = self.check.comprehension(node)
        rng_f, _ = self.compile(tgt)
        with self.check.scope(var):
            fs = [self.compile(a)[0] for a in node.args[1:]]

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
            return _quantifier(items, scope, pred, decisive=fn == "exists"), "bool"
        if fn == "exists_one":

            def exists_one(act: Act) -> Any:
                n = 0
                for v in items(act):
                    if as_bool(pred(scope(act, v))):
                        n += 1
                return n == 1

            return exists_one, "bool"
        if fn == "filter":

            def filt(act: Act) -> Any:
                return [v for v in items(act) if as_bool(pred(scope(act, v)))]

            return filt, "dyn"
        if len(fs) == 1:
            return (lambda act: [pred(scope(act, v)) for v in items(act)]), "dyn"
        transform = fs[1]

        def map_filter(act: Act) -> Any:
            out = []
            for v in items(act):
                inner = scope(act, v)
                if as_bool(pred(inner)):
                    out.append(transform(inner))
            return out

        return map_filter, "dyn"

    def _function(self, node: Call) -> tuple[Fn, str]:
        compiled = [self.compile(a) for a in node.args]
        arg_fs = [c[0] for c in compiled]
        if node.target is not None:
            tf, _tt = self.compile(node.target)
            impl, rtype = self.check.member_function(node)
            n = len(arg_fs)
            if n == 0:
                return (lambda act: impl(tf(act))), rtype
            if n == 1:
                a0 = arg_fs[0]
                return (lambda act: impl(tf(act), a0(act))), rtype
            return (lambda act: impl(tf(act), *[f(act) for f in arg_fs])), rtype
        gimpl, grtype = self.check.global_function(node)
        if len(arg_fs) == 1:
            a0 = arg_fs[0]
            return (lambda act: gimpl(a0(act))), grtype
        return (lambda act: gimpl(*[f(act) for f in arg_fs])), grtype


def _quantifier(
    items: Callable[[Act], list[Any]], scope: Callable[[Act, Any], Act], pred: Fn, decisive: bool
) -> Fn:
    """``all`` (decided by a false element) or ``exists`` (by a true one); an element's error is
    absorbed when another element decides the result, else the first error is raised."""

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

    return quantifier
