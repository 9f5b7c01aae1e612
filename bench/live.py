"""Time kschedctl against a live API server of 5,000 nodes, 20,000 bound pods and 20 pending ones.

No cluster is needed: a local HTTP server (a thread of this script) answers as a kube-apiserver
does for the lists kschedctl reads, with generated objects shaped and sized like a real server's
(``tests/recordings``: labels, annotations, ownerReferences, managedFields, node conditions and
images, default tolerations), and with its paging: ``limit`` and
``continue``, ``remainingItemCount`` on every page but the last. Every other resource kschedctl
lists is an empty list; ``/version`` and the discovery documents are the recorded ones.

Each command then runs as a subprocess, pointed at the server by a kubeconfig, and its wall time
and peak RSS (``os.wait4``) are taken, the best of ``--repeat`` runs:

* the reference: the same lists fetched page by page with ``http.client`` and decoded with
  ``json.loads`` (what any client must do at least);
* ``kschedctl snapshot -o FILE`` (YAML, as ``-o cluster.yaml``);
* ``kschedctl explain pod NAME`` and ``kschedctl explain pending -A``, live;
* the first parse of the written snapshot: ``explain pod NAME --snapshot FILE`` with an empty
  snapshot cache.

Each figure is shown as a ratio to the reference's wall time in the same run (a busy machine
stretches both) and judged against the targets of issue 29 (at most 1.5× for the snapshot and
its first parse, 2× for ``explain pod``, 3× for ``explain pending -A``; peak RSS no more than
before), in a table, or as JSON with ``--json``.

    python3 bench/live.py [--nodes 5000 --pods 20000 --pending 20] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kschedctl.snapshot.source import RESOURCES  # noqa: E402
from tests.apiserver import ThreadedServer, recording_name  # noqa: E402

#: The recorded discovery answers: the repository's sibling ``../shared/recordings`` (as bench/run.py finds
#: ``../shared/perf``), else the copy in tests/recordings.
RECORDINGS = [d / "003-medium-30n150p" for d in (REPO.parent / "shared" / "recordings",
                                                  REPO.parent.parent / "shared" / "recordings",
                                                  REPO / "tests" / "recordings")]
MAIN = "import sys; from kschedctl.cli.main import run; sys.argv[0] = 'kschedctl'; run()"
ZONES = ("zone-a", "zone-b", "zone-c")
SIZES = (("m5.xlarge", "4", "16Gi", "3900m", "15872Mi"), ("m5.2xlarge", "8", "32Gi", "7800m", "31744Mi"),
         ("m5.4xlarge", "16", "64Gi", "15600m", "63488Mi"))
NAMESPACES = ("shop", "batch", "analytics", "search", "payments", "media", "ml", "ops", "web", "data")
STAMP = "2026-11-22T05:53:17Z"


# --------------------------------------------------------------------------- the cluster


def _uid(rnd: random.Random) -> str:
    h = f"{rnd.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _fields(*paths: str) -> dict[str, Any]:
    """A managedFields ``fieldsV1`` tree naming these dotted fields (the shape, not the exact set)."""
    tree: dict[str, Any] = {}
    for p in paths:
        at = tree
        for part in p.split("."):
            at = at.setdefault(f"f:{part}", {})
        at.update({".": {}, "f:name": {}, "f:value": {}})
    return tree


def _managed(manager: str, *paths: str, subresource: str | None = None) -> dict[str, Any]:
    entry = {"manager": manager, "operation": "Update", "apiVersion": "v1", "time": STAMP, "fieldsType": "FieldsV1",
             "fieldsV1": _fields(*paths)}
    if subresource:
        entry["subresource"] = subresource
    return entry


def node(i: int, rnd: random.Random) -> dict[str, Any]:
    name = f"ip-10-{i // 250}-{i % 250}-{i % 7 + 10}.ec2.internal"
    kind, cpu, mem, acpu, amem = SIZES[rnd.randrange(len(SIZES))]
    zone = ZONES[i % 3]
    conditions = [
        {"type": t, "status": s, "lastHeartbeatTime": STAMP, "lastTransitionTime": STAMP, "reason": r, "message": m}
        for t, s, r, m in (
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        )
    ]
    spec: dict[str, Any] = {"providerID": f"aws:///{zone}/i-{rnd.getrandbits(64):016x}"}
    labels: dict[str, str] = {}
    if rnd.random() < 0.03:
        spec["taints"] = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
        labels["dedicated"] = "infra"
    return {
        "metadata": {
            "name": name,
            "uid": _uid(rnd),
            "resourceVersion": str(1000 + i),
            "creationTimestamp": STAMP,
            "labels": {
                "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": kind,
                "topology.kubernetes.io/region": "region-1", "topology.kubernetes.io/zone": zone,
                "pool": f"pool-{i % 12}", **labels,
            },
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "managedFields": [
                _managed("kubelet", "metadata.labels", "metadata.annotations", "spec.providerID"),
                _managed("kubelet", "status.allocatable", "status.capacity", "status.conditions", "status.images",
                         "status.nodeInfo", "status.addresses", "status.daemonEndpoints", subresource="status"),
            ],
        },
        "spec": spec,
        "status": {
            "capacity": {"cpu": cpu, "ephemeral-storage": "100Gi", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                         "memory": mem, "pods": "110"},
            "allocatable": {"cpu": acpu, "ephemeral-storage": "95Gi", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                            "memory": amem, "pods": "110"},
            "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": f"10.{i // 250}.{i % 250}.{i % 7 + 10}"},
                          {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"kubeletVersion": "v1.35.4", "operatingSystem": "linux", "architecture": "amd64"},
            "images": [{"names": [f"registry.example.com/app{rnd.randrange(200):03d}:1.{rnd.randrange(9)}"],
                        "sizeBytes": rnd.randrange(50, 900) * 1000000} for _ in range(2)],
        },
    }


def pod(i: int, app: dict[str, Any], node_name: str | None, rnd: random.Random) -> dict[str, Any]:
    ns, rs, rs_uid, image = app["namespace"], app["replicaset"], app["uid"], app["image"]
    name = f"{rs}-{i:05x}"
    cpu, mem = app["cpu"], app["memory"]
    spec: dict[str, Any] = {
        "containers": [{
            "name": app["name"], "image": image,
            "resources": {"requests": {"cpu": cpu, "memory": mem}},
            "imagePullPolicy": "IfNotPresent",
        }],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default", "serviceAccount": "default", "automountServiceAccountToken": False,
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ],
        "priority": app["priority"], "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
    }
    if app.get("priorityClassName"):
        spec["priorityClassName"] = app["priorityClassName"]
    if app.get("nodeSelector"):
        spec["nodeSelector"] = app["nodeSelector"]
    if node_name:
        spec["nodeName"] = node_name
        status = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True",
                                                      "lastProbeTime": None, "lastTransitionTime": STAMP}],
                  "qosClass": "Burstable"}
    else:
        status = {"phase": "Pending", "conditions": [{
            "type": "PodScheduled", "status": "False", "lastProbeTime": None, "lastTransitionTime": STAMP,
            "reason": "Unschedulable",
            "message": app.get("message", "0/5000 nodes are available: 5000 Insufficient cpu."),
        }], "qosClass": "Burstable"}
    return {
        "metadata": {
            "name": name, "generateName": f"{rs}-", "namespace": ns, "uid": _uid(rnd),
            "resourceVersion": str(10000 + i), "generation": 1, "creationTimestamp": STAMP,
            "labels": {"app": app["name"], "pod-template-hash": rs.rsplit("-", 1)[1], "tier": app["tier"]},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": rs_uid,
                                 "controller": True, "blockOwnerDeletion": True}],
            "managedFields": [
                _managed("kube-controller-manager", "metadata.generateName", "metadata.labels",
                         "metadata.ownerReferences", "spec.containers", "spec.dnsPolicy", "spec.restartPolicy",
                         "spec.schedulerName", "spec.securityContext", "spec.terminationGracePeriodSeconds"),
                _managed("kube-scheduler", "status.conditions", subresource="status"),
            ],
        },
        "spec": spec,
        "status": status,
    }


def pending_kinds(base: dict[str, Any], drained: str, rnd: random.Random) -> list[dict[str, Any]]:
    """The pending pods' workloads, one unschedulable cause each, as a real cluster's pending list has them
    (``--fix`` has a different search to run for each): a cpu request above every node's allocatable, a
    memory request above every node's, a nodeSelector no node matches, a workload for the tainted
    ``dedicated=infra`` nodes without the toleration, a pod pinned to the drained (cordoned) node, and one
    too big in cpu and memory at once (no single change helps it)."""
    def kind(name: str, message: str, cpu: str = "500m", memory: str = "512Mi", **extra: Any) -> dict[str, Any]:
        return {**base, "name": name, "replicaset": f"{name}-{rnd.getrandbits(36):09x}", "cpu": cpu, "memory": memory,
                "uid": _uid(rnd), "message": f"0/5000 nodes are available: {message}.", **extra}

    return [
        kind("render", "5000 Insufficient cpu", cpu="24"),
        kind("cache", "5000 Insufficient memory", memory="96Gi"),
        kind("gpu-train", "5000 node(s) didn't match Pod's node affinity/selector",
             nodeSelector={"accelerator": "nvidia-a10g"}),
        kind("ingress", "150 node(s) had untolerated taint(s), 4850 node(s) didn't match Pod's node affinity/selector",
             nodeSelector={"dedicated": "infra"}),
        kind("local-db", "1 node(s) were unschedulable, 4999 node(s) didn't match Pod's node affinity/selector",
             nodeSelector={"kubernetes.io/hostname": drained}),
        kind("big", "5000 Insufficient cpu, 5000 Insufficient memory", cpu="64", memory="1Ti"),
    ]


@dataclass
class Cluster:
    """The generated lists, by list path (what the server answers), and the names the commands use."""

    lists: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    pending: tuple[str, str] = ("", "")

    @property
    def objects(self) -> int:
        return sum(len(v) for v in self.lists.values())


def generate(n_nodes: int, n_pods: int, n_pending: int, seed: int = 1) -> Cluster:
    """Nodes (one drained), bound pods (spread over the nodes) and pending pods that fit nowhere, for the
    causes of ``pending_kinds``, plus the
    Namespaces, PriorityClasses, ReplicaSets and Services such a cluster has."""
    rnd = random.Random(seed)
    nodes = [node(i, rnd) for i in range(n_nodes)]
    apps = []
    for a in range(max(1, n_pods // 100)):
        ns = NAMESPACES[a % len(NAMESPACES)]
        rs = f"app{a:03d}-{rnd.getrandbits(36):09x}"
        apps.append({"namespace": ns, "name": f"app{a:03d}", "replicaset": rs, "uid": _uid(rnd),
                     "image": f"registry.example.com/{ns}/app{a:03d}:1.{a % 9}", "tier": ("web", "db", "batch")[a % 3],
                     "cpu": rnd.choice(("100m", "250m", "500m")), "memory": rnd.choice(("128Mi", "256Mi", "512Mi")),
                     "priority": 100 if a % 5 == 0 else 0, "priorityClassName": "batch-low" if a % 5 == 0 else None})
    pods = [pod(i, apps[i % len(apps)], nodes[rnd.randrange(n_nodes)]["metadata"]["name"] if n_nodes else None, rnd)
            for i in range(n_pods)]
    # one node drained for maintenance, as a large cluster always has (the last one without a taint)
    drained = next((n for n in reversed(nodes) if not n["spec"].get("taints")), None)
    if drained is not None:
        drained["spec"]["unschedulable"] = True
        drained["spec"]["taints"] = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                                      "timeAdded": STAMP}]
    kinds = pending_kinds(apps[0], drained["metadata"]["name"] if drained else "none", rnd)
    pending = [pod(n_pods + i, kinds[i % len(kinds)], None, rnd) for i in range(n_pending)]
    cluster = Cluster()
    cluster.lists["/api/v1/namespaces"] = [
        {"metadata": {"name": ns, "uid": _uid(rnd), "creationTimestamp": STAMP,
                      "labels": {"kubernetes.io/metadata.name": ns}},
         "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease", *NAMESPACES)
    ]
    cluster.lists["/apis/scheduling.k8s.io/v1/priorityclasses"] = [
        {"metadata": {"name": n, "uid": _uid(rnd), "creationTimestamp": STAMP}, "value": v,
         "preemptionPolicy": "PreemptLowerPriority", **({"globalDefault": False})}
        for n, v in (("batch-low", 100), ("system-cluster-critical", 2000000000), ("system-node-critical", 2000001000))
    ]
    cluster.lists["/api/v1/nodes"] = nodes
    cluster.lists["/api/v1/pods"] = pods + pending
    cluster.lists["/apis/apps/v1/replicasets"] = [
        {"metadata": {"name": a["replicaset"], "namespace": a["namespace"], "uid": a["uid"], "creationTimestamp": STAMP,
                      "labels": {"app": a["name"]}},
         "spec": {"replicas": 100, "selector": {"matchLabels": {"app": a["name"]}},
                  "template": {"metadata": {"labels": {"app": a["name"]}},
                               "spec": {"containers": [{"name": a["name"], "image": a["image"]}]}}},
         "status": {"replicas": 100}}
        for a in [*apps, *kinds]
    ]
    cluster.lists["/api/v1/services"] = [
        {"metadata": {"name": a["name"], "namespace": a["namespace"], "uid": _uid(rnd), "creationTimestamp": STAMP},
         "spec": {"selector": {"app": a["name"]}, "ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}],
                  "type": "ClusterIP", "clusterIP": f"10.96.{a_i // 250}.{a_i % 250}"}}
        for a_i, a in enumerate(apps)
    ]
    p = pending[0]["metadata"] if pending else pods[0]["metadata"]
    cluster.pending = (p["namespace"], p["name"])
    return cluster


# --------------------------------------------------------------------------- the server


def _kind_of(path: str) -> tuple[str, str]:
    for res in RESOURCES:
        if res.list_path() == path:
            return res.kind + "List", res.api_version
    raise KeyError(path)


def _token(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode()


class FakeAPIServer(ThreadedServer):
    """``with FakeAPIServer(cluster) as srv:`` answers GETs at ``srv.url`` as a kube-apiserver does."""

    def __init__(self, cluster: Cluster, recordings: Path | None = None) -> None:
        self.cluster = cluster
        self.recordings = recordings or next((r for r in RECORDINGS if (r / "version.json").is_file()), None)
        self.requests = 0
        self._pages: dict[tuple[str, int, int], bytes] = {}
        self._lock = threading.Lock()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler(self)

    def answer(self, raw: str) -> tuple[int, bytes]:
        with self._lock:
            self.requests += 1
        parts = urlsplit(raw)
        query = dict(parse_qsl(parts.query))
        path = parts.path.rstrip("/")
        segments = path.split("/")
        if len(segments) == 7 and segments[3] == "namespaces" and segments[5] == "pods":
            return self._named(segments[4], segments[6])
        namespace = None
        if "/namespaces/" in path and not path.endswith("/namespaces"):
            before, _, rest = path.partition("/namespaces/")
            namespace, _, plural = rest.partition("/")
            path = f"{before}/{plural}"
        try:
            kind, api_version = _kind_of(path)
        except KeyError:
            return self._recorded(parts.path)
        items = self.cluster.lists.get(path, [])
        if namespace is not None or "fieldSelector" in query or "labelSelector" in query:
            return 200, self._filtered(items, kind, api_version, namespace, query)
        limit = int(query.get("limit") or 0) or len(items) or 1
        offset = json.loads(base64.urlsafe_b64decode(query["continue"]))["offset"] if query.get("continue") else 0
        key = (path, limit, offset)
        page = self._pages.get(key)
        if page is None:
            chunk = items[offset : offset + limit]
            meta: dict[str, Any] = {"resourceVersion": "99999"}
            if offset + limit < len(items):
                meta["continue"] = _token(offset + limit)
                meta["remainingItemCount"] = len(items) - offset - limit
            page = json.dumps({"kind": kind, "apiVersion": api_version, "metadata": meta, "items": chunk},
                              separators=(",", ":")).encode()
            with self._lock:
                self._pages[key] = page
        return 200, page

    def _named(self, ns: str, name: str) -> tuple[int, bytes]:
        """GET /api/v1/namespaces/NS/pods/NAME."""
        for item in self.cluster.lists["/api/v1/pods"]:
            if item["metadata"]["name"] == name and item["metadata"]["namespace"] == ns:
                return 200, json.dumps({"kind": "Pod", "apiVersion": "v1", **item}).encode()
        return 404, json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                                "message": f'pods "{name}" not found', "code": 404}).encode()

    @staticmethod
    def _filtered(items: list[dict[str, Any]], kind: str, api_version: str, namespace: str | None,
                  query: dict[str, str]) -> bytes:
        def keep(i: dict[str, Any]) -> bool:
            md = i["metadata"]
            if namespace is not None and md.get("namespace") != namespace:
                return False
            for term in filter(None, query.get("fieldSelector", "").split(",")):
                k, _, v = term.replace("==", "=").partition("=")
                if md.get(k.split(".")[-1]) != v:
                    return False
            for term in filter(None, query.get("labelSelector", "").split(",")):
                k, _, v = term.partition("=")
                if (md.get("labels") or {}).get(k) != v:
                    return False
            return True

        return json.dumps({"kind": kind, "apiVersion": api_version, "metadata": {"resourceVersion": "99999"},
                           "items": [i for i in items if keep(i)]}).encode()

    def _recorded(self, path: str) -> tuple[int, bytes]:
        f = self.recordings / recording_name(path) if self.recordings else None
        if f is not None and f.is_file():
            return 200, f.read_bytes()
        if path == "/version":
            return 200, json.dumps({"major": "1", "minor": "36", "gitVersion": "v1.36.2"}).encode()
        return 404, json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                                "message": "the server could not find the requested resource", "code": 404}).encode()


def kubeconfig(path: Path, url: str) -> Path:
    """A kubeconfig whose current context is the server at ``url`` (a bearer token, as a ServiceAccount's)."""
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "bench",
        "clusters": [{"name": "bench", "cluster": {"server": url}}],
        "users": [{"name": "bench", "user": {"token": "bench-token"}}],
        "contexts": [{"name": "bench", "context": {"cluster": "bench", "user": "bench"}}],
    }))
    return path


def _handler(server: FakeAPIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the real server
        disable_nagle_algorithm = True  # as Go's net/http: no 40 ms stall between headers and body

        def do_GET(self) -> None:
            code, body = server.answer(self.path)
            try:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler


# --------------------------------------------------------------------------- measuring

#: The reference client: every list of ``RESOURCES`` GET page by page (limit 500) and decoded.
RAW_FETCH = r"""
import http.client, json, sys
from urllib.parse import quote
host, port, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
conn = http.client.HTTPConnection(host, port)
n = 0
for path in paths:
    token = None
    while True:
        q = "?limit=500" + ("&continue=" + quote(token) if token else "")
        conn.request("GET", path + q, headers={"Accept": "application/json", "Authorization": "Bearer bench-token"})
        resp = conn.getresponse()
        body = resp.read()
        if resp.status == 404:
            break
        page = json.loads(body)
        n += len(page["items"])
        token = page["metadata"].get("continue")
        if not token:
            break
print(n)
"""


@dataclass
class Run:
    seconds: float
    rss_mb: float
    cpu: float  # user + system seconds (a busy machine stretches the wall time, not this)
    stdout: str
    stderr: str


def run(argv: list[str], env: dict[str, str]) -> Run:
    """One subprocess: wall time and peak RSS (ru_maxrss of the child, from wait4)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=env["PYTHONPATH"], env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        secs = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:6])}... failed ({proc.returncode}): {stderr[-2000:]}")
    return Run(secs, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, stdout, stderr)


def best(n: int, once: Callable[[], Run]) -> tuple[Run, list[float]]:
    runs = [once() for _ in range(n)]
    return min(runs, key=lambda r: r.seconds), [r.seconds for r in runs]


@dataclass(frozen=True)
class Target:
    """Issue 29's target for one command: its wall time at most ``ratio`` times the reference's in the
    same run, and its peak RSS no more than before (None: no target, the figure is only shown)."""

    command: str
    before: str  # the figures before issue 29 (docs/benchmark.md, a quiet machine)
    ratio: float | None
    rss_mb: float | None


TARGETS = {
    "snapshot": Target("snapshot -o FILE", "1.3-1.5×, 63 MB", 1.5, 65),
    "explain-pod": Target("explain pod live", "2.2-2.5×, 279 MB", 2.0, 280),
    "explain-pending": Target("explain pending -A live", "3.0-3.4×, 277 MB", 3.0, 280),
    "explain-pending-fix": Target("explain pending -A --fix live", "8.0-9.5×, 293 MB", None, None),
    "first-parse": Target("first parse of the snapshot file", "2.1-2.2×, 280 MB", 1.5, 280),
}


def serve(args: argparse.Namespace) -> None:
    """``--serve``: generate the cluster, serve it, print one JSON line saying where; serve until stdin closes."""
    t = time.perf_counter()
    cluster = generate(args.nodes, args.pods, args.pending, args.seed)
    made = time.perf_counter() - t
    with FakeAPIServer(cluster) as srv:
        for res in RESOURCES:  # encode the pages once, before anything is timed
            srv.answer(f"{res.list_path()}?limit=500")
        print(json.dumps({"url": srv.url, "pending": cluster.pending, "objects": cluster.objects,
                          "seconds": round(made, 2)}), flush=True)
        sys.stdin.read()


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Each command against a server in its own process (a child's peak RSS counts its parent's pages
    at fork time, so this process stays small)."""
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--nodes", str(args.nodes), "--pods", str(args.pods),
         "--pending", str(args.pending), "--seed", str(args.seed)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert server.stdout is not None
        where = json.loads(server.stdout.readline())
        return _measure(args, where)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait()


def _measure(args: argparse.Namespace, where: dict[str, Any]) -> dict[str, Any]:
    url = str(where["url"])
    ns, name = where["pending"]
    with tempfile.TemporaryDirectory(prefix="kschedctl-bench-live-") as tmp_s:
        tmp = Path(tmp_s)
        repo = Path(args.repo).resolve()
        env = {**os.environ, "PYTHONPATH": str(repo), "KUBECONFIG": str(kubeconfig(tmp / "kubeconfig", url)),
               "COLUMNS": "200", "XDG_CACHE_HOME": str(tmp / "cache"), "PYTHONPYCACHEPREFIX": str(tmp / "pycache")}
        for var in ("KSCHEDCTL_NO_CACHE", "PYTHONDONTWRITEBYTECODE"):
            env.pop(var, None)
        # byte-code, as an installed package has it: compiled once, before anything is timed
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(repo / "kschedctl")], env=env, check=True)
        snap = tmp / "cluster.yaml"
        kctl = [sys.executable, "-c", MAIN]
        host, port = url.removeprefix("http://").split(":")
        paths = [res.list_path() for res in RESOURCES]
        results: dict[str, Any] = {"generated": {"nodes": args.nodes, "pods": args.pods, "pending": args.pending,
                                                 "objects": where["objects"], "seconds": where["seconds"]}}
        steps: list[tuple[str, Callable[[], Run]]] = [
            ("raw", lambda: run([sys.executable, "-c", RAW_FETCH, host, port, *paths], env)),
            ("snapshot", lambda: run([*kctl, "snapshot", "-o", str(snap)], env)),
            ("explain-pod", lambda: run([*kctl, "explain", "pod", name, "-n", ns], env)),
            ("explain-pending", lambda: run([*kctl, "explain", "pending", "-A"], env)),
            ("explain-pending-fix", lambda: run([*kctl, "explain", "pending", "-A", "--fix", "-o", "json"], env)),
            ("first-parse", lambda: _first_parse(kctl, name, ns, snap, env, tmp)),
        ]
        for key, once in steps:
            if args.only and key not in args.only and key != "raw":
                continue
            r, all_secs = best(args.repeat, once)
            results[key] = {"seconds": round(r.seconds, 2), "cpu": round(r.cpu, 2), "rss_mb": round(r.rss_mb),
                            "runs": [round(s, 2) for s in all_secs]}
            if key == "raw":
                results[key]["objects"] = int(r.stdout.strip() or 0)
            if key == "explain-pending-fix":
                results[key].update(fix_outcome(r.stdout))
            print(f"  {key}: {r.seconds:.2f} s (cpu {r.cpu:.2f} s), {r.rss_mb:.0f} MB", file=sys.stderr)
        if snap.is_file():
            results["snapshot"]["file_bytes"] = snap.stat().st_size
            results["snapshot"]["file_mb"] = round(snap.stat().st_size / 1e6, 1)
    return results


def fix_outcome(stdout: str) -> dict[str, Any]:
    """What ``explain pending --fix -o json`` found: pods searched, pods given at least one verified remedy
    that helps, pods whose search the wall-clock budget cut short (a fast answer must not be an empty one)."""
    rows = json.loads(stdout) if stdout.strip() else []
    searched = [r for r in rows if "remedies" in r]
    return {"pods": len(rows), "searched": len(searched),
            "helped": sum(1 for r in searched if any(x["helps"] for x in r["remedies"])),
            "cut_short": sum(1 for r in searched if (r.get("remediesSearch") or {}).get("notTried"))}


def _first_parse(kctl: list[str], name: str, ns: str, snap: Path, env: dict[str, str], tmp: Path) -> Run:
    cache = tmp / f"cache-{time.monotonic_ns()}"  # empty: nothing parsed before
    return run([*kctl, "explain", "pod", name, "-n", ns, "--snapshot", str(snap)], {**env, "XDG_CACHE_HOME": str(cache)})


def verdicts(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each command's ratio to the reference of the same run, against issue 29's target."""
    raw = results["raw"]["seconds"]
    rows = []
    for key, target in TARGETS.items():
        r = results.get(key)
        if r is None:
            continue
        ratio = r["seconds"] / raw
        met: bool | None = None
        want = "–"
        if target.ratio is not None:
            met = ratio <= target.ratio and (target.rss_mb is None or r["rss_mb"] <= target.rss_mb)
            want = f"≤ {target.ratio:g}× ({raw * target.ratio:.2f} s)"
            if target.rss_mb:
                want += f", ≤ {target.rss_mb:g} MB"
        now = f"{r['seconds']:.2f} s ({r['cpu']:.2f} s CPU), {r['rss_mb']} MB"
        if "helped" in r:
            now += f"; {r['helped']} of {r['searched']} pods given a remedy that helps, {r['cut_short']} cut short"
        rows.append({"command": target.command, "before": target.before, "target": want, "now": now,
                     "ratio": round(ratio, 2), "met": met})
    return rows


def table(results: dict[str, Any]) -> str:
    g = results["generated"]
    raw = results["raw"]
    lines = [
        f"{g['nodes']} nodes, {g['pods']} bound pods, {g['pending']} pending: {g['objects']} objects served; "
        f"snapshot file {results.get('snapshot', {}).get('file_mb', '-')} MB",
        f"reference (the same lists GET page by page and decoded with json.loads): {raw['seconds']:.2f} s "
        f"({raw['cpu']:.2f} s CPU), {raw['rss_mb']} MB; load average {results['load']}",
        "",
        "| command | before (issue 29) | target (issue 29) | now | ratio | met |",
        "|---|---|---|---|---|---|",
    ]
    for row in verdicts(results):
        met = "–" if row["met"] is None else "yes" if row["met"] else "NO"
        lines.append(f"| `{row['command']}` | {row['before']} | {row['target']} | {row['now']} | {row['ratio']:.2f}× | {met} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=20000, help="bound pods")
    ap.add_argument("--pending", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each command; the fastest counts")
    ap.add_argument("--json", action="store_true", help="the figures and verdicts as JSON")
    ap.add_argument("--only", action="append", choices=list(TARGETS), help="time only this command (and the reference)")
    ap.add_argument("--repo", default=str(REPO), help="the kschedctl checkout to time (default: this one)")
    ap.add_argument("--serve", action="store_true", help="only serve the generated cluster (the URL on stdout)")
    args = ap.parse_args(argv)
    if args.serve:
        serve(args)
        return 0
    before = os.getloadavg()[0]
    results = measure(args)
    results["load"] = f"{before:.1f} before, {os.getloadavg()[0]:.1f} after"
    results["targets"] = verdicts(results)
    print(json.dumps(results, indent=1) if args.json else table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
