"""Label selectors and node selectors with the API machinery's exact semantics.

Several plugins (NodeAffinity, InterPodAffinity, PodTopologySpread, VolumeBinding,
default spreading) match labels; they must all agree on the corner cases, so the
matching lives here once:

* a *nil* ``metav1.LabelSelector`` matches nothing, an *empty* one matches everything;
* ``NotIn`` and ``DoesNotExist`` match objects that lack the key;
* a ``NodeSelectorTerm`` with no requirements matches no node, terms are ORed;
* ``Gt``/``Lt`` compare integers (Go ``strconv.ParseInt`` syntax) and never match
  a non-integer label;
* a node selector term whose requirements would not parse (bad label key or value,
  unknown operator, wrong number of values, ``matchFields`` that is not In/NotIn
  with one value) never matches; it is kept, with its errors, because some callers
  report them (NodeAffinity's preferred terms) while others ignore them (required
  terms), as component-helpers' ``nodeaffinity`` package does;
* ``matchFields`` compares against the node's field set, which only has
  ``metadata.name``: any other key reads as the empty string.

Upstream model: ``k8s.io/apimachinery pkg/labels/selector.go and k8s.io/component-helpers scheduling/corev1/nodeaffinity/nodeaffinity.go``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kschedctl.errors import InputError
from kschedctl.kube.names import label_value_errors, parse_go_int64
from kschedctl.kube.names import qualified_name_errors as label_key_errors

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _go_quote(s: str) -> str:
    """Go's ``%q`` for the strings that appear in selector errors (printable ASCII in practice)."""
    out = []
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _go_string_slice(values: tuple[str, ...] | None) -> str:
    """Go's ``%#v`` of a ``[]string`` (None stands for a nil slice)."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(_go_quote(v) for v in values) + "}"


def aggregate_error_message(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as is, several de-duplicated in brackets."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if not seen:
        return ""
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


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
            have = parse_go_int64(labels[self.key])
            want = parse_go_int64(self.values[0])
            if have is None or want is None:
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
        op = {"In": "in", "NotIn": "notin", "Gt": ">", "Lt": "<"}.get(self.operator, self.operator)
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
    """One term of a NodeSelector: all expressions and fields must match.

    ``errors`` holds what component-helpers would report while parsing the term, as
    (path inside the term, message) pairs; a term with errors never matches.
    """

    expressions: tuple[Requirement, ...] = ()
    fields: tuple[Requirement, ...] = ()
    valid: bool = True
    errors: tuple[tuple[str, str], ...] = ()

    @property
    def is_empty(self) -> bool:
        """No expressions and no fields: such a term selects nothing and is skipped."""
        return not self.expressions and not self.fields

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if not self.valid or (not self.expressions and not self.fields):
            return False
        for r in self.expressions:
            if not r.matches(labels):
                return False
        if self.fields and node_name:
            # The node's field set has only metadata.name; any other key reads as "".
            for r in self.fields:
                have = node_name if r.key == "metadata.name" else ""
                equal = bool(r.values) and have == r.values[0]
                if equal != (r.operator == "In"):
                    return False
        return True

    def error_messages(self, path: str) -> list[str]:
        """The parse errors as Go prints them, ``path`` being where the term sits (may be "")."""
        return [f"{path}.{where}: {msg}" if path else f"{where}: {msg}" for where, msg in self.errors]


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """``v1.NodeSelector``: the terms are ORed."""

    terms: tuple[NodeSelectorTerm, ...] = field(default_factory=tuple)

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return any(t.matches(labels, node_name) for t in self.terms)

    def error_messages(self, path: str = "") -> list[str]:
        """Parse errors of the non-empty terms (``nodeaffinity.NewNodeSelector``)."""
        base = f"{path}.nodeSelectorTerms" if path else "nodeSelectorTerms"
        out: list[str] = []
        for i, t in enumerate(self.terms):
            if not t.is_empty:
                out.extend(t.error_messages(f"{base}[{i}]"))
        return out


_SUPPORTED_NODE_OPS = ", ".join(f'"{op}"' for op in NODE_OPERATORS)


def _node_requirement_errors(
    key: str, op: str, values: tuple[str, ...], values_nil: bool, where: str, is_field: bool
) -> list[tuple[str, str]]:
    """Errors component-helpers reports for one requirement (labels.NewRequirement / field selector rules)."""
    bad_values = _go_string_slice(None if values_nil else values)
    if is_field:
        if op in ("In", "NotIn"):
            if len(values) != 1:
                return [(f"{where}.values", f"Invalid value: {bad_values}: must have one element")]
            return []
        return [(f"{where}.operator", f'Unsupported value: {_go_quote(op)}: supported values: "In", "NotIn"')]
    if op not in NODE_OPERATORS:
        return [(f"{where}.operator", f"Unsupported value: {_go_quote(op)}: supported values: {_SUPPORTED_NODE_OPS}")]
    errs: list[tuple[str, str]] = []
    key_errs = label_key_errors(key)
    if key_errs:
        errs.append((f"{where}.key", f"Invalid value: {_go_quote(key)}: {'; '.join(key_errs)}"))
    if op in ("In", "NotIn"):
        if not values:
            errs.append(
                (f"{where}.values", f"Invalid value: {bad_values}: for 'in', 'notin' operators, values set can't be empty")
            )
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                (f"{where}.values", f"Invalid value: {bad_values}: values set must be empty for exists and does not exist")
            )
    else:  # Gt, Lt
        if len(values) != 1:
            errs.append(
                (f"{where}.values", f"Invalid value: {bad_values}: for 'Gt', 'Lt' operators, exactly one value is required")
            )
        for i, v in enumerate(values):
            if parse_go_int64(v) is None:
                errs.append(
                    (
                        f"{where}.values[{i}]",
                        f"Invalid value: {_go_quote(v)}: for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    for i, v in enumerate(values):
        v_errs = label_value_errors(v)
        if v_errs:
            errs.append((f"{where}.values[{i}][{key}]", f"Invalid value: {_go_quote(v)}: {'; '.join(v_errs)}"))
    return errs


def _parse_node_requirement(raw: Any, path: str, where: str, is_field: bool) -> tuple[Requirement, list[tuple[str, str]]]:
    if not isinstance(raw, dict):
        raise InputError("must be a node selector requirement", field=path)
    key = str(raw.get("key") or "")
    op = str(raw.get("operator") or "")
    raw_values = raw.get("values")
    values = _as_str_list(raw_values, f"{path}.values")
    return Requirement(key, op, values), _node_requirement_errors(key, op, values, raw_values is None, where, is_field)


def parse_node_selector_term(raw: Any, path: str) -> NodeSelectorTerm:
    """Parse a term; requirements that component-helpers would reject make the term invalid, not an error."""
    if raw is None:
        return NodeSelectorTerm()
    if not isinstance(raw, dict):
        raise InputError("must be a node selector term", field=path)
    errors: list[tuple[str, str]] = []
    exprs: list[Requirement] = []
    for i, e in enumerate(raw.get("matchExpressions") or []):
        r, errs = _parse_node_requirement(e, f"{path}.matchExpressions[{i}]", f"matchExpressions[{i}]", False)
        exprs.append(r)
        errors.extend(errs)
    flds: list[Requirement] = []
    for i, e in enumerate(raw.get("matchFields") or []):
        r, errs = _parse_node_requirement(e, f"{path}.matchFields[{i}]", f"matchFields[{i}]", True)
        flds.append(r)
        errors.extend(errs)
    return NodeSelectorTerm(tuple(exprs), tuple(flds), not errors, tuple(errors))


def parse_node_selector(raw: Any, path: str) -> NodeSelector:
    if raw is None:
        return NodeSelector()
    if not isinstance(raw, dict):
        raise InputError("must be a node selector", field=path)
    terms = raw.get("nodeSelectorTerms") or []
    return NodeSelector(tuple(parse_node_selector_term(t, f"{path}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms)))


_SELECTOR_TERM_RE = re.compile(
    r"^\s*(?:(?P<not>!)\s*(?P<nkey>[^\s!=(),]+)"
    r"|(?P<key>[^\s!=(),]+)\s*(?:(?P<op>==|!=|=)\s*(?P<value>[^\s!=(),]*)"
    r"|\s+(?P<setop>in|notin)\s*\((?P<values>[^()]*)\))?)\s*$"
)


def parse_selector_string(text: str) -> Selector:
    """A kubectl ``-l/--selector`` string (``labels.Parse``): ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``,
    ``k notin (a,b)``, ``k``, ``!k``, comma-separated and ANDed. Raises InputError naming the bad term."""
    terms: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    reqs: list[Requirement] = []
    for term in terms:
        if not term.strip():
            if len(terms) == 1:
                return EVERYTHING
            raise InputError(f"invalid selector {text!r}: empty term")
        m = _SELECTOR_TERM_RE.match(term)
        if m is None:
            raise InputError(f"invalid selector {text!r}: cannot parse {term.strip()!r}")
        key = m["nkey"] or m["key"]
        errs = label_key_errors(key)
        if errs:
            raise InputError(f"invalid selector {text!r}: key {key!r}: {errs[0]}")
        if m["not"]:
            reqs.append(Requirement(key, "DoesNotExist"))
        elif m["op"]:
            reqs.append(Requirement(key, "NotIn" if m["op"] == "!=" else "In", (m["value"],)))
        elif m["setop"]:
            values = tuple(v.strip() for v in m["values"].split(",") if v.strip())
            reqs.append(Requirement(key, "In" if m["setop"] == "in" else "NotIn", values))
        else:
            reqs.append(Requirement(key, "Exists"))
    return Selector(tuple(reqs))
