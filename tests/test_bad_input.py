"""Bad input, file type by file type and field family by field family: exit 2 and one line on stderr
naming the file, the document and the field, worded as the API server (or kube-scheduler) words it;
or, where the API server accepts the input, a note on stderr and a normal answer.

Each case starts from a valid snapshot (two nodes) and a valid pod, breaks one thing, and runs the
command through typer's CliRunner.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app
from tests.builders import make_node, make_pod

ROOT = Path(__file__).parent.parent
DEMO = str(ROOT / "fixtures" / "demo" / "cluster.yaml")
runner = CliRunner()

Raw = dict[str, Any]


def node(name: str = "n1") -> Raw:
    return copy.deepcopy(make_node(name).alloc(cpu="4", memory="8Gi", pods="110").raw)


def pod(name: str = "web") -> Raw:
    raw = copy.deepcopy(make_pod(name).req(cpu="100m").raw)
    raw["metadata"].pop("uid")
    return raw


def dump(path: Path, *objs: Raw) -> str:
    path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    return str(path)


def run(*args: str, input: str | None = None) -> Any:
    return runner.invoke(app, list(args), input=input)


def assert_one_line_error(r: Any, *fragments: str) -> None:
    """Exit 2, exactly one line on stderr, starting with "error: ", holding every fragment; no traceback."""
    assert r.exit_code == 2, (r.exit_code, r.output)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in r.output and "internal error" not in r.output
    for f in fragments:
        assert f in lines[0], f"{f!r} not in {lines[0]!r}"


def input_notes(stderr: str) -> list[str]:
    """The notes about the input (other notes, about the trace, may come too)."""
    words = ("API server", "not in the snapshot", "PriorityClass", "holds")
    return [line for line in stderr.splitlines() if line.startswith("note: ") and any(w in line for w in words)]


def _set(raw: Raw, path: str, value: Any) -> Raw:
    cur: Any = raw
    parts = path.split(".")
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur.setdefault(p, {})
    if isinstance(cur, list):
        cur[int(parts[-1])] = value
    else:
        cur[parts[-1]] = value
    return raw


def _del(raw: Raw, path: str) -> Raw:
    cur: Any = raw
    parts = path.split(".")
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    del cur[parts[-1]]
    return raw


# --------------------------------------------------------------------------- the pod being explained (-f)

#: (id, how the pod is broken, fragments of the one error line after the file name)
POD_CASES: list[tuple[str, Callable[[Raw], Raw], list[str]]] = [
    ("no spec", lambda p: _del(p, "spec"), ["Pod default/web: spec.containers: Required value"]),
    ("no containers", lambda p: _set(p, "spec.containers", []), ["spec.containers: Required value"]),
    ("container without name", lambda p: _del(p, "spec.containers.0.name"), ["spec.containers[0].name: Required value"]),
    (
        "container name not a DNS label",
        lambda p: _set(p, "spec.containers.0.name", "Main_1"),
        ['spec.containers[0].name: Invalid value: "Main_1": a lowercase RFC 1123 label must consist of'],
    ),
    (
        "duplicate container names",
        lambda p: _set(p, "spec.containers", [p["spec"]["containers"][0]] * 2),
        ['spec.containers[1].name: Duplicate value: "c0"'],
    ),
    (
        "name longer than 253 characters",
        lambda p: _set(p, "metadata.name", "a" * 300),
        ["metadata.name: Invalid value:", "must be no more than 253 characters"],
    ),
    (
        "name not a DNS-1123 subdomain",
        lambda p: _set(p, "metadata.name", "Web_1"),
        ['metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist of'],
    ),
    (
        "namespace not a DNS label",
        lambda p: _set(p, "metadata.namespace", "my.ns"),
        ['metadata.namespace: Invalid value: "my.ns": must not contain dots'],
    ),
    ("apiVersion v7", lambda p: _set(p, "apiVersion", "v7"), ['apiVersion: no matches for kind "Pod" in version "v7"']),
    (
        "label key",
        lambda p: _set(p, "metadata.labels", {"bad key": "x"}),
        ['metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters'],
    ),
    (
        "label value",
        lambda p: _set(p, "metadata.labels", {"app": "x" * 64}),
        ["metadata.labels: Invalid value:", "must be no more than 63 bytes"],
    ),
    (
        "annotation key",
        lambda p: _set(p, "metadata.annotations", {"a/b/c": "x"}),
        ['metadata.annotations: Invalid value: "a/b/c": a valid label key'],
    ),
    (
        "two controller owner references",
        lambda p: _set(p, "metadata.ownerReferences", [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": n, "uid": n, "controller": True} for n in ("a", "b")
        ]),
        ["metadata.ownerReferences: Invalid value:", "Only one reference can have Controller set to true"],
    ),
    (
        "owner reference without uid",
        lambda p: _set(p, "metadata.ownerReferences", [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "a"}]),
        ['metadata.ownerReferences.uid: Invalid value: "": uid must not be empty'],
    ),
    (
        "negative cpu request",
        lambda p: _set(p, "spec.containers.0.resources.requests.cpu", "-1"),
        ['spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'],
    ),
    (
        "cpu request too large for the scheduler",
        lambda p: _set(p, "spec.containers.0.resources.requests.cpu", "1e400"),
        ['spec.containers[0].resources.requests[cpu]: Invalid value: "1e400": the API server accepts it', "in int64 millicores"],
    ),
    (
        "unparsable quantity",
        lambda p: _set(p, "spec.containers.0.resources.requests.cpu", "lots"),
        ["spec.containers[0].resources.requests.cpu: quantities must match the regular expression"],
    ),
    (
        "request above limit",
        lambda p: _set(p, "spec.containers.0.resources.limits", {"cpu": "50m"}),
        ['spec.containers[0].resources.requests: Invalid value: "100m": must be less than or equal to cpu limit of 50m'],
    ),
    (
        "resource name without a domain",
        lambda p: _set(p, "spec.containers.0.resources.requests.gpu", "1"),
        ['spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified'],
    ),
    (
        "fractional extended resource",
        lambda p: _set(p, "spec.containers.0.resources", {"requests": {"example.com/gpu": "0.5"}, "limits": {"example.com/gpu": "0.5"}}),
        ['resources.limits[example.com/gpu]: Invalid value: "0.5": must be an integer'],
    ),
    (
        "extended resource without a limit",
        lambda p: _set(p, "spec.containers.0.resources.requests", {"example.com/gpu": "1"}),
        ["spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"],
    ),
    (
        "pod-level resources other than cpu and memory",
        lambda p: _set(p, "spec.resources", {"requests": {"ephemeral-storage": "1Gi"}}),
        ['spec.resources.requests[ephemeral-storage]: Unsupported value: "ephemeral-storage"'],
    ),
    (
        "node affinity operator Bogus",
        lambda p: make_pod("web").node_affinity_required([{"key": "a", "operator": "Bogus", "values": ["x"]}]).raw,
        [
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            '.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator'
        ],
    ),
    (
        "node affinity In without values",
        lambda p: make_pod("web").node_affinity_required([{"key": "a", "operator": "In"}]).raw,
        ["matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
    ),
    (
        "node affinity with no terms",
        lambda p: _set(p, "spec.affinity", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}),
        ["nodeSelectorTerms: Required value: must have at least one node selector term"],
    ),
    (
        "node affinity value not a label value",
        lambda p: make_pod("web").node_affinity_required([{"key": "a", "operator": "In", "values": ["a b"]}]).raw,
        ['matchExpressions[0].values[0]: Invalid value: "a b": a valid label must be an empty string'],
    ),
    (
        "preferred weight out of range",
        lambda p: make_pod("web").node_affinity_preferred(101, [{"key": "a", "operator": "Exists"}]).raw,
        ["preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 101: must be in the range 1-100"],
    ),
    (
        "pod affinity without topologyKey",
        lambda p: make_pod("web").pod_affinity("required", "", {"app": "x"}).raw,
        ["podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty"],
    ),
    (
        "pod affinity selector operator",
        lambda p: make_pod("web").pod_affinity(
            "required", "zone", label_selector={"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["x"]}]}
        ).raw,
        ['labelSelector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator'],
    ),
    (
        "toleration operator",
        lambda p: make_pod("web").toleration("k", "v", "NoSchedule", operator="Bogus").raw,
        ['spec.tolerations[0].operator: Unsupported value: "Bogus": supported values: "Equal", "Exists"'],
    ),
    (
        "toleration effect",
        lambda p: make_pod("web").toleration("k", "v", "NoRun").raw,
        ['spec.tolerations[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'],
    ),
    (
        "toleration without key and not Exists",
        lambda p: make_pod("web").toleration("", "v").raw,
        ["spec.tolerations[0].operator: Invalid value:", "operator must be Exists when `key` is empty"],
    ),
    (
        "tolerationSeconds without NoExecute",
        lambda p: _set(make_pod("web").toleration("k", "v", "NoSchedule").raw, "spec.tolerations.0.tolerationSeconds", 5),
        ['spec.tolerations[0].effect: Invalid value: "NoSchedule": effect must be \'NoExecute\' when `tolerationSeconds` is set'],
    ),
    (
        "spread maxSkew 0",
        lambda p: make_pod("web").spread(0, "zone", match_labels={"a": "b"}).raw,
        ["spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"],
    ),
    (
        "spread whenUnsatisfiable",
        lambda p: make_pod("web").spread(1, "zone", when="Never", match_labels={"a": "b"}).raw,
        ['whenUnsatisfiable: Unsupported value: "Never": supported values: "DoNotSchedule", "ScheduleAnyway"'],
    ),
    (
        "spread without topologyKey",
        lambda p: make_pod("web").spread(1, "", match_labels={"a": "b"}).raw,
        ["spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty"],
    ),
    (
        "spread constraint repeated",
        lambda p: make_pod("web").spread(1, "zone").spread(2, "zone").raw,
        ['spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{zone, DoNotSchedule}"'],
    ),
    (
        "spread minDomains with ScheduleAnyway",
        lambda p: make_pod("web").spread(1, "zone", when="ScheduleAnyway", minDomains=2).raw,
        ["minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"],
    ),
    (
        "spread node policy",
        lambda p: make_pod("web").spread(1, "zone", nodeTaintsPolicy="Always").raw,
        ['nodeTaintsPolicy: Unsupported value: "Always": supported values: "Honor", "Ignore"'],
    ),
    (
        "container port out of range",
        lambda p: make_pod("web").host_port(70000).raw,
        ["spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"],
    ),
    (
        "port protocol",
        lambda p: make_pod("web").host_port(80, protocol="HTTP").raw,
        ['spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'],
    ),
    (
        "hostNetwork port mismatch",
        lambda p: _set(make_pod("web").host_port(80, container_port=8080).raw, "spec.hostNetwork", True),
        ["spec.containers[0].ports[0].hostPort: Invalid value: 80: must match `containerPort` when `hostNetwork` is true"],
    ),
    (
        "scheduling gate repeated",
        lambda p: make_pod("web").gate("a").gate("a").raw,
        ['spec.schedulingGates[1]: Duplicate value: "a"'],
    ),
    (
        "init container restartPolicy",
        lambda p: _set(make_pod("web").init_container("init").raw, "spec.initContainers.0.restartPolicy", "Never"),
        ['spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"'],
    ),
    (
        "volume claim without claimName",
        lambda p: make_pod("web").volume({"name": "data", "persistentVolumeClaim": {}}).raw,
        ["spec.volumes[0].persistentVolumeClaim.claimName: Required value"],
    ),
    (
        "nodeSelector value",
        lambda p: make_pod("web").node_selector(zone="a b").raw,
        ['spec.nodeSelector: Invalid value: "a b": a valid label must be an empty string'],
    ),
    (
        "preemptionPolicy",
        lambda p: _set(p, "spec.preemptionPolicy", "Sometimes"),
        ['spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"'],
    ),
    (
        "missing PriorityClass",
        lambda p: make_pod("web").priority_class("gold").raw,
        ['Pod default/web: spec.priorityClassName: pods "web" is forbidden: no PriorityClass with name gold was found'],
    ),
    ("not a mapping", lambda p: ["a"], ["document 1: a document must be a Kubernetes object (a mapping)"]),
    ("spec is a list", lambda p: _set(p, "spec", ["x"]), ["spec: must be a mapping"]),
]


@pytest.mark.parametrize(("case", "breaks", "fragments"), POD_CASES, ids=[c[0] for c in POD_CASES])
def test_bad_pod(tmp_path: Path, case: str, breaks: Callable[[Raw], Raw], fragments: list[str]) -> None:
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"), node("n2"))
    pod_file = dump(tmp_path / "pod.yaml", breaks(pod()))
    r = run("explain", "pod", "-f", pod_file, "--snapshot", snapshot)
    assert_one_line_error(r, f"error: {pod_file}: ", *fragments)


def test_the_unbroken_pod_is_fine(tmp_path: Path) -> None:
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"), node("n2"))
    r = run("explain", "pod", "-f", dump(tmp_path / "pod.yaml", pod()), "--snapshot", snapshot)
    assert r.exit_code == 0, r.output
    assert input_notes(r.stderr) == [] and "error" not in r.stderr


def test_a_system_priority_class_always_exists(tmp_path: Path) -> None:
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"))
    p = make_pod("web").priority_class("system-node-critical").raw
    r = run("explain", "pod", "-f", dump(tmp_path / "pod.yaml", p), "--snapshot", snapshot, "-o", "json")
    assert r.exit_code == 0, r.output


# --------------------------------------------------------------------------- snapshot files

SNAPSHOT_CASES: list[tuple[str, Callable[[Raw], Raw], list[str]]] = [
    (
        "node cpu -1",
        lambda n: _set(n, "status.allocatable.cpu", "-1"),
        ['Node n2: status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0'],
    ),
    (
        "node cpu 1e400",
        lambda n: _set(n, "status.allocatable.cpu", "1e400"),
        ['Node n2: status.allocatable.cpu: Invalid value: "1e400": the API server accepts it, but kube-scheduler counts cpu'],
    ),
    (
        "node memory beyond int64",
        lambda n: _set(n, "status.capacity.memory", "16Ei"),
        ['status.capacity.memory: Invalid value: "16Ei": the API server accepts it, but kube-scheduler counts memory in int64'],
    ),
    (
        "node pods not an integer",
        lambda n: _set(n, "status.allocatable.pods", "1.5"),
        ['status.allocatable.pods: Invalid value: "1.5": must be an integer'],
    ),
    (
        "node name",
        lambda n: _set(n, "metadata.name", "Node_2"),
        ['Node Node_2: metadata.name: Invalid value: "Node_2": a lowercase RFC 1123 subdomain'],
    ),
    ("node apiVersion", lambda n: _set(n, "apiVersion", "apps/v1"), ['apiVersion: no matches for kind "Node" in version "apps/v1"']),
    (
        "node label",
        lambda n: _set(n, "metadata.labels", {"topology.kubernetes.io/zone": "zone a"}),
        ['metadata.labels: Invalid value: "zone a"'],
    ),
    (
        "taint effect",
        lambda n: _set(n, "spec.taints", [{"key": "gpu", "effect": "NoRun"}]),
        ['spec.taints[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'],
    ),
    ("taint without effect", lambda n: _set(n, "spec.taints", [{"key": "gpu"}]), ["spec.taints[0].effect: Required value"]),
    (
        "taint key",
        lambda n: _set(n, "spec.taints", [{"key": "-gpu", "effect": "NoSchedule"}]),
        ['spec.taints[0].key: Invalid value: "-gpu"'],
    ),
    (
        "taint repeated",
        lambda n: _set(n, "spec.taints", [{"key": "gpu", "effect": "NoSchedule"}] * 2),
        ["spec.taints[1]: Duplicate value:", "taints must be unique by key and effect pair"],
    ),
    ("spec a list", lambda n: _set(n, "spec", []), ["Node n2: spec: must be a mapping"]),
    ("no kind", lambda n: _del(n, "kind"), ["document 2: kind: Required value: every object needs a kind"]),
    ("no name", lambda n: _del(n, "metadata.name"), ["metadata.name: Required value: name or generateName is required"]),
]


@pytest.mark.parametrize(("case", "breaks", "fragments"), SNAPSHOT_CASES, ids=[c[0] for c in SNAPSHOT_CASES])
def test_bad_snapshot_node(tmp_path: Path, case: str, breaks: Callable[[Raw], Raw], fragments: list[str]) -> None:
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"), breaks(node("n2")))
    r = run("explain", "pod", "-f", dump(tmp_path / "pod.yaml", pod()), "--snapshot", snapshot)
    assert_one_line_error(r, f"error: {snapshot}: document 2: ", *fragments)


OTHER_OBJECTS: list[tuple[str, Raw, list[str]]] = [
    (
        "pod bound to a bad node name",
        _set(pod("other"), "spec.nodeName", "N1"),
        ['Pod default/other: spec.nodeName: Invalid value: "N1"'],
    ),
    (
        "PriorityClass above the user range",
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "top"}, "value": 2_000_000_000},
        ["PriorityClass top: value: Forbidden: maximum allowed value of a user defined priority is 1000000000"],
    ),
    (
        "Namespace with a dot",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}},
        ['Namespace a.b: metadata.name: Invalid value: "a.b": must not contain dots'],
    ),
    (
        "Service name starting with a digit",
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1web"}},
        ['metadata.name: Invalid value: "1web": a DNS-1035 label must consist of'],
    ),
    (
        "PDB in an old API version",
        {"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"}},
        ['apiVersion: no matches for kind "PodDisruptionBudget" in version "policy/v1beta1"'],
    ),
    (
        "ReplicaSet selector",
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
         "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}}},
        ["spec.selector.matchExpressions[0].values: Required value"],
    ),
]


@pytest.mark.parametrize(("case", "obj", "fragments"), OTHER_OBJECTS, ids=[c[0] for c in OTHER_OBJECTS])
def test_bad_snapshot_object(tmp_path: Path, case: str, obj: Raw, fragments: list[str]) -> None:
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"), obj)
    r = run("explain", "pod", "-f", dump(tmp_path / "pod.yaml", pod()), "--snapshot", snapshot)
    assert_one_line_error(r, f"error: {snapshot}: document 2: ", *fragments)


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        (
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  name: n2\n",
            ['document 1: line 5: key "name" already set in map (kubectl and the API server reject duplicate keys)'],
        ),
        ("apiVersion: v1\nkind: Node\nmetadata: {name: n1\n", ["invalid YAML at line 4 column 1"]),
        ("{\"kind\": \"Node\",", ["invalid JSON at line 1 column 17"]),
        ("[" * 100_000 + "]" * 100_000, ["invalid JSON: nested too deeply to be a Kubernetes object"]),
        ("x: " + "[" * 100_000, ["invalid YAML at line 1", "exceeded maximum nesting depth"]),
        ("", ["the snapshot has no Node objects: there is nothing to schedule onto"]),
        ("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n", ["the snapshot has no Node objects"]),
        ("- 1\n", ["document 1: a document must be a Kubernetes object (a mapping)"]),
        ("\xff", []),
    ],
    ids=["duplicate key", "YAML syntax", "JSON syntax", "deep JSON", "deep YAML", "empty", "no nodes", "a list", "not UTF-8"],
)
def test_bad_snapshot_file(tmp_path: Path, text: str, fragments: list[str]) -> None:
    f = tmp_path / "cluster.yaml"
    if text == "\xff":
        f.write_bytes(b"\xff\xfe")
        fragments = ["not a UTF-8 text file"]
    else:
        f.write_text(text)
    r = run("explain", "pod", "-f", dump(tmp_path / "pod.yaml", pod()), "--snapshot", str(f))
    assert_one_line_error(r, f"error: {f}: ", *fragments)


def test_merge_keys_are_not_duplicates(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "status:\n  capacity: &c {cpu: '4', memory: 8Gi, pods: '110'}\n  allocatable:\n    <<: *c\n    cpu: '2'\n"
    )
    f = tmp_path / "cluster.yaml"
    f.write_text(text)
    r = run("explain", "pod", "-f", dump(tmp_path / "pod.yaml", pod()), "--snapshot", str(f), "-o", "json")
    assert r.exit_code == 0, r.output


def test_stdin_without_nodes() -> None:
    r = run("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", "-", input="")
    assert_one_line_error(r, "error: <stdin>: the snapshot has no Node objects")


def test_stdin_cannot_be_read_twice(tmp_path: Path) -> None:
    r = run("explain", "pod", "-f", "-", "--snapshot", "-", input=yaml.safe_dump(pod()))
    assert_one_line_error(r, "standard input can be read only once (-f - and --snapshot -)")
    r = run("simulate", "-f", "-", "--snapshot", "-", input=yaml.safe_dump(pod()))
    assert_one_line_error(r, "standard input can be read only once")


def test_snapshot_pods_naming_a_missing_priority_class_get_a_note(tmp_path: Path) -> None:
    bound = make_pod("old").priority_class("gold").node("n1").raw
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"), bound)
    r = run("explain", "pod", "-f", dump(tmp_path / "pod.yaml", pod()), "--snapshot", snapshot)
    assert r.exit_code == 0, r.output
    assert "note: 1 pod(s) (e.g. default/old) name PriorityClass 'gold', which is not in the snapshot" in r.stderr


def test_a_priority_given_by_hand_is_a_note(tmp_path: Path) -> None:
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"))
    r = run("explain", "pod", "-f", dump(tmp_path / "pod.yaml", make_pod("web").priority(7).raw), "--snapshot", snapshot)
    assert r.exit_code == 0, r.output
    assert input_notes(r.stderr) == [
        "note: default/web: the API server would refuse spec.priority 7 (the integer value of priority must not be provided "
        "in pod spec; priority admission controller computed 0 from the given PriorityClass name); explained with "
        "priority 7 as given"
    ]


def test_a_missing_namespace_is_a_note(tmp_path: Path) -> None:
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"))
    r = run("explain", "pod", "-f", dump(tmp_path / "pod.yaml", make_pod("web", "shop").raw), "--snapshot", snapshot)
    assert r.exit_code == 0, r.output
    (line,) = input_notes(r.stderr)
    assert line.startswith('note: namespace "shop" is not in the snapshot: the API server would refuse shop/web')
    r = run("explain", "pod", "-f", dump(tmp_path / "pod.yaml", pod()), "--snapshot", snapshot)
    assert input_notes(r.stderr) == []  # "default" always exists


# --------------------------------------------------------------------------- -f with several pods


def test_several_pods_are_each_explained(tmp_path: Path) -> None:
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"))
    two = dump(tmp_path / "pods.yaml", pod("a"), make_pod("b").req(cpu="64").raw)
    r = run("explain", "pod", "-f", two, "--snapshot", snapshot)
    assert r.exit_code == 1  # one of them does not fit
    assert "holds 2 pods: each is explained against the snapshot as it is" in r.stderr
    assert "default/a: schedulable on n1" in r.stdout and "default/b: unschedulable" in r.stdout
    r = run("explain", "pod", "-f", two, "--snapshot", snapshot, "-o", "json")
    assert [t["pod"] for t in json.loads(r.stdout)] == ["default/a", "default/b"]


# --------------------------------------------------------------------------- workloads (simulate / diff-profiles -f)


def deployment(**spec: Any) -> Raw:
    base: Raw = {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
    }
    base.update(spec)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": base}


WORKLOAD_CASES: list[tuple[str, Raw, list[str]]] = [
    ("no selector", _del(deployment(), "spec.selector"), ["Deployment web: spec.selector: Required value"]),
    (
        "selector does not match the template",
        deployment(selector={"matchLabels": {"app": "api"}}),
        ['spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`'],
    ),
    ("empty selector", deployment(selector={}), ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"]),
    ("negative replicas", deployment(replicas=-1), ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]),
    ("no template", _del(deployment(), "spec.template"), ["spec.template: Required value"]),
    (
        "template without containers",
        _set(deployment(), "spec.template.spec.containers", []),
        ["spec.template.spec.containers: Required value"],
    ),
    ("apiVersion", _set(deployment(), "apiVersion", "extensions/v1beta1"), ['no matches for kind "Deployment" in version "extensions/v1beta1"']),
]


@pytest.mark.parametrize(("case", "obj", "fragments"), WORKLOAD_CASES, ids=[c[0] for c in WORKLOAD_CASES])
@pytest.mark.parametrize("command", ["simulate", "diff-profiles"])
def test_bad_workload(tmp_path: Path, case: str, obj: Raw, fragments: list[str], command: str) -> None:
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"))
    f = dump(tmp_path / "web.yaml", obj)
    extra = ["-c", str(ROOT / "profiles" / "bin-packing.yaml")] if command == "diff-profiles" else []
    r = run(command, "-f", f, "--snapshot", snapshot, *extra)
    assert_one_line_error(r, f"error: {f}: document 1: ", *fragments)


def test_a_workload_naming_a_missing_priority_class(tmp_path: Path) -> None:
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"))
    f = dump(tmp_path / "web.yaml", _set(deployment(), "spec.template.spec.priorityClassName", "gold"))
    r = run("simulate", "-f", f, "--snapshot", snapshot)
    assert_one_line_error(r, f"error: {f}: Pod default/web-0: spec.priorityClassName: pods \"web-0\" is forbidden")
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "gold"}, "value": 10}
    f = dump(tmp_path / "web.yaml", _set(deployment(), "spec.template.spec.priorityClassName", "gold"), pc)
    assert run("simulate", "-f", f, "--snapshot", snapshot).exit_code == 0


# --------------------------------------------------------------------------- configuration files


def config(tmp_path: Path, text: str) -> str:
    f = tmp_path / "config.yaml"
    f.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + text)
    return str(f)


CONFIG_CASES: list[tuple[str, str, list[str]]] = [
    (
        "unknown plugin",
        "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NoSuchPlugin\n",
        [
            'profiles[0].plugins.score.enabled[0].name: ScorePlugin "NoSuchPlugin" does not exist',
            "install the distribution that provides it (entry-point group kschedctl.plugins) or pass --plugin-module",
        ],
    ),
    (
        "misspelt plugin",
        "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: TaintTolerations\n",
        ['FilterPlugin "TaintTolerations" does not exist', 'did you mean "TaintToleration"?'],
    ),
    (
        "unknown plugin in multiPoint",
        "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: GPUBinPack\n",
        ['profiles[0].plugins.multiPoint.enabled[0].name: PreFilterPlugin "GPUBinPack" does not exist'],
    ),
    (
        "weight a string",
        "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocality\n        weight: high\n",
        ["profiles[0].plugins.score.enabled[0].weight: got a string, want an integer (kube-scheduler: json: cannot unmarshal"],
    ),
    (
        "duplicate schedulerName",
        "profiles:\n- schedulerName: a\n- schedulerName: a\n",
        ['profiles[1].schedulerName: Duplicate value: "a": profiles[0] has the same schedulerName'],
    ),
    ("unknown field", "parallelizm: 3\n", ['strict decoding error: unknown field "parallelizm"']),
    (
        "duplicate key",
        "parallelism: 3\nparallelism: 4\n",
        ['error converting YAML to JSON: yaml: unmarshal errors: line 4: key "parallelism" already set in map'],
    ),
    ("validation", "percentageOfNodesToScore: 101\n", ["percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"]),
    (
        "plugin args",
        "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 200}\n",
        ["profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 200: not in valid range [0, 100]"],
    ),
]


@pytest.mark.parametrize(("case", "text", "fragments"), CONFIG_CASES, ids=[c[0] for c in CONFIG_CASES])
def test_bad_config(tmp_path: Path, case: str, text: str, fragments: list[str]) -> None:
    cfg = config(tmp_path, text)
    r = run("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--config", cfg)
    assert_one_line_error(r, f"error: {cfg}: ", *fragments)


def test_config_of_a_removed_version_names_no_go_source(tmp_path: Path) -> None:
    f = tmp_path / "config.yaml"
    f.write_text("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n")
    r = run("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--config", str(f))
    assert_one_line_error(
        r,
        f'error: {f}: apiVersion: no kind "KubeSchedulerConfiguration" is registered for version '
        '"kubescheduler.config.k8s.io/v1beta3": kube-scheduler v1.35 reads only kubescheduler.config.k8s.io/v1 '
        "(v1beta3 was removed in v1.29",
    )
    assert ".go" not in r.stderr


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--config", "/nonexistent.yaml"], ["open /nonexistent.yaml: no such file or directory"]),
        (["--plugin-module", "path/to/plugin.py"], ["--plugin-module path/to/plugin.py: no such file or directory"]),
        (
            ["--plugin-module", "no_such_pkg.plugin"],
            ["no module named 'no_such_pkg' on the Python path", "or the path of its file (path/to/plugin.py)"],
        ),
    ],
    ids=["config file missing", "plugin file missing", "plugin module missing"],
)
def test_bad_options(args: list[str], fragments: list[str]) -> None:
    r = run("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, *args)
    assert_one_line_error(r, *fragments)


def test_diff_profiles_unknown_profile_is_bad_usage() -> None:
    r = run(
        "diff-profiles", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO,
        "--config", str(ROOT / "profiles" / "default.yaml"), "--profile", "nope",
    )
    assert_one_line_error(r, '--profile nope: side A', 'has no profile "nope"; its profiles: "default-scheduler"')


# --------------------------------------------------------------------------- check: expectations and scenarios


def scenario(tmp_path: Path, expected: str | None = "selected: {candidates: [n1]}\n") -> Path:
    d = tmp_path / "s1"
    d.mkdir()
    dump(d / "cluster.yaml", node("n1"))
    dump(d / "pod.yaml", pod())
    if expected is not None:
        (d / "expected.yaml").write_text(expected)
    return d


@pytest.mark.parametrize(
    ("expected", "fragments"),
    [
        ("selected: {candidates: [n1]\n", ["expected.yaml: invalid YAML at line 2 column 1"]),
        ("- a\n", ["expected.yaml: document 1: a document must be a Kubernetes object (a mapping)"]),
        ("selected: 1\nselected: 2\n", ['expected.yaml: document 1: line 2: key "selected" already set in map']),
        (None, ["s1: no expected.json or expected.yaml"]),
    ],
    ids=["YAML syntax", "a list", "duplicate key", "missing"],
)
def test_bad_expectations_stop_check(tmp_path: Path, expected: str | None, fragments: list[str]) -> None:
    d = scenario(tmp_path, expected)
    r = run("check", str(d))
    assert_one_line_error(r, *fragments)
    assert "FAIL" not in r.stdout


def test_check_a_scenario_with_a_bad_pod(tmp_path: Path) -> None:
    d = scenario(tmp_path)
    dump(d / "pod.yaml", pod("a"), pod("b"))
    r = run("check", str(d))
    assert_one_line_error(r, f"{d / 'pod.yaml'}: a scenario's pod.yaml holds exactly one Pod, this one holds 2")
    dump(d / "pod.yaml", make_pod("a").priority_class("gold").raw)
    r = run("check", str(d))
    assert_one_line_error(r, f"{d / 'pod.yaml'}: Pod default/a: spec.priorityClassName:")


# --------------------------------------------------------------------------- kubeconfig


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("apiVersion: v1\nclusters: [\n  - {name: x\n", "invalid YAML at line 3 column 3: expected the node content, but found '-'"),
        ("- a\n", "not a kubeconfig (a mapping with clusters, contexts and users)"),
        ("clusters: 5\n", "clusters: must be a list of named entries"),
        (
            "clusters:\n- name: x\n  cluster: 5\ncontexts:\n- name: c\n  context: {cluster: x, user: u}\n"
            "current-context: c\nusers:\n- name: u\n  user: 7\n",
            "not a valid kubeconfig",
        ),
    ],
    ids=["YAML syntax", "a list", "clusters not a list", "entries of the wrong type"],
)
def test_bad_kubeconfig(tmp_path: Path, text: str, fragment: str) -> None:
    kc = tmp_path / "kubeconfig"
    kc.write_text(text)
    r = run("explain", "pod", "web", "--kubeconfig", str(kc))
    assert_one_line_error(r, f"error: kubeconfig {kc}: {fragment}")


# --------------------------------------------------------------------------- where the pods are


def test_pod_in_another_namespace_is_named() -> None:
    r = run("explain", "pod", "train-pending", "-n", "shop", "--snapshot", DEMO)
    assert_one_line_error(
        r, 'pod "train-pending" not found in namespace "shop" of', 'found in namespace "ml" (use -n ml)'
    )


def test_pending_pods_elsewhere_are_counted() -> None:
    r = run("explain", "pending", "--snapshot", DEMO)
    assert r.exit_code == 0
    assert r.stderr.strip() == (
        'note: no pending pods in namespace "default"; 6 pending in other namespaces (batch: 1, ml: 2, shop: 3): '
        "use -A to list them all"
    )


# --------------------------------------------------------------------------- defaulting, checked against the reference


def test_defaulting_scenarios_agree_with_kube_scheduler() -> None:
    r = run("check", str(Path(__file__).parent / "defaulting"))
    assert r.exit_code == 0, r.output
    assert "2 passed, 0 failed" in r.output


def test_one_more_than_the_largest_quantity_is_refused(tmp_path: Path) -> None:
    snapshot = dump(tmp_path / "cluster.yaml", _set(node("n1"), "status.allocatable.memory", "92233720368547759"))
    r = run("explain", "pod", "-f", dump(tmp_path / "pod.yaml", pod()), "--snapshot", snapshot)
    assert_one_line_error(r, 'status.allocatable.memory: Invalid value: "92233720368547759"', "overflows above 92233720368547758")


# --------------------------------------------------------------------------- plugins a configuration names

NOSUCH = "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NoSuchPlugin\n"


@pytest.mark.parametrize(
    "args",
    [
        ["explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO],
        ["explain", "pending", "-A", "--snapshot", DEMO],
        ["simulate", "-f", str(ROOT / "fixtures" / "demo" / "cart.yaml"), "--snapshot", DEMO],
        ["diff-profiles", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO],
    ],
    ids=["explain pod", "explain pending", "simulate", "diff-profiles"],
)
def test_every_command_names_the_file_of_an_unregistered_plugin(tmp_path: Path, args: list[str]) -> None:
    cfg = config(tmp_path, NOSUCH)
    r = run(*args, "--config", cfg)
    assert_one_line_error(
        r, f'error: {cfg}: profiles[0].plugins.score.enabled[0].name: ScorePlugin "NoSuchPlugin" does not exist', "--plugin-module"
    )


def test_check_names_the_file_of_an_unregistered_plugin(tmp_path: Path) -> None:
    d = scenario(tmp_path)
    (d / "config.yaml").write_text(Path(config(tmp_path, NOSUCH)).read_text())
    r = run("check", str(d))
    assert_one_line_error(r, f'error: {d / "config.yaml"}: profiles[0].plugins.score.enabled[0].name: ScorePlugin "NoSuchPlugin"')


def test_plugin_module_by_file_path(tmp_path: Path) -> None:
    pkg = tmp_path / "src" / "myplugins"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "names.py").write_text('PLUGIN_NAME = "PathPlugin"\n')
    (pkg / "plugin.py").write_text(
        "from .names import PLUGIN_NAME as NAME\n\n\n"
        "class PathPlugin:\n    name = NAME\n\n    def filter(self, state, pod, node_info):\n"
        "        from kschedctl.framework.status import Status\n\n        return Status()\n\n\n"
        "def new(args, handle):\n    return PathPlugin()\n"
    )
    r = run("plugins", "--plugin-module", str(pkg / "plugin.py"), "-o", "json")
    assert r.exit_code == 0, r.output
    (entry,) = [p for p in json.loads(r.stdout) if p["name"] == "PathPlugin"]
    assert entry["source"] == f"file {pkg / 'plugin.py'}" and entry["module"] == "myplugins.plugin"
    cfg = config(tmp_path, "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: PathPlugin\n")
    r = run("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--config", cfg,
            "--plugin-module", str(pkg / "plugin.py"), "-o", "json")
    assert r.exit_code == 0, r.output  # the relative import inside the package worked
    r = run("plugins", "--plugin-module", str(tmp_path / "src"))
    assert_one_line_error(r, "a directory must be a Python package (with __init__.py)")
    (tmp_path / "notes.txt").write_text("")
    r = run("plugins", "--plugin-module", str(tmp_path / "notes.txt"))
    assert_one_line_error(r, "not a Python file (.py)")
