"""The snapshot cache's Cluster layer: a second load of the same texts makes the same Cluster without a document."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from kschedctl.kube.versions import DEFAULT_FEATURES, resolve_features
from kschedctl.snapshot import cache, loader, modelcache
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.loader import load_cluster
from kschedctl.snapshot.model import KubeObject, Node, Pod
from tests.plugins.test_v137_rules import BIND_MOUNT_POD

CONFORMANCE = Path(__file__).parent / "conformance"


@pytest.fixture(autouse=True)
def every_text_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "MIN_SIZE", 0)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(cache.DISABLE_ENV, raising=False)


def models(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "xdg" / "kschedctl" / "snapshots").glob("*.model"))


def forbid_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("documents read although the cache holds the Cluster")

    monkeypatch.setattr(loader, "iter_documents", fail)


def plain(value: Any) -> Any:
    """A value compared field by field (model objects by their slots, a pod's manifest unpacked)."""
    if isinstance(value, Pod):
        fields = {s: plain(getattr(value, s)) for s in Pod.__slots__ if s not in ("_raw", "_packed", "_info")}
        return ("Pod", fields, value.raw)
    if isinstance(value, Node | KubeObject):
        return (type(value).__name__, {s: plain(getattr(value, s)) for s in type(value).__slots__})
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)})
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def described(cluster: Cluster) -> Any:
    return plain(
        {
            "nodes": cluster.nodes,
            "pods": cluster.pods,
            "terminal": cluster.terminal_pods,
            "objects": dict(cluster.objects),
            "notes": cluster.notes,
            "by key": sorted(cluster._pods_by_key),
        }
    )


#: Every other scenario of the corpus (all of them: twice the time, the same kinds of objects).
SCENARIOS = sorted(d for d in CONFORMANCE.iterdir() if (d / "cluster.yaml").is_file())[::2]


def test_the_conformance_clusters_come_back_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(modelcache, "CHUNK", 3)  # several chunks of pods and nodes
    monkeypatch.setattr(cache, "MAX_ENTRIES", 10_000)  # every scenario kept
    built = {}
    for d in SCENARIOS:
        try:
            built[d] = described(load_cluster([str(d / "cluster.yaml")]))
        except Exception:  # a scenario whose snapshot is refused: nothing kept, nothing to compare
            continue
    assert len(built) > 100
    forbid_documents(monkeypatch)
    for d, expected in built.items():
        assert described(load_cluster([str(d / "cluster.yaml")])) == expected, d.name


def write_snapshot(tmp_path: Path) -> Path:
    f = tmp_path / "cluster.yaml"
    f.write_text((CONFORMANCE / "dev-002-pod-affinity-required" / "cluster.yaml").read_text())
    return f


def test_the_notes_are_given_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "cluster.yaml"
    f.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', pods: '9'}}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\n"
        "spec: {nodeName: n1, priorityClassName: gone, containers: [{name: c, image: i}]}\n"
    )
    first: list[str] = []
    load_cluster([str(f)], warn=first.append)
    assert first and len(models(tmp_path)) == 1
    forbid_documents(monkeypatch)
    again: list[str] = []
    load_cluster([str(f)], warn=again.append)
    assert again == first


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],
        lambda b: b[:-1] + bytes([b[-1] ^ 0xFF]),
        lambda b: b"not a cache file at all",
        lambda b: cache.MAGIC + b"\0" * 32 + b"\xff\xfe",
    ],
)
def test_a_damaged_entry_is_built_again(tmp_path: Path, damage: Any) -> None:
    f = write_snapshot(tmp_path)
    expected = described(load_cluster([str(f)]))
    (entry,) = models(tmp_path)
    entry.write_bytes(damage(entry.read_bytes()))
    assert described(load_cluster([str(f)])) == expected
    assert described(load_cluster([str(f)])) == expected  # from the entry written again


def test_an_entry_of_another_shape_is_ignored(tmp_path: Path) -> None:
    f = write_snapshot(tmp_path)
    expected = described(load_cluster([str(f)]))
    (entry,) = models(tmp_path)
    cache.write_records(entry, [("something", "else"), ("end",)], "*.model")
    assert described(load_cluster([str(f)])) == expected


def test_the_entry_belongs_to_the_features_and_the_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = write_snapshot(tmp_path)
    load_cluster([str(f)])
    other = resolve_features(DEFAULT_FEATURES.minor - 1)
    load_cluster([str(f)], features=other)
    assert len(models(tmp_path)) == 2
    monkeypatch.setattr(modelcache, "_code_digest", lambda: "another version")
    load_cluster([str(f)])
    assert len(models(tmp_path)) == 3
    monkeypatch.setattr(modelcache, "_code_digest", lambda: "")  # no sources to tell versions apart: nothing kept
    load_cluster([str(f)])
    assert len(models(tmp_path)) == 3


def test_an_edited_file_is_built_again(tmp_path: Path) -> None:
    f = write_snapshot(tmp_path)
    load_cluster([str(f)])
    f.write_text(f.read_text().replace("name: ", "name: x", 1))
    assert load_cluster([str(f)]).nodes[0].name.startswith("x") or len(models(tmp_path)) == 2
    assert len(models(tmp_path)) == 2


def test_stdin_and_a_disabled_cache_keep_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = write_snapshot(tmp_path)
    assert loader.file_keys(["-"]) is None
    monkeypatch.setenv(cache.DISABLE_ENV, "1")
    load_cluster([str(f)])
    assert models(tmp_path) == []




def test_the_gates_a_file_shows_are_kept_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kschedctl.snapshot.source import FileSource

    f = tmp_path / "pods.yaml"
    f.write_text(BIND_MOUNT_POD)
    v137 = resolve_features(37)
    shown = FileSource([str(f)]).shown_gates(v137)
    assert set(shown) == {"VolumeBindMountOptions"}

    def fail(paths: list[str]) -> None:
        raise AssertionError("documents read although the cache holds what they show")

    monkeypatch.setattr(loader, "read_documents", fail)
    assert FileSource([str(f)]).shown_gates(v137) == shown
    other = resolve_features(37, {"VolumeBindMountOptions": True})
    with pytest.raises(AssertionError):
        FileSource([str(f)]).shown_gates(other)  # other features: looked at again


def test_pods_of_one_shape_share_their_parsed_affinity_not_their_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An affinity read back once serves every pod that had the same one (it is not changed once parsed);
    each pod keeps its own list of spread constraints."""
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: a, labels: {{app: x}}}}\n"
        "spec:\n  nodeName: n1\n  containers: [{{name: c, image: i}}]\n"
        "  affinity: {{podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: "
        "[{{labelSelector: {{matchLabels: {{app: x}}}}, topologyKey: kubernetes.io/hostname}}]}}}}\n"
        "  topologySpreadConstraints: [{{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, "
        "labelSelector: {{matchLabels: {{app: x}}}}}}]\n"
    )
    f = tmp_path / "cluster.yaml"
    f.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', pods: '9'}}\n---\n"
        + pod.format(name="p1") + "---\n" + pod.format(name="p2")
    )
    expected = described(load_cluster([str(f)]))
    forbid_documents(monkeypatch)
    cluster = load_cluster([str(f)])
    assert described(cluster) == expected
    p1, p2 = cluster.pods
    assert p1.affinity is p2.affinity is not None
    assert p1.topology_spread_constraints == p2.topology_spread_constraints
    assert p1.topology_spread_constraints is not p2.topology_spread_constraints
