"""Change the data of a YAML file and keep the rest of its text: comments, key order, quoting and styles.

``check --update`` rewrites expectations that people wrote by hand and annotated with comments.
PyYAML drops comments when it loads, so dumping the changed data would lose them. Instead the
file is composed into nodes, which know where in the text each value starts and ends, and only
the text of the values that changed is replaced (and the lines of keys that went away are
removed). A change that cannot be made in place (a key added, a list that changed length, a key
removed from a flow mapping ``{a: 1}``) rewrites the smallest value around it instead. The edited
text is loaded again and must give exactly the new data; when it does not, the whole document is
written anew (its leading comment lines kept), and the caller is told that comments were lost.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

#: (start, end, replacement) in the text.
Edit = tuple[int, int, str]
_CLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_WIDE = 1 << 30


class _Dumper(yaml.SafeDumper):
    """Strings with line breaks double-quoted (``"a\\nb"``): one line, whatever the indentation around them."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = '"' if any(c in data for c in "\n\r\x85\u2028\u2029") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


def flow(value: Any) -> str:
    """``value`` as flow YAML on one line, quoted as a flow collection needs (``[a, b]``, ``{k: v}``, ``'a, b'``)."""
    text = yaml.dump([value], Dumper=_Dumper, default_flow_style=True, width=_WIDE, allow_unicode=True, sort_keys=False)
    return str(text).strip()[1:-1]


def block(value: Any, column: int) -> str:
    """A non-empty collection as block YAML whose first line starts at ``column`` (already indented)."""
    text = yaml.dump(value, Dumper=_Dumper, default_flow_style=False, width=_WIDE, allow_unicode=True, sort_keys=False)
    return ("\n" + " " * column).join(str(text).rstrip("\n").split("\n"))


def _is_flow(node: Node) -> bool:
    return isinstance(node, ScalarNode) or bool(getattr(node, "flow_style", False))


class _Document:
    """One composed document: its nodes, their values, and the edits that turn it into new data."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._loader = yaml.SafeLoader(text)  # the pure-Python parser: its marks count characters
        root = self._loader.get_single_node()
        self._loader.dispose()
        if root is None:
            raise yaml.YAMLError("an empty document")
        self.root: Node = root

    def value(self, node: Node) -> Any:
        return self._loader.construct_object(node, deep=True)

    def content_end(self, node: Node) -> int:
        """Where the node's own text ends (a block collection: its last value; not the comments after it)."""
        while isinstance(node, MappingNode | SequenceNode) and not node.flow_style and node.value:
            last = node.value[-1]
            node = last[1] if isinstance(node, MappingNode) else last
        return int(node.end_mark.index)

    def edits(self, node: Node, old: Any, new: Any) -> list[Edit] | None:
        """Edits that turn ``node`` (holding ``old``) into ``new`` inside it; None when it must be replaced whole."""
        if type(old) is type(new) and old == new:
            return []
        if isinstance(node, MappingNode) and isinstance(old, dict) and isinstance(new, dict) and new:
            return self._mapping_edits(node, old, new)
        if isinstance(node, SequenceNode) and isinstance(old, list) and isinstance(new, list) and new and len(old) == len(new):
            out: list[Edit] = []
            for item, o, n in zip(node.value, old, new, strict=True):
                e = self.edits(item, o, n)
                e = e if e is not None else self.replace(item, None, n)
                if e is None:
                    return None
                out.extend(e)
            return out
        return None

    def _mapping_edits(self, node: MappingNode, old: dict[Any, Any], new: dict[Any, Any]) -> list[Edit] | None:
        if list(new) != [k for k in old if k in new]:
            return None  # a key added, or the order changed
        out: list[Edit] = []
        for key_node, value_node in node.value:
            key = self.value(key_node)
            if key not in new:
                e = self.delete(node, key_node, value_node)
            else:
                e = self.edits(value_node, old[key], new[key])
                e = e if e is not None else self.replace(value_node, key_node, new[key])
            if e is None:
                return None
            out.extend(e)
        return out

    def replace(self, node: Node, key: Node | None, value: Any) -> list[Edit] | None:
        """The node's text replaced by ``value``: flow where it was flow, block (same column) where it was block."""
        if isinstance(node, ScalarNode) and node.style in ("|", ">"):
            return None
        start = int(node.start_mark.index)
        if _is_flow(node):
            return [(start, int(node.end_mark.index), flow(value))]
        end = self.content_end(node)
        if isinstance(value, dict | list) and value:
            return [(start, end, block(value, int(node.start_mark.column)))]
        if key is None:  # an item of a block sequence: after its "- "
            return [(start, end, flow(value))]
        colon = self.text.find(":", int(key.end_mark.index))
        if colon < 0 or colon > start:
            return None
        return [(colon + 1, end, " " + flow(value))]

    def delete(self, mapping: MappingNode, key: Node, value: Node) -> list[Edit] | None:
        """The lines of ``key: value`` removed from a block mapping (with a comment at the end of its last line)."""
        if mapping.flow_style:
            return None
        line_start = int(key.start_mark.index) - int(key.start_mark.column)
        if self.text[line_start : key.start_mark.index].strip():
            return None  # the first key of a list item ("- key: ..."): its line holds more
        newline = self.text.find("\n", self.content_end(value))
        return [(line_start, len(self.text) if newline < 0 else newline + 1, "")]


def _apply(text: str, edits: list[Edit]) -> str | None:
    out = text
    limit = len(text)
    for start, end, replacement in sorted(edits, reverse=True):
        if end > limit:
            return None  # overlapping edits
        out = out[:start] + replacement + out[end:]
        limit = start
    return out


def _loads(text: str) -> Any:
    try:
        return yaml.load(text, Loader=_CLoader)
    except yaml.YAMLError:
        return _Unloadable


class _Unloadable:
    """Compares unequal to any data."""


def _leading_comments(text: str) -> str:
    lines = []
    for line in text.splitlines(keepends=True):
        if line.strip() and not line.lstrip().startswith("#"):
            break
        lines.append(line)
    return "".join(lines)


def edit_yaml(text: str, new: Any) -> tuple[str, bool]:
    """``text`` changed so that it loads as ``new``, and whether everything else of it (comments, layout) was kept."""
    try:
        doc = _Document(text)
        edits = doc.edits(doc.root, doc.value(doc.root), new)
    except yaml.YAMLError:
        edits = None
    if edits is not None:
        out = _apply(text, edits)
        if out is not None and _loads(out) == new:
            return out, True
    dumped = yaml.dump(new, Dumper=_Dumper, default_flow_style=False, width=_WIDE, allow_unicode=True, sort_keys=False)
    return _leading_comments(text) + str(dumped), False
