"""The snapshot cache's second layer: the Cluster a set of files built, not the documents they hold.

Loading a large snapshot again from cached documents (``snapshot/cache.py``) still parses every
pod into the model: on 150,000 pods that was most of a warm explain. Once a Cluster has been built
from files whose texts all have cache keys, what it holds is stored too, under a key made of those
texts' keys, the files' names, the ``Features`` the objects were read with and a digest of the code
that reads them (``MODEL_PACKAGES``: a change of it is a new key, never a stale model): pods as the
plain values ``Pod.state`` gives (quantities as indexes into one table, a pod's affinity and spread
constraints pickled: the entry is the user's own file, in a directory only they can write, and its
digest is checked before anything of it is read), nodes and other objects as their manifests and
metadata, and the notes the build made. Read back, the same Cluster is made without reading a document. The
entry is checked like any cache entry (magic string, the payload's SHA-256; anything wrong: built
again from the files). Beside it, the gates a files' objects show (``Source.shown_gates``) per
``Features``, so that a warm load does not read the documents for that either. A big Cluster is
stored by a forked process while the command goes on to use it (``forked``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import pickle
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

from kschedctl.kube.features import Features
from kschedctl.snapshot import cache, forked
from kschedctl.snapshot.bulk import bulk_build
from kschedctl.snapshot.cluster import KNOWN_KINDS, Cluster
from kschedctl.snapshot.model import KubeObject, Node, Pod, meta_of, meta_state

FORMAT = 1
HEADER = ("kschedctl-model", FORMAT)
#: The packages whose code decides what Cluster a text builds (parsing, defaulting, validation).
MODEL_PACKAGES = ("snapshot", "kube", "apivalidation")
#: Pods per stored chunk: a chunk is decoded, made into pods and let go of before the next.
CHUNK = 5000

#: Each file's (source name, text key) in the order a load reads them (``loader.file_keys``).
Files = list[tuple[str, str | None]]


@functools.lru_cache(maxsize=1)
def _code_digest() -> str:
    """A digest of the code that builds a Cluster (and of the versions the document cache's key names);
    "" when the sources cannot be read."""
    package = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(f"{FORMAT}|{cache.entry_path('x').name}".encode())
    files = [package / "errors.py"]
    for name in MODEL_PACKAGES:
        files.extend(sorted((package / name).rglob("*.py")))
    for f in files:
        try:
            h.update(f.relative_to(package).as_posix().encode() + b"\0" + f.read_bytes())
        except OSError:  # no sources to tell versions apart: no model is kept
            return ""
    return h.hexdigest()[:16]


def _key(kind: str, files: Files, features: Features) -> str | None:
    digest = _code_digest()
    if not digest or not files or any(k is None for _, k in files):
        return None
    text = repr((kind, digest, features.minor, features.release, sorted(features.gates.items()), files))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _path(key: str, suffix: str) -> Path:
    return cache.cache_dir() / f"{key}.{suffix}"


def read_gates(files: Files | None, features: Features) -> dict[str, str] | None:
    """The gates the files' objects show (``gates_shown``), as found before for the same texts and ``features``."""
    key = None if files is None else _key("gates", files, features)
    if key is None:
        return None
    value = cache.read_entry(_path(key, "gates"))
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return None
    return value


def write_gates(files: Files | None, features: Features, gates: dict[str, str]) -> None:
    key = None if files is None else _key("gates", files, features)
    if key is not None:
        cache.write_entry(_path(key, "gates"), dict(gates), "*.gates")


def read_cluster(files: Files | None, features: Features, warn: Callable[[str], None] | None) -> Cluster | None:
    """The Cluster stored for these files and ``features`` (its notes passed to ``warn`` as a build
    would), or None."""
    key = None if files is None else _key("model", files, features)
    if key is None:
        return None
    with bulk_build(freeze=True):  # millions of objects, none of them garbage (``snapshot/bulk.py``)
        records = cache.read_records(_path(key, "model"))
        try:
            cluster = None if records is None else _decode(records)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, EOFError, ImportError,
                pickle.UnpicklingError):  # not an entry this code wrote
            return None
        del records
    if cluster is not None and warn is not None:
        for note in cluster.notes:
            warn(note)
    return cluster


def write_cluster(files: Files | None, features: Features, cluster: Cluster) -> None:
    """Store what ``cluster`` holds for the next load of the same files with ``features`` (a cluster
    holding a value that cannot be stored is not); a big one in a forked process while this one goes
    on, when that pays (``forked.run_in_background``)."""
    key = None if files is None else _key("model", files, features)
    if key is None:
        return
    path = _path(key, "model")

    def write() -> None:
        with bulk_build(), contextlib.suppress(TypeError, pickle.PicklingError):  # (what it makes lives briefly)
            cache.write_records(path, _encode(cluster), "*.model")

    if len(cluster.pods) + len(cluster.terminal_pods) + len(cluster.nodes) > forked.MANY:
        forked.run_in_background(write)
    else:
        write()


def _encode(cluster: Cluster) -> Iterator[tuple[Any, ...]]:
    """The entry's records: a header; the pods in chunks, each with the quantities first named in it;
    the nodes; the other objects by kind; the notes; an end mark."""
    yield HEADER
    quantities: dict[int, tuple[int, Fraction]] = {}
    for part, pods in (("pods", cluster.pods), ("terminal", cluster.terminal_pods)):
        for start in range(0, len(pods), CHUNK):
            known = len(quantities)
            states = [_pod_state(p, quantities) for p in pods[start : start + CHUNK]]
            new = [(q.numerator, q.denominator) for _, q in list(quantities.values())[known:]]
            yield (part, new, states)
    for start in range(0, len(cluster.nodes), CHUNK):
        yield ("nodes", [(n.raw, meta_state(n.meta)) for n in cluster.nodes[start : start + CHUNK]])
    for kind, objs in cluster.objects.items():
        yield ("objects", kind, [(o.raw, meta_state(o.meta)) for o in objs])
    yield ("notes", list(cluster.notes))
    yield ("end",)


def _pod_state(pod: Pod, quantities: dict[int, tuple[int, Fraction]]) -> tuple[Any, ...]:
    state = pod.state(quantities)
    if state is None:
        raise TypeError("a pod with a PodInfo")  # not one a build makes: nothing is kept
    return state


def _decode(records: Iterator[Any]) -> Cluster | None:
    """The Cluster of an entry's records (None: not this format, or cut short)."""
    if next(records, None) != HEADER:
        return None
    quantities: list[Fraction] = []
    shapes: dict[bytes, Any] = {}
    cluster = Cluster()
    targets = {"pods": cluster.pods, "terminal": cluster.terminal_pods}
    for record in records:
        part = record[0]
        if part in targets:
            quantities.extend(Fraction(n, d) for n, d in record[1])
            targets[part].extend(Pod.from_state(s, quantities, shapes) for s in record[2])
        elif part == "nodes":
            for raw, meta in record[1]:
                cluster.add_node(Node.from_state(raw, meta_of(meta)))
        elif part == "objects":
            namespaced = KNOWN_KINDS[record[1]]
            cluster.objects.setdefault(record[1], [])  # a kind listed with no object stays listed
            for raw, meta in record[2]:
                obj = KubeObject(raw, record[1], namespaced)
                obj.meta = meta_of(meta)
                cluster.add_object(obj)
        elif part == "notes":
            cluster.notes.extend(record[1])
        elif part == "end":
            cluster._pods_by_key = {f"{p.meta.namespace}/{p.meta.name}": p for p in cluster.pods}  # (Pod.key)
            return cluster
        else:
            return None
    return None
