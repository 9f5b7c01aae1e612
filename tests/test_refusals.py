"""What the API server (or kubectl, or kube-scheduler's decoder) refuses is refused here too, with its
words: exit 2, nothing on stdout, one line on stderr naming the file, the document and the field.

Each table row breaks one thing in an otherwise valid input and gives the whole error line expected;
the parsers involved (JSON objects with repeated keys) also get a property test.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.config import load_config
from kschedctl.errors import ClusterAccessError, ConfigError, InputError
from kschedctl.snapshot.live import check_kubeconfig
from kschedctl.snapshot.loader import parse_documents
from tests.builders import make_node, make_pod
from tests.test_bad_input import DEMO, Raw, config, deployment, dump, node, pod, run

DEEP = "[" * 100_000 + "]" * 100_000


def assert_refused(r: Any, line: str) -> None:
    """Exit 2, nothing on stdout, and exactly ``line`` on stderr."""
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert r.stdout == ""
    assert r.stderr.strip() == line


def explain(tmp_path: Path, *objs: Raw, the_pod: Raw | None = None) -> tuple[Any, str]:
    """``explain pod`` of a valid pod (or ``the_pod``) against a snapshot of one node and ``objs``."""
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"), *objs)
    pod_file = dump(tmp_path / "pod.yaml", the_pod or pod())
    return run("explain", "pod", "-f", pod_file, "--snapshot", snapshot), snapshot


def explain_text(tmp_path: Path, name: str, text: str) -> tuple[Any, Path]:
    """``explain pod`` of a valid pod against a snapshot file ``name`` holding ``text``."""
    snapshot = tmp_path / name
    snapshot.write_text(text)
    return run("explain", "pod", "-f", dump(tmp_path / "pod.yaml", pod()), "--snapshot", str(snapshot)), snapshot


# --------------------------------------------------------------------------- 10: deep nesting


def test_deep_config_names_the_file(tmp_path: Path) -> None:
    for text in ("x: " + DEEP + "\n", DEEP):
        cfg = config(tmp_path, text) if text.startswith("x") else str(tmp_path / "deep.json")
        if not text.startswith("x"):
            Path(cfg).write_text(text)
        r = run("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--config", cfg)
        assert_refused(r, f"error: {cfg}: error converting YAML to JSON: yaml: nested too deeply to be a Kubernetes object")


def test_deep_kubeconfig_names_the_file(tmp_path: Path) -> None:
    kc = tmp_path / "kubeconfig"
    kc.write_text("apiVersion: v1\nclusters: " + DEEP + "\n")
    r = run("explain", "pod", "web", "--kubeconfig", str(kc))
    assert_refused(r, f"error: kubeconfig {kc}: invalid YAML: nested too deeply to be a Kubernetes object")


CONFIG_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
SHAPES = st.text(alphabet="[]{}:- ,\nabx0\"'", max_size=120) | st.integers(0, 1200).map(lambda n: "x: " + "[" * n)


@given(SHAPES)
@settings(max_examples=40, deadline=None)
def test_any_config_or_kubeconfig_text_is_read_or_one_error(text: str) -> None:
    """Whatever the nesting, a --config file or a kubeconfig is read or refused with one line naming it."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "f.yaml"
        path.write_text(CONFIG_HEAD + text)
        try:
            load_config(str(path))
        except ConfigError as e:
            assert str(e).startswith(f"{path}: ") and "\n" not in str(e)
        path.write_text(text)
        try:
            check_kubeconfig(str(path))
        except ClusterAccessError as e:
            assert str(e).startswith(f"kubeconfig {path}: ") and "\n" not in str(e)


# --------------------------------------------------------------------------- 11-13, 15: objects


def _with(path: list[str | int], value: Any) -> Callable[[Raw], Raw]:
    def breaks(raw: Raw) -> Raw:
        cur: Any = raw
        for p in path[:-1]:
            cur = cur[p] if isinstance(p, int) or p in cur else cur.setdefault(p, {})
        cur[path[-1]] = value
        return raw

    return breaks


def _del(path: list[str | int]) -> Callable[[Raw], Raw]:
    def breaks(raw: Raw) -> Raw:
        cur: Any = raw
        for p in path[:-1]:
            cur = cur[p]
        del cur[path[-1]]
        return raw

    return breaks


POD = "Pod default/web"
#: (id, how the pod of -f is broken, the error line after "error: <pod file>: document 1: ")
POD_CASES: list[tuple[str, Callable[[Raw], Raw], str]] = [
    (
        "priority above int32",
        _with(["spec", "priority"], 3_000_000_000),
        f"{POD}: spec.priority: json: cannot unmarshal number 3000000000 into Go struct field PodSpec.spec.priority "
        "of type int32",
    ),
    (
        "priority below int32",
        _with(["spec", "priority"], -2_147_483_649),
        f"{POD}: spec.priority: json: cannot unmarshal number -2147483649 into Go struct field PodSpec.spec.priority "
        "of type int32",
    ),
    (
        "container port above int32",
        lambda p: make_pod("web").host_port(8080, container_port=3_000_000_000).raw,
        f"{POD}: spec.containers[0].ports[0].containerPort: json: cannot unmarshal number 3000000000 into Go struct "
        "field ContainerPort.spec.containers.ports.containerPort of type int32",
    ),
    (
        "node affinity weight above int32",
        lambda p: make_pod("web").node_affinity_preferred(99999999999999999999, [{"key": "a", "operator": "Exists"}]).raw,
        f"{POD}: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: json: cannot "
        "unmarshal number 99999999999999999999 into Go struct field PreferredSchedulingTerm.spec.affinity.nodeAffinity"
        ".preferredDuringSchedulingIgnoredDuringExecution.weight of type int32",
    ),
    (
        "spread maxSkew above int32",
        lambda p: make_pod("web").spread(3_000_000_000, "zone").raw,
        f"{POD}: spec.topologySpreadConstraints[0].maxSkew: json: cannot unmarshal number 3000000000 into Go struct "
        "field TopologySpreadConstraint.spec.topologySpreadConstraints.maxSkew of type int32",
    ),
    ("container without image", _del(["spec", "containers", 0, "image"]), f"{POD}: spec.containers[0].image: Required value"),
    ("container with empty image", _with(["spec", "containers", 0, "image"], ""), f"{POD}: spec.containers[0].image: Required value"),
    (
        "init container without image",
        lambda p: _del(["spec", "initContainers", 0, "image"])(make_pod("web").init_container("init").raw),
        f"{POD}: spec.initContainers[0].image: Required value",
    ),
    (
        "host port twice in one container",
        lambda p: make_pod("web").host_port(8080).host_port(8080, container_port=80).raw,
        f'{POD}: spec.containers[0].ports[1].hostPort: Duplicate value: "TCP//8080"',
    ),
    (
        "host port in two containers (protocol defaulted)",
        lambda p: _del(["spec", "containers", 1, "ports", 0, "protocol"])(
            make_pod("web").container("c0").host_port(8080).container("c1").host_port(8080, container_port=81).raw
        ),
        f'{POD}: spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"',
    ),
    (
        "host port twice on one host IP",
        lambda p: make_pod("web").host_port(53, "UDP", "10.0.0.1").host_port(53, "UDP", "10.0.0.1", 54).raw,
        f'{POD}: spec.containers[0].ports[1].hostPort: Duplicate value: "UDP/10.0.0.1/53"',
    ),
]


@pytest.mark.parametrize(("case", "breaks", "line"), POD_CASES, ids=[c[0] for c in POD_CASES])
def test_pod_refused(tmp_path: Path, case: str, breaks: Callable[[Raw], Raw], line: str) -> None:
    r, _ = explain(tmp_path, the_pod=breaks(pod()))
    assert_refused(r, f"error: {tmp_path / 'pod.yaml'}: document 1: {line}")


#: Host ports the API server accepts: other protocol, other host IP, init containers (run one by one).
ACCEPTED_PORTS: list[tuple[str, Raw]] = [
    ("other protocol", make_pod("web").host_port(53, "UDP").host_port(53, "TCP", container_port=54).raw),
    ("other host IP", make_pod("web").host_port(80, host_ip="10.0.0.1").host_port(80, host_ip="10.0.0.2", container_port=81).raw),
    (
        "init containers one after the other",
        _with(["spec", "initContainers"], [
            {"name": f"i{k}", "image": "busybox", "ports": [{"containerPort": 80, "hostPort": 8080}]} for k in (0, 1)
        ])(make_pod("web").raw),
    ),
]


@pytest.mark.parametrize(("case", "raw"), ACCEPTED_PORTS, ids=[c[0] for c in ACCEPTED_PORTS])
def test_host_ports_the_api_server_accepts(tmp_path: Path, case: str, raw: Raw) -> None:
    r, _ = explain(tmp_path, the_pod=raw)
    assert r.exit_code == 0, r.output


def _pv(operator: str) -> Raw:
    term = {"matchExpressions": [{"key": "zone", "operator": operator, "values": ["a"]}]}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv"},
        "spec": {"capacity": {"storage": "1Gi"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}}},
    }


def _device_class(expression: str) -> Raw:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def _claim(expression: str) -> Raw:
    request = {"name": "r", "exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression": expression}}]}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "claim", "namespace": "default"},
        "spec": {"devices": {"requests": [request]}},
    }


#: (id, an object of the snapshot, the error line after "error: <snapshot>: document 2: ")
OBJECT_CASES: list[tuple[str, Raw, str]] = [
    (
        "PersistentVolume node affinity operator",
        _pv("Bogus"),
        'PersistentVolume pv: spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator: '
        'Invalid value: "Bogus": not a valid selector operator',
    ),
    (
        "PersistentVolume node affinity without required",
        {**_pv("In"), "spec": {"nodeAffinity": {}}},
        "PersistentVolume pv: spec.nodeAffinity.required: Required value: must specify required node constraints",
    ),
    (
        "PriorityClass value above int32",
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "top"}, "value": 3_000_000_000},
        "PriorityClass top: value: json: cannot unmarshal number 3000000000 into Go struct field PriorityClass.value "
        "of type int32",
    ),
    (
        "ReplicaSet replicas above int32",
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "default"},
         "spec": {"replicas": 99999999999999999999, "selector": {"matchLabels": {"app": "web"}}}},
        "ReplicaSet default/rs: spec.replicas: json: cannot unmarshal number 99999999999999999999 into Go struct "
        "field ReplicaSetSpec.spec.replicas of type int32",
    ),
    (
        "DeviceClass selector syntax",
        _device_class("device.driver == "),
        'DeviceClass gpu: spec.selectors[0].cel.expression: Invalid value: "device.driver == ": compilation failed: '
        "ERROR: <input>:1:18: Syntax error: mismatched input '<EOF>' expecting expression",
    ),
    (
        "ResourceClaim selector field",
        _claim("device.nope"),
        'ResourceClaim default/claim: spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: '
        "\"device.nope\": compilation failed: ERROR: <input>:1:7: undefined field 'nope'",
    ),
    (
        "ResourceClaim selector not boolean",
        _claim('device.driver + "x"'),
        'ResourceClaim default/claim: spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: '
        '"device.driver + \\"x\\"": must evaluate to bool or the unknown type, not string',
    ),
    (
        # an attribute is of unknown type, but adding an int can only be the int overload: an int (cel-go's checker)
        "DeviceClass selector int from an attribute",
        _device_class("device.attributes['x'].foo + 1"),
        'DeviceClass gpu: spec.selectors[0].cel.expression: Invalid value: "device.attributes[\'x\'].foo + 1": '
        "must evaluate to bool or the unknown type, not int",
    ),
]


@pytest.mark.parametrize(("case", "obj", "line"), OBJECT_CASES, ids=[c[0] for c in OBJECT_CASES])
def test_snapshot_object_refused(tmp_path: Path, case: str, obj: Raw, line: str) -> None:
    r, snapshot = explain(tmp_path, obj)
    assert_refused(r, f"error: {snapshot}: document 2: {line}")


def test_a_valid_selector_is_loaded(tmp_path: Path) -> None:
    r, _ = explain(tmp_path, _device_class('device.driver == "gpu.example.com"'), _claim("true"))
    assert r.exit_code == 0, r.output


def test_replicas_above_int32(tmp_path: Path) -> None:
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"))
    f = dump(tmp_path / "deploy.yaml", deployment(replicas=99999999999999999999))
    r = run("simulate", "-f", f, "--snapshot", snapshot)
    assert_refused(
        r,
        f"error: {f}: document 1: Deployment web: spec.replicas: json: cannot unmarshal number 99999999999999999999 "
        "into Go struct field DeploymentSpec.spec.replicas of type int32",
    )


def test_config_weight_above_int32(tmp_path: Path) -> None:
    cfg = config(tmp_path, "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocality\n        weight: 3000000000\n")
    r = run("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--config", cfg)
    assert_refused(
        r,
        f"error: {cfg}: profiles[0].plugins.score.enabled[0].weight: got 3000000000, want an integer (kube-scheduler: "
        "json: cannot unmarshal number 3000000000 into Go struct field Plugin.profiles.plugins.score.enabled.weight "
        "of type int32)",
    )


# --------------------------------------------------------------------------- 16: JSON with a key set twice


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "name": "n2"}}',
            'document 1: strict decoding error: duplicate field "metadata.name"',
        ),
        (
            '[{"kind": "Node", "metadata": {"name": "n1"}}, {"kind": "Node", "metadata": {"name": "n2",'
            ' "labels": {"a": "1", "a": "2"}}}]',
            'document 2: strict decoding error: duplicate field "metadata.labels.a"',
        ),
        (
            '{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n1"}, "kind": "Node"}]}',
            'document 1: strict decoding error: duplicate field "items[0].kind"',
        ),
    ],
    ids=["metadata.name", "second document", "in a List"],
)
def test_json_key_set_twice(tmp_path: Path, text: str, line: str) -> None:
    r, snapshot = explain_text(tmp_path, "cluster.json", text)
    assert_refused(r, f"error: {snapshot}: {line} (kubectl and the API server reject duplicate keys)")


KEYS = st.sampled_from(["a", "b", "c"])
JSON_VALUES = st.recursive(
    st.integers(0, 9) | st.just("x"),
    lambda inner: st.lists(st.tuples(KEYS, inner), max_size=4) | st.lists(inner, max_size=3),
    max_leaves=12,
)


def _text(v: Any) -> str:
    """JSON text of ``v``, where a list of (key, value) tuples is an object written with its keys as they are."""
    if isinstance(v, list) and v and all(isinstance(p, tuple) for p in v):
        return "{" + ", ".join(f"{json.dumps(k)}: {_text(x)}" for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_text(x) for x in v) + "]"
    return json.dumps(v)


def _repeats(v: Any) -> bool:
    if isinstance(v, list) and v and all(isinstance(p, tuple) for p in v):
        keys = [k for k, _ in v]
        return len(set(keys)) < len(keys) or any(_repeats(x) for _, x in v)
    return isinstance(v, list) and any(_repeats(x) for x in v)


@given(st.lists(st.tuples(KEYS, JSON_VALUES), max_size=4))
def test_json_repeated_keys_are_found_exactly_when_a_key_repeats(pairs: list[tuple[str, Any]]) -> None:
    obj = [("kind", "Node"), ("metadata", [("name", "n")]), ("spec", pairs)]
    text = _text(obj)
    try:
        list(parse_documents("f.json", text))
    except InputError as e:
        assert _repeats(obj), str(e)
        assert str(e).startswith('f.json: document 1: strict decoding error: duplicate field "spec')
        return
    assert not _repeats(obj)


# --------------------------------------------------------------------------- 17: two objects of one name


def test_two_nodes_of_one_name_in_one_file(tmp_path: Path) -> None:
    r, snapshot = explain(tmp_path, node("n1"))
    assert_refused(r, f'error: {snapshot}: document 2: Node n1: nodes "n1" already exists')


def test_two_pods_of_one_name_in_one_file(tmp_path: Path) -> None:
    r, snapshot = explain(tmp_path, pod("other"), pod("other"))
    assert_refused(r, f'error: {snapshot}: document 3: Pod default/other: pods "other" already exists')


def test_across_snapshot_files_the_later_wins(tmp_path: Path) -> None:
    first = dump(tmp_path / "a.yaml", make_node("n1").alloc(cpu="1", pods="110").raw)
    second = dump(tmp_path / "b.yaml", make_node("n1").alloc(cpu="8", pods="110").raw)
    big = dump(tmp_path / "pod.yaml", make_pod("web").req(cpu="4").raw)
    r = run("explain", "pod", "-f", big, "--snapshot", first, "--snapshot", second)
    assert r.exit_code == 0, r.output
    assert f"note: Node n1 is in both {first} and {second}: the one in {second} (given later) is used" in r.stderr
    r = run("explain", "pod", "-f", big, "--snapshot", second, "--snapshot", first)
    assert r.exit_code == 1  # now the 1-cpu node is the one used


# --------------------------------------------------------------------------- 18: messages that said something else


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("apiVersion: v1\nkind: List\nitems: {a: 1}\n", "document 1: List: items: must be a list of objects, not a mapping"),
        ("apiVersion: v1\nkind: NodeList\nitems: web\n", "document 1: NodeList: items: must be a list of objects, not a string"),
        ("apiVersion: v1\nkind: Pod\nmetadata: [web]\n", "document 1: Pod: metadata: must be a mapping, not a list"),
    ],
    ids=["List items a mapping", "NodeList items a string", "metadata a list"],
)
def test_what_is_really_wrong(tmp_path: Path, text: str, line: str) -> None:
    r, snapshot = explain_text(tmp_path, "cluster.yaml", text)
    assert_refused(r, f"error: {snapshot}: {line}")


def test_a_list_inside_a_list_is_flattened(tmp_path: Path) -> None:
    inner = {"apiVersion": "v1", "kind": "List", "items": [node("n1")]}
    r, _ = explain_text(tmp_path, "cluster.yaml", yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [inner]}))
    assert r.exit_code == 0, r.output
    assert "schedulable on n1" in r.stdout


def test_a_pod_without_kind(tmp_path: Path) -> None:
    raw = pod()
    del raw["kind"]
    r, _ = explain(tmp_path, the_pod=raw)
    assert_refused(r, f"error: {tmp_path / 'pod.yaml'}: document 1: kind: Required value: every object needs a kind")


def test_a_directory_that_cannot_be_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "snapshots"
    locked.mkdir()
    real = os.scandir

    def scandir(path: Any = ".") -> Any:
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)  # tests run as root, whom chmod does not stop
    r = run("explain", "pod", "-f", dump(tmp_path / "pod.yaml", pod()), "--snapshot", str(locked))
    assert_refused(r, f"error: {locked}: permission denied")


def test_kubeconfig_that_is_a_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path))
    assert_refused(run("explain", "pod", "web"), f"error: kubeconfig {tmp_path} (from KUBECONFIG): is a directory")
    assert_refused(run("explain", "pod", "web", "--kubeconfig", str(tmp_path)), f"error: kubeconfig {tmp_path}: is a directory")


# --------------------------------------------------------------------------- 19: a plugin enabled twice


def test_plugin_enabled_twice_names_the_entry(tmp_path: Path) -> None:
    cfg = config(tmp_path, "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocality\n      - name: ImageLocality\n")
    r = run("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--config", cfg)
    assert_refused(r, f'error: {cfg}: profiles[0].plugins.score.enabled[1]: plugin "ImageLocality" already registered as "ScorePlugin"')
