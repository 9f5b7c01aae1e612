"""Where a Cluster comes from: snapshot files or a live API server.

The CLI asks a ``Source`` for a Cluster and never cares which kind it holds. The
live source (``kschedctl.snapshot.live``) receives the API server's list answers
as raw dictionaries; this module turns those into ``Document``s for the loader's
``build_cluster``, so every source builds its Cluster through the same model
constructors and the same defaulting.

It also owns the two things a snapshot must agree on whatever wrote it: the
table of API resources kube-scheduler reads (``RESOURCES``, which the read-only
ClusterRole in ``deploy/`` grants) and the redaction of secret material.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from kschedctl.errors import InputError, UsageError
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES

if TYPE_CHECKING:  # the model and the loader are imported where a Cluster is built: ``snapshot`` does without
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.snapshot.loader import Document
    from kschedctl.snapshot.modelcache import Files

#: A progress report while listing: (resource, items so far, expected total or None when unknown).
Progress = Callable[[str, int, int | None], None]
#: A note for the user (a kind the server does not serve, a skipped kind).
Warn = Callable[[str], None]

#: The annotation on a snapshot's ``kind: List`` that records the API server's version (``kschedctl
#: snapshot`` writes it; a List's metadata is not sent to the server by ``kubectl apply``, so it is harmless).
SERVER_VERSION_ANNOTATION = "kschedctl.io/server-version"
#: Where a snapshot file says its server's version: the annotation above (its value quoted or not), or the
#: header line older snapshots have ("# kschedctl snapshot of ..., Kubernetes v1.36.2"). Looked for in the
#: file's head; whatever the value is, ``recorded_version`` then checks it.
_ANNOTATION_IN_FILE = re.compile(
    r"""kschedctl\.io/server-version["']?[ \t]*:[ \t]*(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s,}\]#]*))"""
)
_HEADER_IN_FILE = re.compile(r"^#\s*kschedctl snapshot of .*, Kubernetes (\S*)[ \t]*$", re.MULTILINE)
_HEAD = 4096


@dataclass(frozen=True, slots=True)
class APIResource:
    """One API resource kube-scheduler lists (its informers watch exactly these)."""

    kind: str
    group: str  # "" for the core group
    version: str
    plural: str
    namespaced: bool
    #: Served only by some servers (an alpha API behind a gate): a server without it is not worth a note.
    optional: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """``pods`` or ``replicasets.apps``, as kubectl and RBAC messages write it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def list_path(self, namespace: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if namespace and self.namespaced:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"

    def object_path(self, namespace: str | None, name: str) -> str:
        return f"{self.list_path(namespace)}/{name}"


#: Every kind the scheduler's plugins read, in the order a snapshot lists them.
RESOURCES: tuple[APIResource, ...] = (
    APIResource("Namespace", "", "v1", "namespaces", False),
    APIResource("PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", False),
    APIResource("Node", "", "v1", "nodes", False),
    APIResource("Pod", "", "v1", "pods", True),
    APIResource("Service", "", "v1", "services", True),
    APIResource("ReplicationController", "", "v1", "replicationcontrollers", True),
    APIResource("ReplicaSet", "apps", "v1", "replicasets", True),
    APIResource("StatefulSet", "apps", "v1", "statefulsets", True),
    APIResource("PodDisruptionBudget", "policy", "v1", "poddisruptionbudgets", True),
    APIResource("PersistentVolume", "", "v1", "persistentvolumes", False),
    APIResource("PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", True),
    APIResource("StorageClass", "storage.k8s.io", "v1", "storageclasses", False),
    APIResource("CSINode", "storage.k8s.io", "v1", "csinodes", False),
    APIResource("CSIDriver", "storage.k8s.io", "v1", "csidrivers", False),
    APIResource("CSIStorageCapacity", "storage.k8s.io", "v1", "csistoragecapacities", True),
    APIResource("ResourceSlice", "resource.k8s.io", "v1", "resourceslices", False),
    APIResource("ResourceClaim", "resource.k8s.io", "v1", "resourceclaims", True),
    APIResource("DeviceClass", "resource.k8s.io", "v1", "deviceclasses", False),
    # v1.37 serves it as v1 (GA, DRADeviceTaintRules on); v1.36 only as v1beta2, with the gate on
    APIResource("DeviceTaintRule", "resource.k8s.io", "v1", "devicetaintrules", False, optional=True),
    # with GenericWorkload: the pod groups the pod-group cycle schedules together, as the scheduler of
    # v1.36 (v1alpha2) and v1.37 (v1beta1) lists them; a server serves one of the two
    APIResource("PodGroup", "scheduling.k8s.io", "v1alpha2", "podgroups", True, optional=True),
    APIResource("PodGroup", "scheduling.k8s.io", "v1beta1", "podgroups", True, optional=True),
)

POD = next(r for r in RESOURCES if r.kind == "Pod")

# --------------------------------------------------------------------------- redaction

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
REDACTED = "container env values, last-applied-configuration annotations and managedFields"


def _pod_specs(obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if obj.get("kind") == "Pod":
        yield spec
        return
    template = spec.get("template")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        yield template["spec"]


def redact(obj: dict[str, Any]) -> None:
    """Drop secret material from a raw object, in place; nothing the scheduler reads is touched."""
    md = obj.get("metadata")
    if isinstance(md, dict):
        md.pop("managedFields", None)
        ann = md.get("annotations")
        if isinstance(ann, dict):
            ann.pop(LAST_APPLIED, None)
    for spec in _pod_specs(obj):
        for key in ("containers", "initContainers", "ephemeralContainers"):
            for c in spec.get(key) or ():
                if isinstance(c, dict):
                    for env in c.get("env") or ():
                        if isinstance(env, dict):
                            env.pop("value", None)


# --------------------------------------------------------------------------- fetched lists


class Encoded(NamedTuple):
    """A page's objects already as a snapshot file's lines in UTF-8 (``writer.encode_items``, run by
    ``offload``'s worker), and how many there are: only a sink whose ``takes_encoded`` is true is given these."""

    data: bytes
    objects: int


class Raw(NamedTuple):
    """A page's body as the API server sent it, left for another process to decode: only ``forkfetch``'s
    reader hands these on (``LiveCluster.list_pages(hand_over=...)``). ``objects``: the page's size asked
    for (the server fills every page but the last, which is never handed on)."""

    body: bytes
    objects: int


#: One page of a list: its objects, or (for a sink that ``takes_encoded``) their lines, or (for
#: ``forkfetch``'s reader) its undecoded body.
Page = list[dict[str, Any]] | Encoded | Raw


class Sink(Protocol):
    """Where the pages of a live read go (``Fetched`` keeps them; ``writer.SnapshotWriter`` writes them)."""

    def take(self, res: APIResource, pages: Iterable[Page | None]) -> None:
        """Every page of ``res``'s list; a None page: the list started again, forget the pages before it."""
        ...


@dataclass
class Fetched:
    """The raw objects of one read of a cluster, per resource, with kind and apiVersion set."""

    source: str
    lists: list[tuple[APIResource, list[dict[str, Any]]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    server_version: str | None = None

    def not_served(self, res: APIResource) -> None:
        if res.optional:
            return
        self.notes.append(
            f"the server does not serve {res.group_resource} ({res.api_version}): the snapshot has no {res.kind} objects"
        )

    def take(self, res: APIResource, pages: Iterable[Page | None]) -> None:
        """Keep every page of ``res``'s list (``Sink``; never given ``Encoded`` pages)."""
        items: list[dict[str, Any]] = []
        for page in pages:
            if page is None:
                items = []
            elif isinstance(page, Encoded | Raw):
                raise TypeError("Fetched keeps objects, not encoded pages")
            else:
                items.extend(page)
        self.lists.append((res, items))

    def documents(self) -> Iterator[Document]:
        from kschedctl.snapshot.loader import Document

        for res, items in self.lists:
            where = f"{self.source}{res.list_path()}"
            for i, obj in enumerate(items, 1):
                yield Document(where, i, obj)

    def to_cluster(self, warn: Warn | None = None, features: Features = DEFAULT_FEATURES) -> Cluster:
        """Build the Cluster through the loader, as files are; this read's notes come first."""
        from kschedctl.snapshot.loader import build_cluster

        if warn is not None:
            for note in self.notes:
                warn(note)
        # the API server validated them
        cluster = build_cluster(self.documents(), warn=warn, validate=False, features=features)
        cluster.pods_listed = True
        cluster.notes[:0] = self.notes
        return cluster


def list_items(res: APIResource, answer: dict[str, Any], *, redacted: bool) -> list[dict[str, Any]]:
    raw = answer.get("items")
    if not isinstance(raw, list):
        raise InputError(f"the answer to listing {res.group_resource} has no items list")
    out: list[dict[str, Any]] = []
    for item in raw:
        if not isinstance(item, dict):
            continue
        obj = {"apiVersion": res.api_version, "kind": res.kind, **item}
        if redacted:
            redact(obj)
        out.append(obj)
    return out


# --------------------------------------------------------------------------- sources


def pod_not_found(cluster: Cluster, namespace: str, name: str, description: str) -> UsageError:
    """The error for a pod NAME that is not in the namespace, saying where a pod of that name is."""
    elsewhere = sorted(p.namespace for p in cluster.pods if p.name == name and p.namespace != namespace)
    return pod_not_found_in(name, namespace, description, elsewhere)


def pod_not_found_in(name: str, namespace: str, description: str, elsewhere: list[str]) -> UsageError:
    """The error for a pod NAME that is not in the namespace, naming the namespaces ``elsewhere``
    that hold a pod of that name."""
    msg = f'pod "{name}" not found in namespace "{namespace}" of {description}'
    if len(elsewhere) == 1:
        msg += f'; found in namespace "{elsewhere[0]}" (use -n {elsewhere[0]})'
    elif elsewhere:
        msg += "; found in namespaces " + ", ".join(f'"{n}"' for n in elsewhere) + " (use -n NAMESPACE)"
    return UsageError(msg)


def pending_elsewhere(cluster: Cluster, namespace: str) -> str | None:
    """When no pod is pending in ``namespace``: a note counting the pending pods of the other namespaces."""
    counts: dict[str, int] = {}
    for p in cluster.pending_pods():
        if p.namespace != namespace:
            counts[p.namespace] = counts.get(p.namespace, 0) + 1
    if not counts:
        return None
    total = sum(counts.values())
    where = ", ".join(f"{ns}: {n}" for ns, n in sorted(counts.items()))
    return f'no pending pods in namespace "{namespace}"; {total} pending in other namespaces ({where}): use -A to list them all'


class Source(Protocol):
    """Something that yields a Cluster: snapshot files, a live cluster, recorded answers."""

    #: Shown in notes and errors ("fixtures/demo/cluster.yaml", "context kind-kind (https://...)").
    description: str

    def default_namespace(self) -> str:
        """The namespace a pod NAME is looked up in when ``-n`` is not given."""
        ...

    def require_pod(self, namespace: str, name: str) -> None:
        """Fail early (UsageError) when the source can tell cheaply that the pod does not exist."""
        ...

    def server_version(self) -> str | None:
        """The Kubernetes version of the cluster the source holds (``gitVersion``), None when unknown."""
        ...

    def shown_gates(self, features: Features) -> dict[str, str]:
        """The feature gates off in ``features`` that the cluster's API server evidently runs with (what it
        serves and stores: ``apiversions.gates_shown``), each with what shows it."""
        ...

    def load(
        self, *, warn: Warn | None = None, progress: Progress | None = None, features: Features = DEFAULT_FEATURES
    ) -> Cluster:
        """The cluster, its objects read as ``features``' version reads them."""
        ...


class FileSource:
    """Snapshot files, directories or stdin (``--snapshot``)."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = list(paths)
        self.description = ", ".join(self.paths)
        #: The documents, once read to see which gates they show (``load`` then builds the Cluster of them).
        self._read: tuple[list[Document], list[str | None]] | None = None
        #: ``loader.file_keys`` of the paths, once asked (in a 1-tuple: None is an answer).
        self._files: tuple[Files | None] | None = None
        #: The Cluster built as the files were looked at, with the Features it was built with and its notes.
        self._built: tuple[Features, Cluster, list[str]] | None = None

    def default_namespace(self) -> str:
        return "default"

    def look_ahead(self) -> None:
        """Start reading the files beside what the command does before it loads them (``loader.look_ahead``)."""
        from kschedctl.snapshot.loader import look_ahead

        look_ahead(self.paths)

    def require_pod(self, namespace: str, name: str) -> None:
        return None  # known only once loaded

    def server_version(self) -> str | None:
        """The version a snapshot file records (the first file saying one; stdin is not looked at).
        A recorded version that is not one is bad input (``recorded_version``)."""
        for p in self.paths:
            if p != "-" and Path(p).is_file():
                version = recorded_version(p)
                if version is not None:
                    return version
        return None

    def shown_gates(self, features: Features) -> dict[str, str]:
        """What the files' objects show of the gates of the API server that stored them (read once: ``load``
        builds the Cluster of the same documents, or takes the one built as they were looked at; found again
        in the snapshot cache for the same texts)."""
        from kschedctl.snapshot import modelcache
        from kschedctl.snapshot.apiversions import candidate_gates, gates_shown
        from kschedctl.snapshot.loader import read_documents, streamable

        if not candidate_gates(features):
            return {}
        files = self._file_keys()
        shown = modelcache.read_gates(files, features)
        if shown is None:
            if self._read is None and streamable(self.paths):
                shown = self._look_building(features, files)
            else:
                if self._read is None:
                    self._read = read_documents(self.paths)
                shown = gates_shown((d.obj for d in self._read[0]), features)
            modelcache.write_gates(files, features, shown)
        return shown

    def _look_building(self, features: Features, files: Files | None) -> dict[str, str]:
        """The look of ``shown_gates`` at files read a line at a time, done as the Cluster is built of them with
        ``features`` (kept for ``load``: most clusters show no gate, and the run keeps ``features``). A file
        that cannot be loaded is only looked at: ``load`` says what is wrong with it, in its turn."""
        from kschedctl.snapshot.apiversions import GateLook, gates_shown
        from kschedctl.snapshot.loader import iter_documents, load_cluster

        look, notes = GateLook(features), list[str]()
        try:
            cluster = load_cluster(self.paths, warn=notes.append, features=features, files=files, look=look.see)
        except InputError:
            return gates_shown((d.obj for d in iter_documents(self.paths)), features)
        self._built = (features, cluster, notes)
        return look.shown()

    def _file_keys(self) -> Files | None:
        """The files' keys in the snapshot cache, read once per command (``loader.file_keys``)."""
        from kschedctl.snapshot.loader import file_keys

        if self._files is None:
            self._files = (file_keys(self.paths),)
        return self._files[0]

    def load(
        self, *, warn: Warn | None = None, progress: Progress | None = None, features: Features = DEFAULT_FEATURES
    ) -> Cluster:
        from kschedctl.snapshot.loader import load_cluster

        read, self._read = self._read, None
        built, self._built = self._built, None
        if built is not None and built[0] == features:
            cluster = built[1]
            if warn is not None:
                for note in built[2]:
                    warn(note)
        else:
            del built  # (built with other gates: let go of it before another is built)
            cluster = load_cluster(self.paths, warn=warn, features=features, read=read, files=self._file_keys())
        if not cluster.nodes:
            raise InputError(
                "the snapshot has no Node objects: there is nothing to schedule onto "
                "(give the file kubectl get nodes,pods -A -o yaml wrote, or kschedctl snapshot's)",
                source=", ".join("<stdin>" if p == "-" else p for p in self.paths),
            )
        return cluster


def recorded_version(path: str) -> str | None:
    """The Kubernetes version the snapshot file ``path`` records (``SERVER_VERSION_ANNOTATION``, else the header
    line of older snapshots); None when it records none or cannot be read (reading it reports that). A value
    that is not a version ("banana", "1.x", "1.035") is refused naming the file and where it says so."""
    from kschedctl.kube.versions import VersionError, parse_version

    try:
        with Path(path).open(encoding="utf-8", errors="replace") as f:
            head = f.read(_HEAD)
    except OSError:
        return None
    m = _ANNOTATION_IN_FILE.search(head)
    where = f'metadata.annotations["{SERVER_VERSION_ANNOTATION}"]'
    if m is not None:
        value = next(v for v in (m.group("dq"), m.group("sq"), m.group("bare")) if v is not None)
    elif (h := _HEADER_IN_FILE.search(head)) is not None:
        value, where = h.group(1), "the header line"
    else:
        return None
    try:
        parse_version(value)
    except VersionError as e:
        raise InputError(f"{e}; correct it, or choose the version with --kube-version", source=path, field=where) from None
    return value

