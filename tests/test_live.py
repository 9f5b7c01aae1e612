"""Live clusters, against a real API server's recorded answers served from a local HTTP server.

The real ``kubernetes`` client talks to ``tests/apiserver.py``, which serves the JSON a
kube-apiserver returned (tests/recordings/), authorizes every request against the shipped
read-only ClusterRole, and reproduces paging and the error answers. The central promise:
``snapshot`` then ``explain --snapshot`` gives the same trace as ``explain`` on the served
cluster, and both agree with the reference scheduler's expected.json for that cluster.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.check.scenario import compare
from kschedctl.cli.main import app
from kschedctl.cli.options import parse_duration
from kschedctl.errors import UsageError
from kschedctl.snapshot.cluster import KNOWN_KINDS
from kschedctl.snapshot.live import LiveCluster, LiveOptions, Request, forbidden_message
from kschedctl.snapshot.loader import load_cluster
from kschedctl.snapshot.source import POD, RESOURCES, redact
from tests.apiserver import (
    CLUSTERROLE,
    RECORDINGS,
    RecordedAPIServer,
    allowed,
    closed_port_url,
    load_rules,
    recording_name,
    write_kubeconfig,
)
from tests.recorded_source import RecordingsSource, kind_counts

SHARED = Path(__file__).parents[2] / "shared" / "recordings" / RECORDINGS.name
PENDING = "web-7c9f8d6b4-new01"
BOUND = "cart-7c9f8d6b4-25wk4"  # a Running pod of namespace shop, bound to ip-10-0-3-21.ec2.internal
runner = CliRunner()
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args))


def one_error_line(r: Any) -> str:
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1, r.output
    assert lines[0].startswith("error: ")
    return str(lines[0])


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No kubeconfig and no in-cluster environment unless a test sets one up."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return tmp_path


@pytest.fixture
def server(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordedAPIServer]:
    with RecordedAPIServer() as srv:
        monkeypatch.setenv("KUBECONFIG", str(srv.kubeconfig(isolated / "kubeconfig")))
        yield srv


def serve(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **modes: Any) -> RecordedAPIServer:
    srv = RecordedAPIServer(**modes).__enter__()
    monkeypatch.setenv("KUBECONFIG", str(srv.kubeconfig(tmp_path / "kubeconfig")))
    return srv


def recorded_counts() -> dict[str, int]:
    out = {}
    for res in RESOURCES:
        f = RECORDINGS / recording_name(res.list_path())
        if res.optional and not f.is_file():
            continue  # an alpha API this recorded server does not serve
        data = json.loads(f.read_text())
        out[res.kind] = len(data["items"])
    return out


# --------------------------------------------------------------------------- snapshot


def test_snapshot_writes_every_kind_and_reads_back(server: RecordedAPIServer, tmp_path: Path) -> None:
    out = tmp_path / "cluster.yaml"
    r = invoke("snapshot", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert f"wrote 261 objects of 18 kinds to {out}" in r.output
    text = out.read_text()
    assert text.startswith("# kschedctl snapshot of context \"recorded\"")
    assert "Kubernetes v1.36.2" in text.splitlines()[0]
    doc = load_yaml(text)
    assert doc["kind"] == "List"
    assert all(i.get("kind") and i.get("apiVersion") for i in doc["items"])
    # APIs this v1.36 server does not serve: the alpha pod groups, and DeviceTaintRules as v1 (v1.37's)
    assert {i["kind"] for i in doc["items"]} == set(KNOWN_KINDS) - {"PodGroup", "DeviceTaintRule"}
    assert "managedFields:" not in text  # redacted by default (the header only names it)
    cluster = load_cluster([str(out)])
    counts = kind_counts(cluster)
    assert counts == {k: n for k, n in recorded_counts().items() if n}
    assert counts == kind_counts(RecordingsSource(RECORDINGS).load())


def test_snapshot_json_no_redact_keeps_managed_fields(server: RecordedAPIServer, tmp_path: Path) -> None:
    out = tmp_path / "cluster.json"
    r = invoke("snapshot", "-o", str(out), "--no-redact")
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    pods = [i for i in doc["items"] if i["kind"] == "Pod"]
    assert all("managedFields" in p["metadata"] for p in pods)


def test_snapshot_to_stdout(server: RecordedAPIServer) -> None:
    r = invoke("snapshot")
    assert r.exit_code == 0, r.output
    assert load_yaml(r.stdout)["kind"] == "List"


def test_paging_follows_continue_tokens(server: RecordedAPIServer, tmp_path: Path) -> None:
    out = tmp_path / "cluster.yaml"
    r = invoke("snapshot", "-o", str(out), "--chunk-size", "100")
    assert r.exit_code == 0, r.output
    pod_requests = [s for s in server.seen if s.path == "/api/v1/pods"]
    page1 = json.loads((RECORDINGS / "api_v1_pods__limit=100_page1.json").read_text())
    assert [s.query for s in pod_requests] == [
        {"limit": "100"},
        {"limit": "100", "continue": page1["metadata"]["continue"]},
    ]
    assert len([i for i in load_yaml(out.read_text())["items"] if i["kind"] == "Pod"]) == 150


def test_progress_is_reported_per_page(server: RecordedAPIServer) -> None:
    events: list[tuple[str, int, int | None]] = []
    live = LiveCluster(LiveOptions(chunk_size=100))
    items = live.list_items(POD, progress=lambda *e: events.append(e))
    assert items is not None and len(items) == 150
    assert events == [("pods", 100, 150), ("pods", 150, 150)]


def test_expired_continue_token_restarts_the_list(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    srv = serve(monkeypatch, isolated, expire_continue_once=True)
    try:
        items = LiveCluster(LiveOptions(chunk_size=100)).list_items(POD)
    finally:
        srv.__exit__()
    assert items is not None and len(items) == 150
    assert [("continue" in s.query) for s in srv.seen if s.path == "/api/v1/pods"] == [False, True, False, True]


def test_the_next_page_is_asked_for_while_the_caller_works_on_this_one(server: RecordedAPIServer) -> None:
    """list_pages asks for page 2 before it hands page 1 over: the server answers while page 1 is written."""
    pages = LiveCluster(LiveOptions(chunk_size=100)).list_pages(POD)
    first = next(pages)
    deadline = time.monotonic() + 120  # a bound for a broken prefetch, not a race: the loop ends when it is seen
    while sum(s.path == "/api/v1/pods" for s in server.seen) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [("continue" in s.query) for s in server.seen if s.path == "/api/v1/pods"] == [False, True]
    assert [len(first or []), *(len(p or []) for p in pages)] == [100, 50]


def test_recorded_pages_read_as_the_unpaged_list(server: RecordedAPIServer) -> None:
    """The real server's pages (limit=100: page 1 with continue and remainingItemCount, page 2 with
    neither) give the unpaged list's pods, in its order, each with kind and apiVersion, redacted."""
    page1 = json.loads((RECORDINGS / "api_v1_pods__limit=100_page1.json").read_text())
    page2 = json.loads((RECORDINGS / "api_v1_pods__limit=100_page2.json").read_text())
    assert page1["metadata"]["remainingItemCount"] == len(page2["items"]) and "continue" not in page2["metadata"]
    pages = list(LiveCluster(LiveOptions(chunk_size=100)).list_pages(POD))
    assert [len(p or []) for p in pages] == [100, 50]
    whole = LiveCluster(LiveOptions(chunk_size=500)).list_items(POD)
    assert whole is not None and [i for p in pages for i in p or []] == whole
    unpaged = json.loads((RECORDINGS / "api_v1_pods.json").read_text())["items"]
    assert [i["metadata"]["uid"] for i in whole] == [i["metadata"]["uid"] for i in unpaged]
    assert all(i["kind"] == "Pod" and i["apiVersion"] == "v1" and "managedFields" not in i["metadata"] for i in whole)


def test_a_snapshot_whose_list_starts_again_holds_it_once(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An expired continue token mid-way: the pods already written are taken back and listed again."""
    srv = serve(monkeypatch, isolated, expire_continue_once=True)
    try:
        r = invoke("snapshot", "-o", str(isolated / "c.yaml"), "--chunk-size", "100")
    finally:
        srv.__exit__()
    assert r.exit_code == 0, r.output
    pods = [i for i in load_yaml((isolated / "c.yaml").read_text())["items"] if i["kind"] == "Pod"]
    assert len(pods) == len({p["metadata"]["uid"] for p in pods}) == 150


def test_a_failed_snapshot_leaves_no_file(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nodes are written before pods are listed; a refused pod list leaves the older snapshot as it was."""
    out = isolated / "c.yaml"
    out.write_text("an older snapshot\n")
    srv = serve(monkeypatch, isolated, rules=_rules_without("pods", "list"))
    try:
        line = one_error_line(invoke("snapshot", "-o", str(out)))
    finally:
        srv.__exit__()
    assert 'cannot list resource "pods"' in line
    assert out.read_text() == "an older snapshot\n" and sorted(p.name for p in isolated.iterdir()) == ["c.yaml", "kubeconfig"]


@pytest.mark.parametrize(("name", "why"), [("missing/c.yaml", "No such file or directory"), (".", "Is a directory")])
def test_a_snapshot_that_cannot_be_written(server: RecordedAPIServer, tmp_path: Path, name: str, why: str) -> None:
    out = tmp_path / name
    assert one_error_line(invoke("snapshot", "-o", str(out))) == f"error: cannot write {out}: {why}"


def test_namespace_and_selector_narrow_the_snapshot(server: RecordedAPIServer, tmp_path: Path) -> None:
    out = tmp_path / "shop.yaml"
    r = invoke("snapshot", "-n", "shop", "-l", "app=web", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert 'namespace "shop"' in r.output and 'only pods matching "app=web"' in r.output and "''s" not in r.output
    items = load_yaml(out.read_text())["items"]
    namespaced = {r.kind for r in RESOURCES if r.namespaced}
    assert {i["metadata"]["namespace"] for i in items if i["kind"] in namespaced} == {"shop"}
    pods = [i for i in items if i["kind"] == "Pod"]
    assert pods and all(p["metadata"]["labels"]["app"] == "web" for p in pods)
    assert any(s.path == "/api/v1/namespaces/shop/pods" and s.query.get("labelSelector") == "app=web" for s in server.seen)


def test_kinds_the_server_does_not_serve_are_noted(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    srv = serve(monkeypatch, isolated, unserved=("/apis/resource.k8s.io/",))
    try:
        r = invoke("snapshot", "-o", str(isolated / "old.yaml"))
    finally:
        srv.__exit__()
    assert r.exit_code == 0, r.output
    for plural in ("resourceslices", "resourceclaims", "deviceclasses"):
        assert f"note: the server does not serve {plural}.resource.k8s.io (resource.k8s.io/v1)" in r.output
    kinds = {i["kind"] for i in load_yaml((isolated / "old.yaml").read_text())["items"]}
    assert not kinds & {"ResourceSlice", "ResourceClaim", "DeviceClass"}


# --------------------------------------------------------------------------- explain


def test_live_explain_equals_snapshot_explain_and_the_reference(server: RecordedAPIServer, tmp_path: Path) -> None:
    """The recorded server runs v1.36.2: live, and from the snapshot that records it, explain follows v1.36;
    the reference (written by kube-scheduler v1.35.4) agrees with --kube-version 1.35."""
    live = invoke("explain", "pod", PENDING, "-n", "shop", "-o", "json")
    assert live.exit_code == 0, live.output
    snap = tmp_path / "cluster.yaml"
    assert invoke("snapshot", "-o", str(snap)).exit_code == 0
    from_file = invoke("explain", "pod", PENDING, "-n", "shop", "--snapshot", str(snap), "-o", "json")
    assert from_file.exit_code == 0, from_file.output
    live_trace, file_trace = json.loads(live.stdout), json.loads(from_file.stdout)
    assert live_trace == file_trace
    assert live_trace["kubeVersion"] == live_trace["k8sVersion"] == "v1.36.2"
    as_v135 = json.loads(invoke("explain", "pod", PENDING, "-n", "shop", "-o", "json", "--kube-version", "1.35").stdout)
    assert as_v135["kubeVersion"] == "v1.35.4"
    expected = json.loads((RECORDINGS / "scenario" / "expected.json").read_text())
    assert [str(d) for d in compare(expected, as_v135, exact=True)] == []


def test_recordings_source_gives_the_same_trace(server: RecordedAPIServer) -> None:
    from kschedctl.config import load_config
    from kschedctl.explain.cycle import explain_pod

    cluster = RecordingsSource(RECORDINGS).load()
    pod = cluster.pod("shop", PENDING)
    assert pod is not None
    trace = explain_pod(cluster, pod, load_config(None)).to_dict()
    live = json.loads(invoke("explain", "pod", PENDING, "-n", "shop", "-o", "json", "--kube-version", "1.35").stdout)
    assert trace["filter"] == live["filter"] and trace["totals"] == live["totals"]


def test_explain_pod_defaults_to_the_context_namespace(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with RecordedAPIServer() as srv:
        monkeypatch.setenv("KUBECONFIG", str(srv.kubeconfig(isolated / "kc", namespace="shop")))
        r = invoke("explain", "pod", PENDING)
    assert r.exit_code == 0, r.output
    assert f"shop/{PENDING}: schedulable on ip-10-0-6-29.ec2.internal" in r.output


def test_a_bound_pod_is_explained_as_if_pending(server: RecordedAPIServer) -> None:
    r = invoke("explain", "pod", BOUND, "-n", "shop", "-o", "json")
    assert r.exit_code in (0, 1), r.output
    trace = json.loads(r.stdout)
    assert any("bound to ip-10-0-3-21.ec2.internal; explained as if it were pending" in n for n in trace["notes"])
    assert not any(v.get("plugin") == "NodeName" for v in trace["filter"].values())
    assert len(trace["filter"]) > 1


def test_missing_pod_fails_fast_with_a_get(server: RecordedAPIServer) -> None:
    line = one_error_line(invoke("explain", "pod", "does-not-exist"))
    assert line == 'error: pod "does-not-exist" not found in namespace "default" of context "recorded"'
    # the GET, then one list of pods named so at the cluster scope (to say where it is): nothing else
    assert [(s.verb, s.resource) for s in server.seen] == [("get", "pods"), ("list", "pods")]
    assert server.seen[1].query.get("fieldSelector") == "metadata.name=does-not-exist"


def test_a_pod_in_another_namespace_is_named(server: RecordedAPIServer) -> None:
    line = one_error_line(invoke("explain", "pod", "legacy-0x7q0", "-n", "shop"))
    assert line == (
        'error: pod "legacy-0x7q0" not found in namespace "shop" of context "recorded"; '
        'found in namespace "batch" (use -n batch)'
    )


def test_explain_pending_live(server: RecordedAPIServer) -> None:
    r = invoke("explain", "pending", "-A", "-o", "json")
    assert r.exit_code == 1, r.output
    rows = json.loads(r.stdout)
    assert [row["pod"] for row in rows] == [f"shop/{PENDING}"]
    assert rows[0]["outcome"] == "scheduled" and rows[0]["selectedNode"] == "ip-10-0-6-29.ec2.internal"
    quiet = invoke("explain", "pending", "-n", "kube-system")
    assert quiet.exit_code == 0, quiet.output
    assert "no pending pods" in quiet.output


DEMO = str(Path(__file__).parent.parent / "fixtures" / "demo" / "cluster.yaml")


def test_explain_pending_rows() -> None:
    r = invoke("explain", "pending", "-A", "--snapshot", DEMO, "-o", "json")
    assert r.exit_code == 1, r.output
    rows = {row["pod"]: row for row in json.loads(r.stdout)}
    assert set(rows) == {
        "batch/report-pending", "ml/notebook-pending", "ml/train-pending", "shop/canary-gated",
        "shop/checkout-pending", "shop/web-7d9f-pending",
    }
    checkout = rows["shop/checkout-pending"]
    assert checkout["outcome"] == "unschedulable"
    assert checkout["fitError"].startswith("0/12 nodes are available:")
    assert checkout["dominantReason"] == "Insufficient cpu" and checkout["dominantNodes"] == 9
    assert checkout["preemption"]["wouldPlace"] is True and checkout["preemption"]["nominatedNode"] == "memory-b0"
    report = rows["batch/report-pending"]
    assert report["preemption"] == {"wouldPlace": False, "nominatedNode": None, "victims": []}
    assert report["nearestNodes"][0] == "general-a0"
    assert report["nearestRejections"] == [
        {"plugin": "NodeAffinity", "reasons": ["node(s) didn't match Pod's node affinity/selector"]}
    ]
    train = rows["ml/train-pending"]
    assert train["dominantReason"] == "Insufficient nvidia.com/gpu" and train["dominantNodes"] == 11
    gated = rows["shop/canary-gated"]
    assert gated["outcome"] == "gated" and gated["preemption"] is None
    assert gated["dominantReason"] == "SchedulingGates: waiting for scheduling gates: [example.com/rollout-approval]"
    fits = rows["shop/web-7d9f-pending"]
    assert fits["outcome"] == "scheduled" and fits["dominantReason"] is None and fits["nearestNodes"] == []


def test_explain_pending_formats_and_filters() -> None:
    table = invoke("explain", "pending", "-n", "shop", "--snapshot", DEMO, "--by", "pod")
    assert table.exit_code == 1
    assert "[example.com/rollout-approval]" in table.output  # not eaten as rich markup
    assert "yes: nominate memory-b0, evict 3 pods" in table.output
    assert table.output.strip().splitlines()[-1] == "3 pending pods: 1 unschedulable, 1 fit now, 1 gated"
    md = invoke("explain", "pending", "-n", "ml", "--snapshot", DEMO, "-o", "markdown", "--by", "pod")
    assert md.output.startswith("### kschedctl: pending pods") and "| ml/train-pending" in md.output
    selected = invoke("explain", "pending", "-A", "-l", "app in (checkout)", "--snapshot", DEMO, "-o", "yaml")
    assert [row["pod"] for row in load_yaml(selected.stdout)] == ["shop/checkout-pending"]
    none = invoke("explain", "pending", "-n", "nowhere", "--snapshot", DEMO, "-o", "json")
    assert none.exit_code == 0 and json.loads(none.stdout) == []
    assert one_error_line(invoke("explain", "pending", "-n", "a", "-A", "--snapshot", DEMO)) == "error: give -n NAMESPACE or -A, not both"


# --------------------------------------------------------------------------- errors


COMMANDS = [
    ["snapshot"],
    ["explain", "pending", "-A"],
    ["explain", "pod", PENDING, "-n", "shop"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_unreachable_server(command: list[str], isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = closed_port_url()
    monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(isolated / "kc", url)))
    line = one_error_line(invoke(*command))
    assert line == f"error: cannot reach the Kubernetes API server at {url}: connection refused"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_rejected_credentials(command: list[str], isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    srv = serve(monkeypatch, isolated, unauthorized=True)
    try:
        line = one_error_line(invoke(*command))
    finally:
        srv.__exit__()
    assert line.startswith("error: the server rejected our credentials (401 Unauthorized): Unauthorized;")
    assert 'context "recorded" may have expired' in line


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_timeout(command: list[str], isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    srv = serve(monkeypatch, isolated, silent=True)
    try:
        line = one_error_line(invoke(*command, "--request-timeout", "200ms"))
    finally:
        srv.__exit__()
    assert line == "error: request timed out after 0.2s (--request-timeout)"


def _rules_without(resource: str, verb: str) -> list[dict[str, Any]]:
    rules = load_rules()
    for rule in rules:
        if resource in (rule.get("resources") or []):
            others = [r for r in rule["resources"] if r != resource]
            rules.append({**rule, "resources": [resource], "verbs": [v for v in rule["verbs"] if v != verb]})
            rule["resources"] = others
            break
    return rules


@pytest.mark.parametrize("command", COMMANDS[:2], ids=lambda c: " ".join(c[:2]))
def test_forbidden_list_names_verb_and_resource(command: list[str], isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    srv = serve(monkeypatch, isolated, rules=_rules_without("pods", "list"))
    try:
        line = one_error_line(invoke(*command))
    finally:
        srv.__exit__()
    assert line.startswith('error: forbidden: cannot list resource "pods" in API group "" at the cluster scope (verb list,')
    assert "system:serviceaccount:kube-system:snapshot-reader" in line


def test_forbidden_get_names_the_namespace(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    srv = serve(monkeypatch, isolated, rules=_rules_without("pods", "get"))
    try:
        line = one_error_line(invoke("explain", "pod", PENDING, "-n", "shop"))
    finally:
        srv.__exit__()
    assert line.startswith('error: forbidden: cannot get resource "pods" in API group "" in the namespace "shop" (verb get,')


def test_recorded_forbidden_bodies() -> None:
    secrets = json.loads((RECORDINGS / "errors" / "GET_api_v1_secrets.json").read_text())
    line = forbidden_message(secrets, Request("/api/v1/secrets", "list", "secrets"))
    assert line.startswith('forbidden: cannot list resource "secrets" in API group "" at the cluster scope (verb list,')
    create = json.loads((RECORDINGS / "errors" / "POST_api_v1_namespaces_default_configmaps.json").read_text())
    line = forbidden_message(create, Request("/api/v1/namespaces/default/configmaps", "create", "configmaps"))
    assert 'cannot create resource "configmaps" in API group "" in the namespace "default" (verb create' in line
    # a Status whose message does not follow the RBAC wording: the request says what was asked
    other = {"kind": "Status", "code": 403, "message": "denied by webhook", "details": {"kind": "nodes"}}
    assert forbidden_message(other, Request("/api/v1/nodes", "list", "nodes")).startswith(
        'forbidden: cannot list resource "nodes" in API group "" at the cluster scope (verb list;'
    )


def test_no_cluster_configured(isolated: Path) -> None:
    line = one_error_line(invoke("explain", "pod", "x"))
    assert line.startswith("error: no cluster to read: no kubeconfig")
    assert "--snapshot" in line


def test_unknown_context_and_bad_timeout(server: RecordedAPIServer) -> None:
    line = one_error_line(invoke("explain", "pending", "--context", "nope"))
    assert line.startswith('error: context "nope" not found in kubeconfig ')
    line = one_error_line(invoke("snapshot", "--request-timeout", "soon"))
    assert line == 'error: invalid --request-timeout "soon": give a number of seconds or a duration such as 5s, 1m, 500ms'
    assert server.seen == []


def test_kubeconfig_flag_path_list_and_context(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with RecordedAPIServer() as srv:
        dead = write_kubeconfig(isolated / "dead", closed_port_url(), context="dead")
        live = srv.kubeconfig(isolated / "live", context="live", namespace="shop")
        # KUBECONFIG is a path list, merged in order: the first file's current-context wins
        monkeypatch.setenv("KUBECONFIG", f"{isolated / 'missing'}:{dead}:{live}")
        assert one_error_line(invoke("explain", "pending")).startswith("error: cannot reach")
        r = invoke("explain", "pending", "--context", "live")
        assert r.exit_code == 1 and f"shop/{PENDING}" in r.output
        monkeypatch.delenv("KUBECONFIG")
        r = invoke("explain", "pending", "--kubeconfig", str(live), "-o", "json")
        assert r.exit_code == 1 and json.loads(r.stdout)[0]["pod"] == f"shop/{PENDING}"
    line = one_error_line(invoke("snapshot", "--kubeconfig", str(isolated / "nope")))
    assert line == f"error: kubeconfig {isolated / 'nope'}: no such file"


def test_in_cluster_fallback(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kubernetes.config

    with RecordedAPIServer() as srv:

        def fake_incluster(client_configuration: Any = None) -> None:
            client_configuration.host = srv.url
            client_configuration.api_key = {"authorization": "Bearer sa-token"}

        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
        monkeypatch.setattr(kubernetes.config, "load_incluster_config", fake_incluster)
        r = invoke("explain", "pending", "-A", "-o", "json")
    assert r.exit_code == 1, r.output
    assert json.loads(r.stdout)[0]["pod"] == f"shop/{PENDING}"


# --------------------------------------------------------------------------- read-only


def test_only_gets_and_the_clusterrole_is_enough(server: RecordedAPIServer, tmp_path: Path) -> None:
    from kschedctl.cli.complete import cobra_completions

    runs = [
        invoke("snapshot", "-o", str(tmp_path / "s.yaml"), "--chunk-size", "100"),
        invoke("explain", "pod", PENDING, "-n", "shop"),
        invoke("explain", "pod", BOUND, "-n", "shop"),
        invoke("explain", "pending", "-A"),
    ]
    assert [r.exit_code for r in runs] == [0, 0, 0, 1], [r.output for r in runs]
    assert len(cobra_completions(["explain", "pod", "-n", "shop", "w"])) > 1
    assert len(cobra_completions(["explain", "pending", "-n", ""])) > 1
    rules = load_rules()
    assert server.seen
    assert {s.method for s in server.seen} == {"GET"}
    denied = [s for s in server.seen if not allowed(rules, s)]
    assert denied == []
    requested = {(s.group, s.resource) for s in server.seen if s.group is not None}
    assert requested == {(r.group, r.plural) for r in RESOURCES}


def test_clusterrole_is_read_only_and_covers_every_resource() -> None:
    docs = [d for d in yaml.safe_load_all(CLUSTERROLE.read_text()) if d]
    assert [d["kind"] for d in docs] == ["ClusterRole"]
    rules = docs[0]["rules"]
    verbs = {v for rule in rules for v in rule["verbs"]}
    assert verbs <= {"get", "list", "watch"}
    resources = {r for rule in rules for r in rule.get("resources", [])}
    assert not resources & {"secrets", "configmaps", "*"}
    assert all("*" not in rule.get("apiGroups", []) for rule in rules)
    granted = {(g, r) for rule in rules for g in rule.get("apiGroups", []) for r in rule.get("resources", [])}
    assert granted == {(r.group, r.plural) for r in RESOURCES}


# --------------------------------------------------------------------------- units


def test_resources_cover_the_model() -> None:
    assert {r.kind: r.namespaced for r in RESOURCES} == KNOWN_KINDS


def test_redaction() -> None:
    pod: dict[str, Any] = {
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "managedFields": [{"manager": "kubectl"}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...}", "keep": "me"},
        },
        "spec": {
            "containers": [{"name": "c", "env": [{"name": "PASSWORD", "value": "hunter2"}, {"name": "REF", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}],
            "initContainers": [{"name": "i", "env": [{"name": "TOKEN", "value": "t"}]}],
        },
    }
    rs: dict[str, Any] = {"kind": "ReplicaSet", "metadata": {"name": "r"}, "spec": {"template": {"spec": {"containers": [{"name": "c", "env": [{"name": "X", "value": "y"}]}]}}}}
    redact(pod)
    redact(rs)
    assert "managedFields" not in pod["metadata"]
    assert pod["metadata"]["annotations"] == {"keep": "me"}
    assert pod["spec"]["containers"][0]["env"] == [{"name": "PASSWORD"}, {"name": "REF", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]
    assert pod["spec"]["initContainers"][0]["env"] == [{"name": "TOKEN"}]
    assert rs["spec"]["template"]["spec"]["containers"][0]["env"] == [{"name": "X"}]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [(None, None), ("0", None), ("5", 5.0), ("1.5", 1.5), ("5s", 5.0), ("500ms", 0.5), ("1m", 60.0), ("1h2m3s", 3723.0)],
)
def test_request_timeout_durations(text: str | None, seconds: float | None) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["soon", "5x", "-1", "s5", "1m soon"])
def test_bad_request_timeouts(text: str) -> None:
    with pytest.raises(UsageError):
        parse_duration(text)


@pytest.mark.parametrize(
    ("text", "labels", "match"),
    [
        ("app=web", {"app": "web"}, True),
        ("app==web,tier!=db", {"app": "web", "tier": "db"}, False),
        ("env in (a, b),!legacy", {"env": "b"}, True),
        ("env notin (a,b)", {}, True),
        ("gpu", {"gpu": ""}, True),
        ("", {}, True),
    ],
)
def test_selector_strings(text: str, labels: dict[str, str], match: bool) -> None:
    from kschedctl.kube.selectors import parse_selector_string

    assert parse_selector_string(text).matches(labels) is match


@pytest.mark.parametrize("text", ["app=web,,", "a b", "bad key!=x", "in (a"])
def test_bad_selector_strings(text: str) -> None:
    from kschedctl.errors import InputError
    from kschedctl.kube.selectors import parse_selector_string

    with pytest.raises(InputError):
        parse_selector_string(text)


def test_vendored_recordings_match_the_shared_copy() -> None:
    if not SHARED.is_dir():
        pytest.skip("shared/recordings is not beside this clone")
    for f in sorted(RECORDINGS.rglob("*")):
        if f.is_file() and f.name != "README.md":
            twin = SHARED / f.relative_to(RECORDINGS)
            assert twin.is_file() and twin.read_bytes() == f.read_bytes(), f


def test_a_finished_pod_is_refused(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    recordings = isolated / "recordings"
    shutil.copytree(RECORDINGS, recordings)
    pod = json.loads((RECORDINGS / f"api_v1_namespaces_shop_pods_{PENDING}.json").read_text())
    pod["metadata"]["name"] = "done"
    pod["status"] = {"phase": "Succeeded"}
    (recordings / "api_v1_namespaces_shop_pods_done.json").write_text(json.dumps(pod))
    srv = serve(monkeypatch, isolated, recordings=recordings)
    try:
        line = one_error_line(invoke("explain", "pod", "done", "-n", "shop"))
    finally:
        srv.__exit__()
    assert line == 'error: pod "done" in namespace "shop" has finished (Succeeded): kube-scheduler ignores it'


def test_progress_bar_draws_only_on_a_terminal() -> None:
    import io

    from rich.console import Console

    from kschedctl.cli.snapshot import ProgressBar

    tty = io.StringIO()
    with ProgressBar(Console(file=tty, force_terminal=True, width=100)) as bar:
        bar("pods", 100, 150)
        bar("pods", 150, 150)
        bar("nodes", 30, 30)
    assert "listing pods" in tty.getvalue() and "listing nodes" in tty.getvalue()
    pipe = io.StringIO()
    with ProgressBar(Console(file=pipe, force_terminal=False)) as bar:
        bar("pods", 100, 150)
    assert pipe.getvalue() == ""


def test_the_server_version_chooses_the_rules(server: RecordedAPIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorded server runs v1.36.2: its rules, no note; a v1.37 server v1.37's. A server outside 1.33-1.37 gets the nearest
    supported version's, with one note; --kube-version wins over both."""
    from kschedctl.snapshot.live import version_note

    r = invoke("explain", "pod", PENDING, "-n", "shop")
    assert r.exit_code == 0, r.output
    assert "kube-scheduler v1.36.2" in r.stdout and "note: the API server runs" not in r.stderr
    monkeypatch.setattr(LiveCluster, "server_version", lambda self: "v1.37.1")
    r = invoke("explain", "pod", PENDING, "-n", "shop")
    assert "kube-scheduler v1.37.2" in r.stdout and "note: the API server runs" not in r.stderr
    monkeypatch.setattr(LiveCluster, "server_version", lambda self: "v1.38.0")
    r = invoke("explain", "pod", PENDING, "-n", "shop")
    assert "kube-scheduler v1.37.2" in r.stdout
    note = "note: the API server runs Kubernetes v1.38.0; kschedctl explains kube-scheduler 1.33, 1.34, 1.35, 1.36, 1.37: using v1.37.2's rules"
    assert [ln for ln in r.stderr.splitlines() if ln.startswith(note)] != [] and note not in r.stdout
    r = invoke("explain", "pod", PENDING, "-n", "shop", "--kube-version", "1.34")
    assert "kube-scheduler v1.34.2" in r.stdout and "note: the API server runs" not in r.stderr
    assert version_note("v1.35.0") is None and version_note("v1.36.9-gke.1") is None and version_note(None) is None
    assert version_note("v1.37.0") is None
    assert "using v1.33.5's rules" in str(version_note("v1.30.0"))
    r = invoke("explain", "pod", PENDING, "-n", "shop", "--kube-version", "1.33")
    line = one_error_line(r)
    assert "resourceslices" in line and "(this API version does not exist in kube-scheduler/apiserver v1.33.5)" in line


def test_snapshot_records_the_server_version(server: RecordedAPIServer, tmp_path: Path) -> None:
    """``snapshot`` records the server's version (an annotation on its List, in YAML and JSON alike); reading
    the file back uses it unless --kube-version is given."""
    for name in ("cluster.yaml", "cluster.json"):
        snap = tmp_path / name
        assert invoke("snapshot", "-o", str(snap)).exit_code == 0
        doc = load_yaml(snap.read_text())
        assert doc["metadata"]["annotations"]["kschedctl.io/server-version"] == "v1.36.2"
        assert set(doc["metadata"]["annotations"]) == {"kschedctl.io/server-version", "kschedctl.io/items-sha256"}
        r = invoke("explain", "pod", PENDING, "-n", "shop", "--snapshot", str(snap), "-o", "json")
        assert json.loads(r.stdout)["kubeVersion"] == "v1.36.2"
        r = invoke("explain", "pod", PENDING, "-n", "shop", "--snapshot", str(snap), "-o", "json", "--kube-version", "v1.34.1")
        assert json.loads(r.stdout)["kubeVersion"] == "v1.34.2"



def test_snapshot_without_a_cluster_does_not_suggest_its_missing_option(isolated: Path) -> None:
    line = one_error_line(invoke("snapshot"))
    assert line == (
        "error: no cluster to read: no kubeconfig (--kubeconfig, KUBECONFIG or ~/.kube/config) and not running in a cluster"
    )


# --------------------------------------------------------------------------- big pages in the offload worker


@pytest.mark.parametrize(
    ("args", "modes"),
    [
        (["--chunk-size", "100"], {}),
        (["--chunk-size", "100"], {"expire_continue_once": True}),
        (["--no-redact"], {}),
    ],
)
def test_a_snapshot_with_every_page_offloaded_is_the_same_file(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], modes: dict[str, Any]
) -> None:
    """Pages the worker decodes, redacts and encodes give the bytes the main process writes, in order,
    a list that starts again included (the recordings' pages are small: every page is offloaded here)."""
    from kschedctl.snapshot import offload

    srv = serve(monkeypatch, isolated, **modes)
    try:
        with monkeypatch.context() as m:
            m.setattr(offload, "MIN_BODY", 0)
            worker = invoke("snapshot", "-o", str(isolated / "worker.yaml"), *args)  # (it meets the expired token)
        here = invoke("snapshot", "-o", str(isolated / "here.yaml"), *args)
    finally:
        srv.__exit__()
    assert worker.exit_code == 0 and here.exit_code == 0, worker.output + here.output
    if modes:
        assert [("continue" in s.query) for s in srv.seen if s.path == "/api/v1/pods"][:4] == [False, True, False, True]

    def body(name: str) -> bytes:  # (the header says when the snapshot was taken)
        return (isolated / name).read_bytes().split(b"\n{", 1)[1]

    assert body("worker.yaml") == body("here.yaml")


def test_offloaded_pages_come_in_order_with_their_progress(server: RecordedAPIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from kschedctl.snapshot import offload
    from kschedctl.snapshot.source import Encoded

    monkeypatch.setattr(offload, "MIN_BODY", 0)
    events: list[tuple[str, int, int | None]] = []
    live = LiveCluster(LiveOptions(chunk_size=100))
    try:
        pages = list(live.list_pages(POD, progress=lambda *e: events.append(e), encoded=True))
    finally:
        live.stop_offload()
    assert events == [("pods", 100, 150), ("pods", 150, 150)]
    assert all(isinstance(p, Encoded) for p in pages) and [p.objects for p in pages if isinstance(p, Encoded)] == [100, 50]
