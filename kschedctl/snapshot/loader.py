"""Reading snapshots and pods from files: multi-document YAML, JSON, ``kind: List``, directories, stdin.

This is the file source of a Cluster. It uses PyYAML's C loader when available,
keeps timestamps as the strings the API server wrote, skips kinds the scheduler
does not read (with one note per kind on stderr) and reports malformed input as
one ``InputError`` naming the file, the document and the field.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from kschedctl.apivalidation import (
    api_version_error,
    first_error,
    json_kind_name,
    validate_object,
    validate_workload,
)
from kschedctl.errors import NESTED_TOO_DEEPLY, InputError, UsageError
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES
from kschedctl.snapshot import cache, forked, jsonlines, modelcache, vouch
from kschedctl.snapshot.apiversions import (
    drop_disabled_fields,
    dropped_field_note,
    dropped_fields,
    has_gated_field,
    served_hint,
    version_refusal,
)
from kschedctl.snapshot.bulk import FREEZE_DOCUMENTS, bulk_build
from kschedctl.snapshot.cluster import KNOWN_KINDS, SYSTEM_PRIORITY_CLASSES, Cluster
from kschedctl.snapshot.model import KubeObject, Node, Pod

SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True, slots=True)
class Document:
    source: str
    index: int  # 1-based document number within the source
    obj: dict[str, Any]
    #: The object passed load-time validation before (the same text, ``cache.validated``): not checked again.
    validated: bool = False
    #: The object's JSON text, when ``obj`` is what ``orjson.loads`` reads of it (a signed snapshot's line).
    text: str | None = None
    #: The Pod a forked process made of the object (``_PodHalf``; ``obj`` is then an empty mapping).
    made: Pod | None = None


#: The standard input stream already read by an option (``-f -`` and ``--snapshot -`` cannot share it).
_stdin_read: list[Any] = []


def read_stdin_once(*options: tuple[str, Iterable[str]]) -> None:
    """Refuse ``-`` (standard input) given to more than one option, or twice: it can be read only once."""
    readers = [opt for opt, paths in options for p in paths if p == "-"]
    if len(readers) > 1:
        shown = " and ".join(f"{opt} -" for opt in readers)
        raise UsageError(f"standard input can be read only once ({shown}): save one of them to a file")


def _read_stdin() -> str:
    if _stdin_read and _stdin_read[0] is sys.stdin:
        raise UsageError(
            "standard input (-) can be read only once: give - to either -f or --snapshot, and a file to the other"
        )
    _stdin_read[:] = [sys.stdin]
    return sys.stdin.read()


class _Text(NamedTuple):
    """A file's text as read (``_read_file``)."""

    source: str
    text: str
    key: str | None  # its key in the snapshot cache (``cache.key_of``)
    data: bytes | None  # its UTF-8 bytes, when the text was decoded from them as they are (else None)


#: A file's text read by a look at it (``streamable``), kept for the read that loads it next (taken once),
#: by path, with the file's ``_memo_key`` when read.
_KEPT: dict[str, tuple[tuple[Any, ...], _Text]] = {}
#: Each file's key in the snapshot cache as found in this process, by ``_memo_key``.
_KEYS: dict[tuple[Any, ...], str | None] = {}


def _memo_key(path: str, sig: tuple[int, int, int] | None) -> tuple[Any, ...] | None:
    """Where ``_KEYS`` holds the key of the file ``path`` as it is now (``sig``), with the cache's settings
    a key depends on (whether the cache is on, its smallest text); None: not kept."""
    return None if sig is None else (path, sig, cache.enabled(), cache.MIN_SIZE)


def _signature(path: str) -> tuple[int, int, int] | None:
    """What tells whether a file changed since it was read (None: it cannot be told, read it again)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _read_file(path: str, *, keep: bool = False) -> _Text:
    """A file's text and key ("-": standard input), read as ``Path.read_text`` reads it (UTF-8, universal
    newlines). ``keep``: kept for the next read of the same file, unless it changes meanwhile."""
    if path == "-":
        text = _read_stdin()
        return _Text("<stdin>", text, cache.key_of(text), None)
    _ahead()
    sig = _signature(path)
    memo = _memo_key(path, sig)
    kept = _KEPT.pop(path, None)
    if kept is not None and memo is not None and kept[0] == memo:
        if keep:
            _KEPT[path] = kept
        return kept[1]
    raw = _read_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", source=path) from None
    data: bytes | None = raw
    if "\r" in text:
        text, data = text.replace("\r\n", "\n").replace("\r", "\n"), None
    del raw
    key = _KEYS[memo] if memo in _KEYS else cache.key_of(text)  # (``_file_key``)
    read = _Text(path, text, key, data)
    if keep and memo is not None:
        _KEPT[path] = (memo, read._replace(data=None))
    return read


def _read_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError("no such file or directory", source=path) from None
    except IsADirectoryError:
        raise InputError("is a directory", source=path) from None
    except OSError as e:
        raise InputError(e.strerror or str(e), source=path) from None


#: The JSON decoder of a text whose keys are not checked, and JSON's whitespace (``json.loads``'s own).
_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")


class _Pairs(list[tuple[str, Any]]):
    """A JSON object's key/value pairs as written (to find where a key repeats)."""


def _dict_noting_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) < len(pairs):
        raise _RepeatedKey
    return d


class _RepeatedKey(Exception):
    """A JSON object sets a key twice."""


def _first_repeat(v: Any, path: str) -> str | None:
    """The path of the first key set twice, in the order a strict JSON decoder meets it."""
    if isinstance(v, _Pairs):
        seen: set[str] = set()
        for k, item in v:
            here = f"{path}.{k}" if path else k
            if k in seen:
                return here
            seen.add(k)
            found = _first_repeat(item, here)
            if found is not None:
                return found
    elif isinstance(v, list):
        for i, item in enumerate(v):
            found = _first_repeat(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def _repeated_key_error(source: str, text: str) -> InputError:
    """The API server's strict decoding error for the first repeated key (the text is parsed again,
    keeping every pair: this runs only when a key does repeat)."""
    data = json.loads(text, object_pairs_hook=_Pairs)
    docs = data if isinstance(data, list) and not isinstance(data, _Pairs) else [data]
    for n, doc in enumerate(docs, start=1):
        path = _first_repeat(doc, "")
        if path is not None:
            return InputError(
                f'strict decoding error: duplicate field "{path}" (kubectl and the API server reject duplicate keys)',
                source=source,
                document=n,
            )
    raise AssertionError("a repeated key was noted but not found")


def _parse_json(source: str, text: str, check_keys: bool = True, start: int = 0) -> list[Any]:
    """The objects of a JSON file, its text from ``start`` on (what is before, ``#`` comment lines, is not
    copied away: a line number in an error is still the file's). ``check_keys``: refuse a key set twice,
    as the API server's strict decoder does (off for a text that passed validation before: it costs a
    call per object)."""
    decoder = json.JSONDecoder(object_pairs_hook=_dict_noting_repeats) if check_keys else _DECODER
    try:  # json.loads, from ``start``
        data, end = decoder.raw_decode(text, _WHITESPACE.match(text, start).end())  # type: ignore[union-attr]
        end = _WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
        if end != len(text):
            raise json.JSONDecodeError("Extra data", text, end)
    except _RepeatedKey:
        raise _repeated_key_error(source, text[start:]) from None
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}", source=source) from None
    except RecursionError:
        raise InputError(f"invalid JSON: {NESTED_TOO_DEEPLY}", source=source) from None
    return data if isinstance(data, list) else [data]


def _after_comments(text: str) -> int | None:
    """Where a text starts after its ``#`` comment lines (and empty lines); None: it is all comments."""
    pos = 0
    while text.startswith("#", pos) or text.startswith("\n", pos):
        end = text.find("\n", pos)
        if end < 0:
            return None
        pos = end + 1
    return pos


def _json_behind_comments(source: str, text: str, validated: bool) -> list[Any] | None:
    """The objects of a YAML file that is JSON after its ``#`` comment lines (what ``kschedctl snapshot``
    writes: JSON is YAML's flow style), parsed as JSON; None for any other file, or one that is not
    valid JSON after all (the YAML parser reads it, and says what is wrong in YAML's terms)."""
    pos = _after_comments(text)
    if pos is None or not text.startswith("{", pos):
        return None
    try:
        return _parse_json(source, text, check_keys=not validated, start=pos)
    except InputError:
        return None


def _streamed(
    source: str, text: str, key: str | None, data: bytes | None = None, *, halves: bool = False
) -> Iterator[jsonlines.Item] | None:
    """The objects of a snapshot file kschedctl wrote (``key``: its text's; ``data``: its bytes, when at hand),
    decoded a line at a time as they are taken (``jsonlines``), each with its line (``jsonlines.Item``); None
    when the text is not such a List. ``halves``: the pods of the text's second half may come made, by a
    forked process (``_PodHalf``), when that pays."""
    pos = _after_comments(text)
    if pos is None:
        return None
    pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]

    def whole() -> list[Any]:
        docs = _parse_json(source, text, check_keys=False, start=pos)
        items = docs[0].get("items") if len(docs) == 1 and isinstance(docs[0], dict) else None
        if not isinstance(items, list):
            raise InputError("the List's items must be a list of objects", source=source, document=1)
        return items

    half = _PodHalf() if halves and len(text) >= jsonlines.SPLIT and forked.pays() else None
    found = jsonlines.listed_items(
        text, pos, whole, lambda: _fact(key, "long", lambda: jsonlines.has_long_run(text, data)), half
    )
    if found is None:
        return None
    head, items = found
    return _flattened(head["kind"], items, source, 1, "items")


#: The object of a Document whose Pod came made (``Document.made``).
_MADE: dict[str, Any] = {}


class _PodHalf:
    """The pods a forked process makes of the second half of a signed snapshot's items (``jsonlines.Half``):
    a v1 Pod that shows no gate and that no gate changes (``apiversions``) reads the same whatever the run's
    version, and no other check applies to a signed snapshot's objects (``_as_read``). Any other item, and a
    pod whose reading fails (to be said here), is taken here as it is."""

    def __init__(self) -> None:
        self._quantities: dict[int, tuple[int, Fraction]] = {}
        self._fractions: list[Fraction] | None = None
        self._shapes: dict[bytes, Any] = {}

    def make(self, value: dict[str, Any], line: str) -> tuple[Any, ...] | None:
        if not _plain_pod(value):
            return None
        pod = Pod.from_raw(value)
        pod.pack(line)
        state = pod.state(self._quantities)
        return None if state is None else (None, *state[1:])  # (the line is in the text this process has too)

    def shared(self) -> Any:
        return [(q.numerator, q.denominator) for _, q in self._quantities.values()]

    def made(self, state: tuple[Any, ...], shared: Any, line: str) -> Pod:
        if self._fractions is None:
            self._fractions = [Fraction(n, d) for n, d in shared]
        return Pod.from_state((line, *state[1:]), self._fractions, self._shapes)


def _plain_pod(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is a v1 Pod with a name that has none of the fields gates drop (``drop_disabled_fields``)
    or show (``gates_shown``)."""
    md, spec = obj.get("metadata"), obj.get("spec")
    return (
        obj.get("kind") == "Pod"
        and obj.get("apiVersion") == "v1"
        and isinstance(md, dict)
        and bool(md.get("name"))
        and isinstance(spec, dict)
        and not has_gated_field(spec)
    )


def _parse_yaml(source: str, text: str, key: str | None) -> Iterator[Any]:
    """Each document of a YAML stream; a duplicate key, like a syntax error, is an InputError.

    The YAML ``kubectl get -o yaml`` writes is read by ``simpleyaml`` (same objects, much faster; a big
    text by two processes at once, ``splityaml``), any other by PyYAML. A stream read to its end
    without error goes to the snapshot cache; one found there is served from it (``snapshot/cache.py``)."""
    from kschedctl.snapshot import splityaml, yamldocs  # (only for YAML: a signed snapshot is JSON)

    cached = cache.read(key)
    if cached is not None:
        yield from cached
        return
    simple = splityaml.load(text)
    if simple is not None:
        yield from simple
        cache.write(key, simple)
        return
    loader = yamldocs.FastLoader(text)
    loader.duplicates = []
    n = 0
    docs: list[Any] = []
    try:
        while loader.check_data():
            doc = loader.get_data()
            if doc is not None:
                n += 1
            if loader.duplicates:
                line, key = loader.duplicates[0]
                raise InputError(
                    f'line {line}: key "{key}" already set in map (kubectl and the API server reject duplicate keys)',
                    source=source,
                    document=max(n, 1),
                )
            docs.append(doc)
            yield doc
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(f"invalid YAML{where}: {problem}", source=source) from None
    except RecursionError:
        raise InputError(f"invalid YAML: {NESTED_TOO_DEEPLY}", source=source) from None
    finally:
        loader.dispose()
    cache.write(key, docs)  # reached only when every document was read without error


def parse_documents(
    source: str, text: str, key: str | None = None, data: bytes | None = None, *, made: bool = False
) -> Iterator[Document]:
    """Yield the objects of one file, expanding ``kind: List`` (and ``*List``) items (``key``: the
    text's key in the snapshot cache, and ``data``: its UTF-8 bytes, when the caller has them). ``made``:
    a signed snapshot's pods may come made (``Document.made``), by a second process."""
    if key is None:
        key = cache.key_of(text)
    validated = _trusted(key, text, data)
    streamed = _streamed(source, text, key, data, halves=made) if validated else None
    if streamed is not None:
        for obj, line in streamed:
            if isinstance(obj, Pod):
                yield Document(source, 1, _MADE, True, made=obj)
            else:
                yield Document(source, 1, obj, True, line)
        return
    stripped = text.lstrip()
    docs: Iterable[Any]
    if stripped.startswith("{") or stripped.startswith("["):
        docs = _parse_json(source, text, check_keys=not validated)
    else:
        behind = _json_behind_comments(source, text, validated)
        docs = _parse_yaml(source, text, key) if behind is None else behind
    n = 0
    for doc in docs:
        if doc is None:
            continue
        n += 1
        if not isinstance(doc, dict):
            raise InputError("a document must be a Kubernetes object (a mapping)", source=source, document=n)
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List"):
            for obj, _ in _list_items(doc, source, n):
                yield Document(source, n, obj, validated)
        else:
            yield Document(source, n, doc, validated)


def _list_items(doc: dict[str, Any], source: str, n: int, where: str = "") -> Iterator[jsonlines.Item]:
    """The items of a ``kind: List`` (``*List``) document, Lists inside it flattened as kubectl flattens
    them (``where``: the path of a nested List's items)."""
    items = doc.get("items")
    path = f"{where}items"
    if not isinstance(items, list):
        if items is None:
            return  # an empty List
        raise InputError(
            f"must be a list of objects, not {json_kind_name(items)}", source=source, document=n, obj=doc["kind"], field=path
        )
    yield from _flattened(doc["kind"], ((item, None) for item in items), source, n, path)


def _flattened(kind: str, items: Iterable[jsonlines.Item], source: str, n: int, path: str) -> Iterator[jsonlines.Item]:
    """The objects of a ``kind`` List's ``items`` (at ``path``), inner Lists flattened; each with its JSON
    text, when known and still what it reads as (``jsonlines.Item``)."""
    item_kind = kind[: -len("List")] if kind != "List" else None
    for i, (item, text) in enumerate(items):
        if isinstance(item, Pod):  # (made: ``_PodHalf``)
            yield item, None
            continue
        if not isinstance(item, dict):
            raise InputError(f"{path}[{i}] must be a Kubernetes object", source=source, document=n)
        if item_kind and "kind" not in item:
            item, text = {**item, "kind": item_kind}, None
        inner = item.get("kind")
        if isinstance(inner, str) and inner.endswith("List"):
            yield from _list_items(item, source, n, f"{path}[{i}].")
        else:
            yield item, text


def iter_paths(paths: list[str]) -> Iterator[str]:
    for p in paths:
        if p != "-" and os.path.isdir(p):
            found = sorted(_files_under(p))
            if not found:
                raise InputError("directory holds no .yaml, .yml or .json files", source=p)
            yield from found
        else:
            yield p


def _raise(e: OSError) -> None:
    raise InputError((e.strerror or str(e)).lower(), source=e.filename or None) from None


def _files_under(directory: str) -> Iterator[str]:
    """The snapshot files under a directory; one that cannot be listed is an error, not skipped."""
    for root, _, files in os.walk(directory, onerror=_raise):
        for f in files:
            path = os.path.join(root, f)
            if os.path.splitext(f)[1] in SUFFIXES and os.path.isfile(path):
                yield path


def iter_documents(paths: list[str], keys: list[str | None] | None = None, *, made: bool = False) -> Iterator[Document]:
    """The objects of every file (``keys``: where to note each file's key in the snapshot cache; ``made``: pods
    may come made, ``parse_documents``)."""
    for path in iter_paths(paths):
        read = _read_file(path)
        if keys is not None:
            keys.append(read.key)
        yield from parse_documents(read.source, read.text, read.key, read.data, made=made)
        del read


def _describe(obj: dict[str, Any]) -> str:
    """``Kind ns/name`` for messages (a very long name is cut: the field's own message shows it whole)."""
    md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = md.get("name") if md else None
    ns = md.get("namespace") if md else None
    kind = obj.get("kind") or "object"
    if not name:
        return str(kind)
    shown = f"{ns}/{name}" if ns else str(name)
    return f"{kind} {shown[:80] + '…' if len(shown) > 81 else shown}"


def build_object(
    doc: Document, *, validate: bool = True, features: Features = DEFAULT_FEATURES
) -> Node | Pod | KubeObject | None:
    """Parse one document into the model; None for kinds the scheduler does not read.

    ``validate``: first check the object as the API server would on create (objects read
    from a live cluster have passed that already). ``features``: the version whose API
    machinery reads it (an API version it does not serve is refused, fields of gates that are
    off are dropped).
    """
    read = _as_read(doc, validate=validate, features=features)
    if read is None:
        return None
    if validate and not read.validated:
        check_object(read, features=features)
    return _model_of(read)


def _as_read(doc: Document, *, validate: bool, features: Features) -> Document | None:
    """The document as ``features``' API machinery reads it (the fields of gates that are off dropped),
    after the checks every object gets (a kind, a name, an apiVersion served); None for kinds the
    scheduler does not read."""
    obj = doc.obj
    kind = obj.get("kind")
    if not kind or not isinstance(kind, str):
        raise InputError("Required value: every object needs a kind", source=doc.source, document=doc.index, field="kind")
    md = obj.get("metadata")
    if md is not None and not isinstance(md, dict):
        raise InputError(
            f"must be a mapping, not {json_kind_name(md)}", source=doc.source, document=doc.index, obj=kind, field="metadata"
        )
    if not isinstance(md, dict) or not md.get("name"):
        raise InputError(
            "Required value: name or generateName is required",
            source=doc.source,
            document=doc.index,
            obj=kind,
            field="metadata.name",
        )
    refused = version_refusal(kind, obj.get("apiVersion"), features, listed=not validate)
    if refused is not None:
        raise InputError(refused, source=doc.source, document=doc.index, obj=_describe(obj), field="apiVersion")
    if kind not in KNOWN_KINDS:
        return None
    obj = drop_disabled_fields(kind, obj, features)
    return doc if obj is doc.obj else Document(doc.source, doc.index, obj, doc.validated)


def _model_of(doc: Document) -> Node | Pod | KubeObject:
    """The model of a document ``_as_read`` gave."""
    obj = doc.obj
    kind = obj["kind"]
    try:
        if kind == "Node":
            return Node(obj)
        if kind == "Pod":
            return Pod.from_raw(obj)
        return KubeObject(obj, kind, KNOWN_KINDS[kind])
    except InputError as e:
        raise e.located(source=doc.source, document=doc.index, obj=_describe(obj)) from None


def check_object(doc: Document, *, workload: bool = False, features: Features = DEFAULT_FEATURES) -> None:
    """Raise the API server's complaint about this object (apiVersion, then validation), if any; an
    apiVersion it does not serve is refused with what ``features``' release serves the kind as."""
    obj = doc.obj
    kind = str(obj.get("kind"))
    bad_version = api_version_error(kind, obj.get("apiVersion"), served_hint(kind, features))
    if bad_version is not None:
        raise InputError(bad_version, source=doc.source, document=doc.index, obj=_describe(obj), field="apiVersion")
    errs = validate_workload(kind, obj) if workload else validate_object(kind, obj, minor=features.minor)
    if errs:
        raise InputError(first_error(errs), source=doc.source, document=doc.index, obj=_describe(obj))


def load_cluster(
    paths: list[str],
    *,
    warn: Callable[[str], None] | None = None,
    features: Features = DEFAULT_FEATURES,
    read: tuple[list[Document], list[str | None]] | None = None,
    files: modelcache.Files | None = None,
    look: Callable[[Mapping[str, Any]], None] | None = None,
) -> Cluster:
    """Load every object of the given files/directories ("-" = stdin) into a Cluster.

    Every object passed validation once the cluster is built: that verdict is kept per file
    content (``cache.mark_validated``) for the next load of the same text, and so is the Cluster
    (``snapshot/modelcache.py``: a load of the same texts with the same ``features`` reads no document).
    ``features``: the version whose API machinery reads the objects (``build_object``). ``read``: the
    documents ``read_documents`` gave for these paths, when a look at them came first; ``files``:
    ``file_keys(paths)``, when the caller has it. ``look``: shown each object as stored, in order, as
    the Cluster is built of it (the files are read then, not found in the snapshot cache).

    Many documents read first are checked by a forked process while this one builds the model of them
    (``_CheckedAside``; not those of standard input: should that process die, the files are read
    again and checked here)."""
    if files is None:
        files = file_keys(paths)
    if read is None:
        cluster = modelcache.read_cluster(files, features, warn) if look is None else None
        if cluster is not None:
            return cluster
        keys: list[str | None] = []
        docs = iter_documents(paths, keys, made=True)
        cluster = load_documents(docs if look is None else _shown(docs, look), keys, warn=warn, features=features)
    else:
        keys = read[1]
        try:
            cluster = load_documents(read[0], keys, warn=warn, features=features, aside="-" not in paths)
        except forked.ChildLost:
            keys = []
            cluster = load_documents(iter_documents(paths, keys), keys, warn=warn, features=features)
    if files is not None and [key for _, key in files] == keys:  # (a file changed since: nothing kept)
        modelcache.write_cluster(files, features, cluster)
    return cluster


def _shown(docs: Iterator[Document], look: Callable[[Mapping[str, Any]], None]) -> Iterator[Document]:
    """The documents, each shown to ``look`` as it is taken."""
    for doc in docs:
        look(doc.obj)
        yield doc


def file_keys(paths: list[str]) -> modelcache.Files | None:
    """Each file's (source name, key in the snapshot cache) in the order a load reads them; None when
    one is standard input or the cache is off (nothing is kept of such a load)."""
    if not cache.enabled() or "-" in paths:
        return None
    out: modelcache.Files = []
    for path in iter_paths(paths):
        out.append((path, _file_key(path)))
    return out


def _file_key(path: str) -> str | None:
    """The key of the text of the file ``path`` (not standard input): from its bytes when that is the
    same key (``cache.key_of_file``: no decoding and encoding again of a big file), else of its text. A
    file that is not UTF-8 may get a key here: its load fails as ever, and nothing is stored under it."""
    _ahead()
    memo = _memo_key(path, _signature(path))
    if memo in _KEYS:
        return _KEYS[memo]
    try:
        key = cache.key_of_file(Path(path).read_bytes())
    except OSError:
        key = None  # (reading it as text says what is wrong)
    if key is None:
        key = _read_file(path).key
    if memo is not None:
        _KEYS[memo] = key
    return key


#: The forked process of ``look_ahead``, until its answer is taken (``_ahead``).
_AHEAD: list[forked.Child] = []


def look_ahead(paths: list[str]) -> None:
    """Have a forked process find what a load asks of the files of ``paths`` first (each one's key in the
    snapshot cache, whether it is a signed snapshot, whether it holds long numbers: ``_file_key``,
    ``vouch.vouched``, ``jsonlines.has_long_run``) while this process goes on setting its command up (the
    plugins, the configuration); the answers are taken when first needed (``_ahead``). Only for files
    of ``jsonlines.SPLIT`` or more in all, with the snapshot cache on, when a fork pays."""
    if _AHEAD or "-" in paths or not cache.enabled():
        return
    try:
        files = list(iter_paths(paths))
        if sum(os.path.getsize(f) for f in files) < jsonlines.SPLIT or not forked.pays():
            return
        _AHEAD.append(forked.Child(lambda answer: answer(_facts_of(files))))
    except (InputError, OSError):  # (the load says what is wrong)
        return


def _facts_of(files: list[str]) -> list[tuple[str, tuple[int, int, int], str, bool, bool | None]]:
    """In ``look_ahead``'s process: each file's path, ``_signature``, key, whether it is vouched for and (when
    it is) whether it holds long numbers; a file that cannot be read, or has no key, is left out."""
    out = []
    for path in files:
        sig = _signature(path)
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        key = cache.key_of_file(data)  # (None: the text is not its bytes as they are; found by the load)
        if sig is None or key is None:
            continue
        head = data[: 4 * vouch.HEAD].decode("utf-8", "ignore")  # (where the digest and the items' start are)
        vouched = vouch.vouched(head, data)
        out.append((path, sig, key, vouched, jsonlines.has_long_run(head, data) if vouched else None))
    return out


def _ahead() -> None:
    """Take the answers of ``look_ahead``'s process, if it was started (waiting for them), as if found here."""
    while _AHEAD:
        child = _AHEAD.pop()
        try:
            facts = child.answer()
        except forked.ChildLost:
            facts = None
        finally:
            child.wait()
        for path, sig, key, vouched, long in facts if isinstance(facts, list) else ():
            memo = _memo_key(path, sig)
            if memo is not None:
                _KEYS[memo] = key
            _FACTS[key, "vouched"] = vouched
            if long is not None:
                _FACTS[key, "long"] = long


def streamable(paths: list[str]) -> bool:
    """Whether every file of ``paths`` is a snapshot kschedctl wrote that is read a line at a time
    (``_streamed``): reading it again costs little, and its documents need not be kept between two reads."""
    for path in iter_paths(paths):
        if path == "-":
            return False
        read = _read_file(path, keep=True)
        if not _trusted(read.key, read.text, read.data) or _streamed(read.source, read.text, read.key, read.data) is None:
            return False
    return True


#: What was found of the texts read in this process (``_fact``), by text key and question.
_FACTS: dict[tuple[str, str], bool] = {}


def _fact(key: str | None, question: str, answer: Callable[[], bool]) -> bool:
    """``answer()`` of a text, found once per text in this process (``key``: its cache key; None: not kept).
    Commands that look at the objects before they load them read a text twice."""
    if key is None:
        return answer()
    found = _FACTS.get((key, question))
    if found is None:
        found = _FACTS[key, question] = answer()
    return found


def _trusted(key: str | None, text: str, data: bytes | None = None) -> bool:
    """Whether the objects of ``text`` (its cache key ``key``; ``data``: its bytes, when at hand) need no
    validation: they passed it before, or the text is a signed snapshot (``vouch``)."""
    return cache.validated(key) or _fact(key, "vouched", lambda: vouch.vouched(text, data))


def read_documents(paths: list[str]) -> tuple[list[Document], list[str | None]]:
    """Every document of the given files, read now (for a look before ``load_documents`` builds the Cluster),
    and each file's key in the snapshot cache."""
    keys: list[str | None] = []
    with bulk_build():
        return list(iter_documents(paths, keys)), keys


def load_documents(
    docs: Iterable[Document],
    keys: list[str | None],
    *,
    warn: Callable[[str], None] | None = None,
    features: Features = DEFAULT_FEATURES,
    aside: bool = False,
) -> Cluster:
    """``load_cluster`` of documents already read (``keys``: their files' cache keys, complete once ``docs``
    is exhausted). A list of documents is emptied as the Cluster is built of them. ``aside``: a list of
    more than ``forked.MANY`` documents may be checked by a forked process (``_CheckedAside``) when that
    pays (``forked.pays``); ``forked.ChildLost`` when it ended without answering."""
    if isinstance(docs, list):
        checker = None
        if aside and len(docs) > forked.MANY and not all(d.validated for d in docs) and forked.pays():
            with contextlib.suppress(OSError):  # (no process to fork: checked here)
                checker = _CheckedAside(docs, features)
        try:
            with bulk_build(freeze=len(docs) > FREEZE_DOCUMENTS):
                cluster = _build_cluster(_drained(docs), warn, True, features, checker)
        except BaseException as e:
            if checker is not None:
                checker.close(stop=not isinstance(e, Exception))
            raise
        if checker is not None:
            checker.close(stop=False)
    else:
        with bulk_build():
            cluster = build_cluster(docs, warn=warn, features=features)
    for key in keys:
        cache.mark_validated(key)
    return cluster


def _drained(docs: list[Document]) -> Iterator[Document]:
    """The documents of a list, in order, each let go of by the list as it is taken (what the model
    does not keep of it is freed as the Cluster is built, not all at the end)."""
    docs.reverse()
    while docs:
        yield docs.pop()


def build_cluster(
    docs: Iterable[Document],
    *,
    warn: Callable[[str], None] | None = None,
    validate: bool = True,
    features: Features = DEFAULT_FEATURES,
) -> Cluster:
    """Build a Cluster from documents of any source (files, a live cluster's lists, recordings).

    ``validate``: reject objects the API server would refuse (off for what a live API server returned).
    """
    return _build_cluster(docs, warn, validate, features, None)


def _build_cluster(
    docs: Iterable[Document],
    warn: Callable[[str], None] | None,
    validate: bool,
    features: Features,
    aside: _CheckedAside | None,
) -> Cluster:
    """``build_cluster``; ``aside``: the documents' load-time validation is done there (by a forked
    process), not here. An error building a document is raised after asking it for an error of one
    before (or of the same: validation comes first), so that the first error in the documents' order
    is the one raised, as in one process; its error, once every document is built."""
    cluster = Cluster()
    skipped: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    node_files: dict[str, str] = {}  # where each Node and Pod was read (validate: two of one name)
    pod_files: dict[str, str] = {}
    replaced: list[str] = []
    check = validate and aside is None
    for position, doc in enumerate(docs):
        try:
            made = doc.made
            if made is not None:  # (checked and read as below, where it was made)
                if validate:
                    _note_repeat(pod_files, made.key, made, doc, replaced)
                cluster.add_pod(made)
                continue
            read = _as_read(doc, validate=validate, features=features)
            if read is None:
                skipped[str(doc.obj.get("kind"))] += 1
                continue
            if check and not read.validated:
                check_object(read, features=features)
            obj = _model_of(read)
            if isinstance(obj, Node):
                if validate:
                    _note_repeat(node_files, obj.name, obj, doc, replaced)
                cluster.add_node(obj)
            elif isinstance(obj, Pod):
                if validate:
                    _note_repeat(pod_files, obj.key, obj, doc, replaced)
                if read is not doc:  # (fields dropped)
                    dropped.update(dropped_fields(doc.obj, read.obj))
                cluster.add_pod(obj)
                obj.pack(doc.text if read is doc else None)
            else:
                cluster.add_object(obj)
        except Exception:
            if aside is not None:
                aside.raise_first(position)
            raise
    if aside is not None:
        aside.raise_first(None)
    default_namespaces(cluster)
    cluster.finish()
    notes = [f"skipped {n} {kind} object(s): kind not used by the scheduler" for kind, n in sorted(skipped.items())]
    notes.extend(replaced)
    notes.extend(dropped_field_note(n, features, name, listed=not validate) for name, n in dropped.items())
    notes.extend(admission_notes(cluster))
    for note in notes:
        cluster.notes.append(note)
        if warn is not None:
            warn(note)
    return cluster


class _CheckedAside:
    """The load-time validation of a list of documents done by a forked process (which sees them through
    the fork: nothing is sent) while this one builds the model of them. It checks each document as
    ``build_object`` would, in order, and answers the position of the first one that fails, with its
    error, or that every one passed. ``forked.ChildLost`` when it ended without answering."""

    def __init__(self, docs: list[Document], features: Features) -> None:
        self._child = forked.Child(lambda answer: answer(_first_invalid(docs, features)))

    def raise_first(self, position: int | None) -> None:
        """Raise the error of the first document that failed validation, when it is at ``position`` or
        before (None: wherever it is)."""
        found = self._child.answer()
        if isinstance(found, BaseException):  # (the process failed outside any document's check)
            raise forked.ChildLost(f"the checking process failed: {found}")
        if found is not None and (position is None or found[0] <= position):
            raise found[1] from None

    def close(self, stop: bool) -> None:
        self._child.wait(stop)


def _first_invalid(docs: list[Document], features: Features) -> tuple[int, BaseException] | None:
    """The position of the first document whose load-time validation fails, with its error (what
    ``build_object`` raises before it builds the model)."""
    for position, doc in enumerate(docs):
        try:
            read = _as_read(doc, validate=True, features=features)
            if read is not None and not read.validated:
                check_object(read, features=features)
        except Exception as e:
            return position, e
    return None


def _note_repeat(files: dict[str, str], key: str, obj: Node | Pod, doc: Document, replaced: list[str]) -> None:
    """Remember where the Node or Pod ``key`` was read (``files``), noting in ``replaced`` one read before."""
    first = files.get(key)
    files[key] = doc.source
    if first is not None:
        replaced.append(_same_name(obj, doc, first))


def _same_name(obj: Node | Pod, doc: Document, first: str) -> str:
    """A second Node (or Pod) of one name: in the file of the first, the API server's AlreadyExists; in
    a file given after it, that one is used (as if the files were applied in order): the note saying so."""
    kind, key, resource = ("Node", obj.name, "nodes") if isinstance(obj, Node) else ("Pod", obj.key, "pods")
    if first == doc.source:
        raise InputError(
            f'{resource} "{obj.name}" already exists', source=doc.source, document=doc.index, obj=_describe(doc.obj)
        )
    return f"{kind} {key} is in both {first} and {doc.source}: the one in {doc.source} (given later) is used"


NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
#: Namespaces every cluster has (the API server creates them).
SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


def _add_namespace(cluster: Cluster, name: str) -> None:
    raw = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {NAMESPACE_NAME_LABEL: name}}}
    cluster.add_object(KubeObject(raw, "Namespace", False))


def default_namespaces(cluster: Cluster) -> None:
    """The API server's Namespace defaulting, and the Namespaces a snapshot's pods imply.

    Every Namespace carries the label ``kubernetes.io/metadata.name`` with its own name (set on
    create, whatever the manifest says), which is what namespaceSelectors usually match. A pod
    can only exist in an existing namespace, so one a snapshot's pods use but the file leaves
    out is added with that label alone (snapshots often omit Namespaces).
    """
    for ns in cluster.of_kind("Namespace"):
        ns.meta.labels[NAMESPACE_NAME_LABEL] = ns.name
    used = {pod.namespace for pod in cluster.pods}
    for name in sorted(used):
        if cluster.get("Namespace", "", name) is None:
            _add_namespace(cluster, name)


def _admitted_priority(cluster: Cluster, pod: Pod) -> int | None:
    """The priority the Priority admission plugin computes for a new pod; None: its class does not exist."""
    name = pod.priority_class_name
    if name:
        pc = cluster.get("PriorityClass", "", name)
        if pc is None:
            return SYSTEM_PRIORITY_CLASSES.get(name)
        return int(pc.raw.get("value") or 0)
    defaults = [c for c in cluster.of_kind("PriorityClass") if c.raw.get("globalDefault")]
    return max((int(c.raw.get("value") or 0) for c in defaults), default=0)


def admit_pod(cluster: Cluster, pod: Pod, source: str | None = None) -> list[str]:
    """What the API server would do with ``pod`` created now: refuse it (InputError) or admit it (notes).

    For the pod being explained, which must be created in the cluster the snapshot describes:
    the Priority admission plugin refuses a PriorityClass that does not exist and a
    ``spec.priority`` that differs from its class's value, but a priority given by hand is how
    people ask "what if this pod had priority N", so that is a note; a namespace that does not
    exist refuses the pod too, but snapshots often leave Namespaces out, so that is a note and
    the namespace is assumed (with its default label).
    """
    obj = f"Pod {pod.key}"
    priority = _admitted_priority(cluster, pod)
    if priority is None:
        raise InputError(
            f'pods "{pod.name}" is forbidden: no PriorityClass with name {pod.priority_class_name} was found',
            source=source,
            obj=obj,
            field="spec.priorityClassName",
        )
    notes: list[str] = []
    spec = pod.raw.get("spec")
    given = spec.get("priority") if isinstance(spec, dict) else None
    if isinstance(given, int) and not isinstance(given, bool) and given != priority:
        notes.append(
            f"{pod.key}: the API server would refuse spec.priority {given} (the integer value of priority must not be "
            f"provided in pod spec; priority admission controller computed {priority} from the given PriorityClass "
            f"name); explained with priority {given} as given"
        )
    if cluster.get("Namespace", "", pod.namespace) is None:
        if pod.namespace not in SYSTEM_NAMESPACES:
            notes.append(
                f'namespace "{pod.namespace}" is not in the snapshot: the API server would refuse {pod.key} until it exists; '
                f"explained as if it existed (labels: {NAMESPACE_NAME_LABEL}={pod.namespace})"
            )
        _add_namespace(cluster, pod.namespace)
    return notes


def admission_notes(cluster: Cluster) -> list[str]:
    """What the Priority admission plugin would have refused for pods already in the snapshot.

    The API server rejects a pod naming a PriorityClass that does not exist, so a pod in a
    snapshot that names a missing one was created before the class was deleted (or written by
    hand). The scheduler uses its ``spec.priority``; when that is unset too, 0 is assumed.
    """
    missing: Counter[str] = Counter()
    example: dict[str, str] = {}
    for pod in cluster.pods:
        name = pod.priority_class_name
        if name and cluster.get("PriorityClass", "", name) is None and name not in SYSTEM_PRIORITY_CLASSES:
            spec = pod.raw.get("spec")
            if not isinstance(spec, dict) or spec.get("priority") is None:
                missing[name] += 1
                example.setdefault(name, pod.key)
    return [
        f"{n} pod(s) (e.g. {example[name]}) name PriorityClass {name!r}, which is not in the snapshot, and have no "
        "spec.priority: their priority is taken as 0"
        for name, n in sorted(missing.items())
    ]


def load_pods(path: str, *, validate: bool = True, features: Features = DEFAULT_FEATURES) -> list[Pod]:
    """Every Pod in a file (``-o yaml`` of one pod, a List, or several documents)."""
    pods: list[Pod] = []
    for doc in iter_documents([path]):
        kind = doc.obj.get("kind")
        if kind != "Pod" and kind and isinstance(kind, str):  # an object without a kind: build_object says so
            continue
        obj = build_object(doc, validate=validate, features=features)
        assert isinstance(obj, Pod)
        pods.append(obj)
    if not pods:
        raise InputError("no Pod object found", source="<stdin>" if path == "-" else path)
    return pods
