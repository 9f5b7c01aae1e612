"""Label selectors and node selectors with the API machinery's exact semantics.

Several plugins (NodeAffinity, InterPodAffinity, PodTopologySpread, VolumeBinding,
default spreading) match labels; they must all agree on the corner cases, so the
matching lives here once:

* a *nil* ``metav1.LabelSelector`` matches nothing, an *empty* one matches everything;
* ``NotIn`` and ``DoesNotExist`` match objects that lack the key;
* a ``NodeSelectorTerm`` with no requirements matches no node, terms are ORed;
* ``Gt``/``Lt`` compare integers and never match a non-integer label.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kschedctl.errors import InputError

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if op in ("Gt", "Lt"):
            if self.key not in labels or len(self.values) != 1:
                return False
            try:
                have = int(labels[self.key])
                want = int(self.values[0])
            except ValueError:
                return False
            return have > want if op == "Gt" else have < want
        return False

    def __str__(self) -> str:
        if self.operator == "Exists":
            return self.key
        if self.operator == "DoesNotExist":
            return f"!{self.key}"
        if self.operator == "In" and len(self.values) == 1:
            return f"{self.key}={self.values[0]}"
        if self.operator == "NotIn" and len(self.values) == 1:
            return f"{self.key}!={self.values[0]}"
        op = {"In": "in", "NotIn": "notin", "Gt": ">", "Lt": "<"}[self.operator]
        if self.operator in ("Gt", "Lt"):
            return f"{self.key}{op}{self.values[0] if self.values else ''}"
        return f"{self.key} {op} ({','.join(sorted(self.values))})"


@dataclass(frozen=True, slots=True)
class Selector:
    """A compiled label selector. ``nothing`` selectors never match."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.nothing and not self.requirements

    def with_requirements(self, extra: Iterable[Requirement]) -> Selector:
        if self.nothing:
            return self
        return Selector(self.requirements + tuple(extra))

    def __str__(self) -> str:
        if self.nothing:
            return "<none>"
        if not self.requirements:
            return "<everything>"
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = Selector()
NOTHING = Selector(nothing=True)


def _as_str_list(values: Any, where: str) -> tuple[str, ...]:
    if values is None:
        return ()
    if not isinstance(values, list):
        raise InputError("must be a list of strings", field=where)
    return tuple(str(v) for v in values)


def parse_label_selector(raw: Any, where: str = "labelSelector") -> Selector:
    """``metav1.LabelSelectorAsSelector``: None -> nothing, {} -> everything."""
    if raw is None:
        return NOTHING
    if not isinstance(raw, dict):
        raise InputError("must be a label selector object", field=where)
    reqs: list[Requirement] = []
    match_labels = raw.get("matchLabels") or {}
    if not isinstance(match_labels, dict):
        raise InputError("must be a map of strings", field=f"{where}.matchLabels")
    for k in sorted(match_labels):
        reqs.append(Requirement(str(k), "In", (str(match_labels[k]),)))
    for i, expr in enumerate(raw.get("matchExpressions") or []):
        path = f"{where}.matchExpressions[{i}]"
        if not isinstance(expr, dict) or "key" not in expr:
            raise InputError("must have a key and an operator", field=path)
        op = expr.get("operator")
        if op not in LABEL_OPERATORS:
            raise InputError(f"{op!r} is not a valid label selector operator", field=f"{path}.operator")
        values = _as_str_list(expr.get("values"), f"{path}.values")
        if op in ("In", "NotIn") and not values:
            raise InputError("for 'in', 'notin' operators, values set can't be empty", field=f"{path}.values")
        if op in ("Exists", "DoesNotExist") and values:
            raise InputError("values set must be empty for exists and does not exist", field=f"{path}.values")
        reqs.append(Requirement(str(expr["key"]), op, values))
    return Selector(tuple(reqs))


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """``labels.SelectorFromSet``: an exact-match selector (empty set -> everything)."""
    return Selector(tuple(Requirement(k, "In", (v,)) for k, v in sorted(labels.items())))


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """One term of a NodeSelector: all expressions and fields must match."""

    expressions: tuple[Requirement, ...] = ()
    fields: tuple[Requirement, ...] = ()
    valid: bool = True

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if not self.valid or (not self.expressions and not self.fields):
            return False
        for r in self.expressions:
            if not r.matches(labels):
                return False
        if self.fields:
            fields = {"metadata.name": node_name}
            for r in self.fields:
                if not r.matches(fields):
                    return False
        return True


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """``v1.NodeSelector``: the terms are ORed."""

    terms: tuple[NodeSelectorTerm, ...] = field(default_factory=tuple)

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return any(t.matches(labels, node_name) for t in self.terms)


def _parse_node_requirement(raw: Any, path: str, is_field: bool) -> tuple[Requirement, bool]:
    if not isinstance(raw, dict):
        raise InputError("must be a node selector requirement", field=path)
    key = str(raw.get("key", ""))
    op = raw.get("operator")
    values = _as_str_list(raw.get("values"), f"{path}.values")
    if op not in NODE_OPERATORS:
        raise InputError(f"{op!r} is not a valid node selector operator", field=f"{path}.operator")
    valid = True
    if is_field:
        # Only metadata.name with In/NotIn and exactly one value is allowed.
        valid = key == "metadata.name" and op in ("In", "NotIn") and len(values) == 1
    elif op in ("In", "NotIn"):
        valid = len(values) > 0
    elif op in ("Exists", "DoesNotExist"):
        valid = len(values) == 0
    elif op in ("Gt", "Lt"):
        valid = len(values) == 1
        if valid:
            try:
                int(values[0])
            except ValueError:
                valid = False
    return Requirement(key, op, values), valid


def parse_node_selector_term(raw: Any, path: str) -> NodeSelectorTerm:
    if raw is None:
        return NodeSelectorTerm()
    if not isinstance(raw, dict):
        raise InputError("must be a node selector term", field=path)
    valid = True
    exprs: list[Requirement] = []
    for i, e in enumerate(raw.get("matchExpressions") or []):
        r, ok = _parse_node_requirement(e, f"{path}.matchExpressions[{i}]", False)
        exprs.append(r)
        valid = valid and ok
    flds: list[Requirement] = []
    for i, e in enumerate(raw.get("matchFields") or []):
        r, ok = _parse_node_requirement(e, f"{path}.matchFields[{i}]", True)
        flds.append(r)
        valid = valid and ok
    return NodeSelectorTerm(tuple(exprs), tuple(flds), valid)


def parse_node_selector(raw: Any, path: str) -> NodeSelector:
    if raw is None:
        return NodeSelector()
    if not isinstance(raw, dict):
        raise InputError("must be a node selector", field=path)
    terms = raw.get("nodeSelectorTerms") or []
    return NodeSelector(tuple(parse_node_selector_term(t, f"{path}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms)))
