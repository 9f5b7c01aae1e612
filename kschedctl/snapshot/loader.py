"""Reading snapshots and pods from files: multi-document YAML, JSON, ``kind: List``, directories, stdin.

This is the file source of a Cluster. It uses PyYAML's C loader when available,
keeps timestamps as the strings the API server wrote, skips kinds the scheduler
does not read (with one note per kind on stderr) and reports malformed input as
one ``InputError`` naming the file, the document and the field.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kschedctl.errors import InputError
from kschedctl.snapshot.cluster import KNOWN_KINDS, Cluster
from kschedctl.snapshot.model import KubeObject, Node, Pod

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):
    """SafeLoader (C when available) that leaves timestamps as strings."""


_Loader.yaml_implicit_resolvers = {
    k: [r for r in v if r[0] != "tag:yaml.org,2002:timestamp"] for k, v in _BaseLoader.yaml_implicit_resolvers.items()
}

SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True, slots=True)
class Document:
    source: str
    index: int  # 1-based document number within the source
    obj: dict[str, Any]


def _read_text(path: str) -> tuple[str, str]:
    if path == "-":
        return "<stdin>", sys.stdin.read()
    try:
        return path, Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file or directory", source=path) from None
    except IsADirectoryError:
        raise InputError("is a directory", source=path) from None
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", source=path) from None
    except OSError as e:
        raise InputError(e.strerror or str(e), source=path) from None


def parse_documents(source: str, text: str) -> Iterator[Document]:
    """Yield the objects of one file, expanding ``kind: List`` (and ``*List``) items."""
    stripped = text.lstrip()
    docs: list[Any]
    if stripped.startswith("{") or stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}", source=source) from None
        docs = data if isinstance(data, list) else [data]
    else:
        try:
            docs = list(yaml.load_all(text, Loader=_Loader))
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
            problem = getattr(e, "problem", None) or str(e).splitlines()[0]
            raise InputError(f"invalid YAML{where}: {problem}", source=source) from None
    n = 0
    for doc in docs:
        if doc is None:
            continue
        n += 1
        if not isinstance(doc, dict):
            raise InputError("a document must be a Kubernetes object (a mapping)", source=source, document=n)
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
            item_kind = kind[: -len("List")] if kind != "List" else None
            for i, item in enumerate(doc["items"]):
                if not isinstance(item, dict):
                    raise InputError(f"items[{i}] must be a Kubernetes object", source=source, document=n)
                if item_kind and "kind" not in item:
                    item = {**item, "kind": item_kind}
                yield Document(source, n, item)
            continue
        yield Document(source, n, doc)


def iter_paths(paths: list[str]) -> Iterator[str]:
    for p in paths:
        if p != "-" and os.path.isdir(p):
            found = sorted(str(f) for f in Path(p).rglob("*") if f.is_file() and f.suffix in SUFFIXES)
            if not found:
                raise InputError("directory holds no .yaml, .yml or .json files", source=p)
            yield from found
        else:
            yield p


def iter_documents(paths: list[str]) -> Iterator[Document]:
    for path in iter_paths(paths):
        source, text = _read_text(path)
        yield from parse_documents(source, text)


def _describe(obj: dict[str, Any]) -> str:
    md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = md.get("name") if md else None
    ns = md.get("namespace") if md else None
    kind = obj.get("kind") or "object"
    return f"{kind} {ns + '/' if ns else ''}{name}" if name else str(kind)


def build_object(doc: Document) -> Node | Pod | KubeObject | None:
    """Parse one document into the model; None for kinds the scheduler does not read."""
    obj = doc.obj
    kind = obj.get("kind")
    if not kind or not isinstance(kind, str):
        raise InputError("document has no kind", source=doc.source, document=doc.index, field="kind")
    md = obj.get("metadata")
    if not isinstance(md, dict) or not md.get("name"):
        raise InputError(
            "document has no metadata.name", source=doc.source, document=doc.index, obj=kind, field="metadata.name"
        )
    if kind not in KNOWN_KINDS:
        return None
    try:
        if kind == "Node":
            return Node(obj)
        if kind == "Pod":
            return Pod(obj)
        return KubeObject(obj, kind, KNOWN_KINDS[kind])
    except InputError as e:
        raise e.located(source=doc.source, document=doc.index, obj=_describe(obj)) from None


def load_cluster(paths: list[str], *, warn: Callable[[str], None] | None = None) -> Cluster:
    """Load every object of the given files/directories ("-" = stdin) into a Cluster."""
    return build_cluster(iter_documents(paths), warn=warn)


def build_cluster(docs: Iterable[Document], *, warn: Callable[[str], None] | None = None) -> Cluster:
    """Build a Cluster from documents of any source (files, a live cluster's lists, recordings)."""
    cluster = Cluster()
    skipped: Counter[str] = Counter()
    for doc in docs:
        obj = build_object(doc)
        if obj is None:
            skipped[str(doc.obj.get("kind"))] += 1
        elif isinstance(obj, Node):
            cluster.add_node(obj)
        elif isinstance(obj, Pod):
            cluster.add_pod(obj)
        else:
            cluster.add_object(obj)
    cluster.finish()
    for kind, n in sorted(skipped.items()):
        note = f"skipped {n} {kind} object(s): kind not used by the scheduler"
        cluster.notes.append(note)
        if warn is not None:
            warn(note)
    return cluster


def load_pods(path: str) -> list[Pod]:
    """Every Pod in a file (``-o yaml`` of one pod, a List, or several documents)."""
    pods: list[Pod] = []
    for doc in iter_documents([path]):
        if doc.obj.get("kind") != "Pod":
            continue
        obj = build_object(doc)
        assert isinstance(obj, Pod)
        pods.append(obj)
    if not pods:
        raise InputError("no Pod object found", source="<stdin>" if path == "-" else path)
    return pods
