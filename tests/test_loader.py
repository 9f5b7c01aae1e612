"""Snapshot loading: formats, API-server defaulting, and one-line errors naming file/document/field."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kschedctl.errors import InputError
from kschedctl.snapshot.loader import load_cluster, load_pods

NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  nodeName: n1
  priorityClassName: high
  containers:
  - name: c
    image: nginx
    resources: {limits: {cpu: 500m, memory: 1Gi}}
    ports: [{containerPort: 80, hostPort: 8080}]
"""
PC = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_multi_document_yaml_and_defaulting(tmp_path: Path) -> None:
    f = write(tmp_path, "c.yaml", "---\n".join([NODE, POD, PC]))
    c = load_cluster([f])
    node = c.nodes[0]
    assert node.allocatable == node.capacity  # allocatable defaults to capacity
    pod = c.pods[0]
    assert pod.namespace == "default"
    assert pod.containers[0].requests["cpu"] * 1000 == 500  # requests default to limits
    assert pod.containers[0].ports[0].protocol == "TCP"
    assert pod.priority == 1000  # from the PriorityClass
    assert pod.preemption_policy == "PreemptLowerPriority"


def test_global_default_priority_class(tmp_path: Path) -> None:
    pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: d}\nvalue: 7\nglobalDefault: true\n"
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n"
    c = load_cluster([write(tmp_path, "a.yaml", pc + "---\n" + pod)])
    assert c.pods[0].priority == 7


def test_kind_list_and_json(tmp_path: Path) -> None:
    lst = {"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}]}
    typed = {"apiVersion": "v1", "kind": "NodeList", "items": [{"metadata": {"name": "n2"}}]}
    c = load_cluster([write(tmp_path, "a.json", json.dumps(lst)), write(tmp_path, "b.json", json.dumps(typed))])
    assert [n.name for n in c.nodes] == ["n1", "n2"]


def test_directory_and_unknown_kinds(tmp_path: Path) -> None:
    write(tmp_path, "1-nodes.yaml", NODE)
    write(tmp_path, "2-cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    write(tmp_path, "ignored.txt", "not yaml: [")
    notes: list[str] = []
    c = load_cluster([str(tmp_path)], warn=notes.append)
    assert len(c.nodes) == 1
    assert notes == ["skipped 1 ConfigMap object(s): kind not used by the scheduler"]


def test_terminal_pods_are_ignored(tmp_path: Path) -> None:
    done = POD.replace("spec:", "status: {phase: Succeeded}\nspec:")
    c = load_cluster([write(tmp_path, "a.yaml", NODE + "---\n" + done)])
    assert c.pods == []
    assert len(c.terminal_pods) == 1


def test_timestamps_stay_strings(tmp_path: Path) -> None:
    node = NODE.replace("metadata: {name: n1,", "metadata: {creationTimestamp: 2025-01-02T03:04:05Z, name: n1,")
    c = load_cluster([write(tmp_path, "a.yaml", node)])
    assert c.nodes[0].meta.creation_timestamp == "2025-01-02T03:04:05Z"


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(NODE))
    assert load_cluster(["-"]).nodes[0].name == "n1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: [1, 2", "a.yaml: invalid YAML at line 2 column 1"),
        ("- 1\n- 2\n", "a.yaml: document 1: a document must be a Kubernetes object"),
        ("apiVersion: v1\nmetadata: {name: x}\n", "a.yaml: document 1: kind: Required value: every object needs a kind"),
        (
            "kind: Node\nmetadata: {}\n",
            "a.yaml: document 1: Node: metadata.name: Required value: name or generateName is required",
        ),
        (
            NODE + "---\n" + POD.replace("cpu: 500m", "cpu: lots"),
            "a.yaml: document 2: Pod p1: spec.containers[0].resources.limits.cpu: quantities must match",
        ),
        ("{bad json", "a.yaml: invalid JSON at line 1 column 2"),
    ],
)
def test_errors_name_file_document_and_field(tmp_path: Path, text: str, message: str) -> None:
    f = write(tmp_path, "a.yaml", text)
    with pytest.raises(InputError) as e:
        load_cluster([f])
    assert str(e.value).startswith(str(tmp_path / message.split(":")[0]) + message[len(message.split(":")[0]):])


def test_missing_file() -> None:
    with pytest.raises(InputError, match="no such file"):
        load_cluster(["/nonexistent/x.yaml"])


def test_load_pods_needs_a_pod(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no Pod object found"):
        load_pods(write(tmp_path, "a.yaml", NODE))
