"""Identical pods share one remedy search (``whatif.twins``, ``explain pending --fix``): copies of one pod
of a controller are one problem, answered once and the same for all, and the output says so."""

from __future__ import annotations

import io
import json
from typing import Any

from rich.console import Console

from kschedctl.config import default_config
from kschedctl.explain.pending import pending_rows
from kschedctl.render.causes import render_groups_table, search_summary
from kschedctl.render.pending import fix_text
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod
from kschedctl.whatif import causes
from kschedctl.whatif.causes import attach_remedies
from kschedctl.whatif.twins import TWIN_REASON, twin_key, twins
from tests.builders import PodBuilder, make_cluster, make_node, make_pod

CFG = default_config()


def replica(name: str, cpu: str = "6", owner: str = "web-rs") -> PodBuilder:
    """A pod of ReplicaSet ``owner`` as its controller makes it: its own name, uid and hostname."""
    return (make_pod(name, "shop").uid(f"uid-{name}").owner("ReplicaSet", owner).labels(app="web", **{"pod-template-hash": "abc"})
            .req(cpu=cpu).set("spec.hostname", name))


def world(pods: list[PodBuilder]) -> tuple[Cluster, list[Pod]]:
    nodes = [make_node(f"n{i}").alloc(cpu="4", memory="16Gi", pods="110") for i in (1, 2)]
    cluster = make_cluster(nodes, pods)
    return cluster, cluster.pending_pods()


def searched(monkeypatch: Any) -> list[str]:
    """The pods whose remedy search actually runs (``find_remedies`` calls), in order."""
    calls: list[str] = []
    real = causes.find_remedies

    def spy(cluster: Cluster, pod: Pod, *args: Any, **kwargs: Any) -> Any:
        calls.append(pod.key)
        return real(cluster, pod, *args, **kwargs)

    monkeypatch.setattr(causes, "find_remedies", spy)
    return calls


def test_five_identical_pods_share_one_search_and_one_answer(monkeypatch: Any) -> None:
    names = [f"web-{c}" for c in "abcde"]
    cluster, pods = world([*(replica(n) for n in names), make_pod("other", "shop").uid("uid-o").req(cpu="5")])
    calls = searched(monkeypatch)
    rows = [r.to_dict() for r in pending_rows(cluster, pods, CFG)]
    totals = attach_remedies(rows, cluster, pods, CFG, jobs=1)
    assert sorted(calls) == ["shop/other", "shop/web-a"]  # one search for the five copies, one for the other pod
    assert (totals["searches"], totals["sharedAnswers"]) == (2, 4)
    by_pod = {r["pod"]: r for r in rows}
    first = by_pod["shop/web-a"]
    assert first["remediesSearch"]["sharedWith"] == [f"shop/{n}" for n in names[1:]]
    assert "sameAs" not in first["remediesSearch"]
    assert first["remedies"] and any(r["helps"] for r in first["remedies"])
    for n in names[1:]:
        row = by_pod[f"shop/{n}"]
        assert row["remediesSearch"]["sameAs"] == {"pod": "shop/web-a", "reason": TWIN_REASON}
        assert [(r["kind"], r["change"], r["patch"], r["verdict"]) for r in row["remedies"]] == [
            (r["kind"], r["change"], r["patch"], r["verdict"]) for r in first["remedies"]]
        assert {r["target"] for r in row["remedies"] if r["side"] == "pod"} == {f"pod shop/{n}"}
        assert row["remediesSearch"]["used"] == first["remediesSearch"]["used"]
        assert fix_text(row).endswith(f"[same as shop/web-a: {TWIN_REASON}]")
    assert fix_text(first).endswith("[also answers 4 identical pods]")
    other = by_pod["shop/other"]["remediesSearch"]
    assert "sameAs" not in other and "sharedWith" not in other
    json.dumps(rows)  # still plain data
    assert "2 searches, 4 pods answered by an identical pod's search (same spec and owner)" in search_summary(totals)


def _add_node(copies: int) -> dict[str, Any]:
    return {"kind": "add-node", "change": "add one node like n1 (node group shape of n1)", "patch": {}, "helps": True,
            "detail": {"copies": copies, "copiesCapped": False}, "verdict": {"text": "schedulable on new-n1"}}


def _group(rows: list[dict[str, Any]], remedy: dict[str, Any]) -> dict[str, Any]:
    rows = [{**r, "outcome": "unschedulable"} for r in rows]
    return {"cause": "Insufficient cpu", "outcome": "unschedulable", "count": len(rows), "pods": [r["pod"] for r in rows],
            "preemptionWouldPlace": 0, "sharedRemedy": remedy, "rows": rows}


def _rendered(group: dict[str, Any]) -> str:
    buf = io.StringIO()
    render_groups_table([group], Console(file=buf, width=300, markup=False, highlight=False, color_system=None),
                        {"budgetText": "b", "reruns": 1, "probes": 1, "seconds": 0.0})
    return buf.getvalue()


def test_a_shared_new_node_says_how_many_of_the_pods_it_holds() -> None:
    """A node added for one copy helps that copy: the group's row says how many of its pods one such node holds."""
    twins_rows = [{"pod": "shop/web-a", "remediesSearch": {"sharedWith": ["shop/web-b", "shop/web-c"]}},
                  *({"pod": f"shop/web-{c}", "remediesSearch": {"sameAs": {"pod": "shop/web-a", "reason": TWIN_REASON}}}
                    for c in "bc")]
    out = _rendered(_group(twins_rows, _add_node(2)))
    assert "one such node has room for 2 of the 3 identical pods: 2 for all" in out
    mixed = [{"pod": "shop/a", "remediesSearch": {}}, {"pod": "shop/b", "remediesSearch": {}}]
    assert "one such node has room for 1 copy of one pod, not for all 2" in _rendered(_group(mixed, _add_node(1)))
    assert "room for" not in _rendered(_group(mixed, _add_node(2)))


def test_pods_of_one_replicaset_with_different_specs_are_not_twins() -> None:
    a, b = replica("web-a").build(), replica("web-b", cpu="8").build()
    assert twin_key(a) != twin_key(b)
    assert twins([a, b]) == {}


def test_the_same_spec_under_another_owner_is_not_a_twin() -> None:
    a, b = replica("web-a").build(), replica("web-b", owner="web-rs2").build()
    assert twin_key(a) != twin_key(b)
    assert twins([a, b]) == {}


def test_bare_pods_and_other_namespaces_are_not_twins() -> None:
    bare = [make_pod(n, "shop").req(cpu="6").build() for n in ("x", "y")]
    assert twin_key(bare[0]) is None and twins(bare) == {}
    other_ns = replica("web-b").ns("dev").build()
    assert twins([replica("web-a").build(), other_ns]) == {}


def test_per_pod_fields_do_not_make_pods_different() -> None:
    a = replica("web-a").label("statefulset.kubernetes.io/pod-name", "web-a").set("spec.nodeName", "").build()
    b = replica("web-b").label("statefulset.kubernetes.io/pod-name", "web-b").build()
    assert twins([a, b]) == {"shop/web-b": "shop/web-a"}
    nominated = replica("web-c").nominated("n1").build()
    assert twins([a, nominated]) == {}


def test_a_cut_short_search_says_so_per_pod() -> None:
    row = {"remedies": [], "remediesSearch": {"notTried": ["add-node"]}}
    assert fix_text(row) == "no single change found (search cut short: its budget ran out)"


def test_a_shared_fix_of_identical_pods_says_it_was_verified_for_one_of_them() -> None:
    rows = [{"pod": "shop/web-a", "remediesSearch": {"sharedWith": ["shop/web-b"]}},
            {"pod": "shop/web-b", "remediesSearch": {"sameAs": {"pod": "shop/web-a", "reason": TWIN_REASON}}},
            {"pod": "shop/other", "remediesSearch": {}}]
    lower = {"kind": "lower-request", "change": "lower container c0's cpu request to 4", "patch": {}, "helps": True,
             "detail": {}, "verdict": {"text": "schedulable on n1"}}
    assert "(verified for one of 2 identical pods, not for all at once)" in _rendered(_group(rows, lower))
    assert "verified for one of" not in _rendered(_group(rows[2:], lower))
