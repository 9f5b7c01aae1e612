"""YAML documents of a snapshot: PyYAML's rules, built faster.

Snapshots are read with PyYAML's safe loader (its C parser when available), with two
changes: timestamps stay the strings the API server wrote, and keys set twice in a mapping
are noted (the loader reports them as kubectl would). On a large snapshot most of
the time goes to PyYAML's Python-level tag resolution and construction, not to
libyaml, so ``FastLoader`` keeps the same parser and rules and takes two shortcuts:

* the implicit tag of a plain scalar depends only on its text, so it is computed once
  per distinct text of a stream (snapshots repeat the same values thousands of times);
* a document made of mappings, sequences and the core scalar tags (str, int, float,
  bool, null) is built by a direct walk over the composed nodes, which also keeps one
  string object per distinct text (as ``json`` does for keys: far less memory). A document
  with anything else — explicit tags (``!!binary``, ``!!set``, unknown ones), merge keys
  (``<<``), ``=`` keys, keys that are not scalars — is built by PyYAML's own constructor,
  whole (so that its errors come in PyYAML's order), and a stream that may hold anchors
  (a ``&`` that could start one) is built by PyYAML alone, so shared and recursive nodes
  come out exactly as PyYAML makes them.

``ReferenceLoader`` is the plain PyYAML path; ``tests/test_yamldocs.py`` checks on random
documents that both give the same objects, types included.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
#: YAML 1.1's "=" (a "value" key) has no constructor in PyYAML's safe loader, which refused a plain
#: ``x: =``; Kubernetes' YAML reader (sigs.k8s.io/yaml) takes it as the string "=".
_VALUE = "tag:yaml.org,2002:value"

#: Where an anchor can start: at the start of a line or after blank space or a flow/block indicator.
_MAYBE_ANCHOR = re.compile(r"(?:^|[\s\[\]{},:?\-])&[^\s]", re.MULTILINE)


class ReferenceLoader(_BaseLoader):
    """PyYAML's SafeLoader (C when available) that leaves timestamps as strings and notes duplicate keys.

    kubectl and the API server reject a mapping that sets a key twice; PyYAML keeps the last
    value silently. Detecting it costs one length comparison per mapping: the constructed dict
    is shorter than the node's key list only when a key repeats (``<<`` merges are told apart
    because PyYAML builds a new key list for them and deletes the merge keys from the old one).
    The caller sets ``duplicates`` to a list; (line, key) pairs are appended to it.
    """

    duplicates: list[tuple[int, str]]

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        own = node.value
        n = len(own)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        if len(mapping) < n or node.value is not own:
            self._note_duplicates(own)
        return mapping

    def _note_duplicates(self, pairs: list[tuple[Any, Any]]) -> None:
        seen: set[Any] = set()
        for key_node, _ in pairs:
            key = self.construct_object(key_node)
            try:
                if key in seen:
                    self.duplicates.append((key_node.start_mark.line + 1, str(key)))
                seen.add(key)
            except TypeError:
                continue


ReferenceLoader.yaml_implicit_resolvers = {
    k: [r for r in v if r[0] not in (_TIMESTAMP, _VALUE)] for k, v in _BaseLoader.yaml_implicit_resolvers.items()
}


class FastLoader(ReferenceLoader):
    """``ReferenceLoader`` with memoized scalar resolution and a direct builder (same results)."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._tags: dict[str, str] = {}
        self._strings: dict[str, str] = {}
        self._plain_resolver = not self.yaml_path_resolvers
        if self._plain_resolver:
            # Without path resolvers the composer's per-node descend/ascend calls have nothing to
            # do; builtins that take their arguments and do nothing cost less than a Python method.
            self.descend_resolver = operator.is_
            self.ascend_resolver = tuple
        text = stream if isinstance(stream, str) else ""
        self._direct = bool(text) and self._plain_resolver and ("&" not in text or not _MAYBE_ANCHOR.search(text))
        self._scalars: dict[str, Callable[[ScalarNode], Any]] = {
            _INT: self.construct_yaml_int,
            _FLOAT: self.construct_yaml_float,
            _BOOL: self.construct_yaml_bool,
            _NULL: self.construct_yaml_null,
        }

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if not self._plain_resolver:
            return str(super().resolve(kind, value, implicit))
        if kind is ScalarNode:
            if not implicit[0]:
                return _STR
            tag = self._tags.get(value)
            if tag is None:
                tag = self._tags[value] = super().resolve(kind, value, implicit)
            return tag
        return _MAP if kind is MappingNode else _SEQ

    def construct_document(self, node: Node) -> Any:
        if self._direct:
            try:
                return self._build(node)
            except _NotPlain:
                pass  # PyYAML builds this document, with its own order of construction and errors
        return super().construct_document(node)

    def _build(self, node: Node) -> Any:
        cls = type(node)
        tag = node.tag
        if cls is ScalarNode:
            if tag == _STR:
                text = node.value
                return self._strings.setdefault(text, text)  # one object per distinct string
            make = self._scalars.get(tag)
            if make is None:
                raise _NotPlain
            return make(node)  # type: ignore[arg-type]
        if cls is SequenceNode and tag == _SEQ:
            build = self._build
            return [build(item) for item in node.value]
        if cls is MappingNode and tag == _MAP:
            out: dict[Any, Any] = {}
            pairs = node.value
            for key_node, value_node in pairs:
                if type(key_node) is not ScalarNode or (key_node.tag != _STR and key_node.tag not in self._scalars):
                    raise _NotPlain  # merge keys, '=' keys, keys that are not scalars
                out[self._build(key_node)] = self._build(value_node)
            if len(out) < len(pairs):
                raise _NotPlain  # a duplicate key: noted in PyYAML's order of construction
            return out
        raise _NotPlain


class _NotPlain(Exception):
    """A node only PyYAML's own constructor builds."""


def load_all(text: str, *, fast: bool = True) -> list[Any]:
    """Every document of a YAML stream (``yaml.load_all`` with the loaders above; duplicate keys
    are not reported here)."""
    loader = (FastLoader if fast else ReferenceLoader)(text)
    loader.duplicates = []
    try:
        out = []
        while loader.check_data():
            out.append(loader.get_data())
        return out
    finally:
        loader.dispose()
