"""Pod groups placed by the real kube-scheduler v1.36.2 loop, run through ``kschedctl simulate``.

``tests/podgroups/dev-*`` are the shared corpus (its README: ``tests/podgroups/README.md``). Each is
run as that README says: ``simulate -f pods.yaml --snapshot cluster.yaml --kube-version 1.36
--feature-gates "$(cat feature-gates)" -o json``. Agreement: every attempted pod has the expected
node, fitError, nominatedNodeName and victims, a pod the real loop never attempted is ``gated``;
the members of one PodGroup with the same spec and labels are compared as a multiset of those
outcomes, since the real scheduler takes them in an order nobody outside it can know.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app

ROOT = Path(__file__).parent / "podgroups"
SCENARIOS = sorted(d for d in ROOT.iterdir() if (d / "expected-sequence.json").is_file())
FIELDS = ("node", "fitError", "nominatedNodeName", "victims")

runner = CliRunner()


def simulate(d: Path, *extra: str) -> dict[str, Any]:
    """The README's command, its JSON answer."""
    gates = (d / "feature-gates").read_text().strip()
    r = runner.invoke(app, ["simulate", "-f", str(d / "pods.yaml"), "--snapshot", str(d / "cluster.yaml"),
                            "--kube-version", "1.36", "--feature-gates", gates, "-o", "json", *extra])
    assert r.exit_code in (0, 1), r.output
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def _pods(d: Path) -> dict[str, dict[str, Any]]:
    docs = [doc for doc in yaml.safe_load_all((d / "pods.yaml").read_text()) if doc]
    return {f"{p['metadata'].get('namespace', 'default')}/{p['metadata']['name']}": p for p in docs}


def _class_of(pod: dict[str, Any]) -> str:
    """Members of one group with the same spec and labels share a class; every other pod is its own."""
    spec = pod.get("spec") or {}
    group = (spec.get("schedulingGroup") or {}).get("podGroupName")
    meta = pod["metadata"]
    if group is None:
        return f"pod {meta.get('namespace', 'default')}/{meta['name']}"
    return json.dumps([meta.get("namespace", "default"), group, spec, meta.get("labels") or {}], sort_keys=True)


def _outcome(row: dict[str, Any]) -> str:
    return json.dumps([row.get(k) or ([] if k == "victims" else None) for k in FIELDS])


def compare(d: Path, actual: dict[str, Any]) -> list[str]:
    """What differs from the real loop (empty: agreement)."""
    expected = json.loads((d / "expected-sequence.json").read_text())["placements"]
    pods = _pods(d)
    attempted = {e["pod"] for e in expected}
    placements = actual["placements"]
    problems = [f"{p['pod']} was attempted ({p['outcome']}); the real loop never attempted it"
                for p in placements if p["pod"] not in attempted and p["outcome"] != "gated"]
    got: dict[str, Counter[str]] = {}
    want: dict[str, Counter[str]] = {}
    for p in placements:
        if p["pod"] in attempted:
            got.setdefault(_class_of(pods[p["pod"]]), Counter())[_outcome(p)] += 1
    for e in expected:
        want.setdefault(_class_of(pods[e["pod"]]), Counter())[_outcome(e)] += 1
    for cls in sorted(set(got) | set(want)):
        if got.get(cls) != want.get(cls):
            problems.append(f"{cls}: expected {dict(want.get(cls) or {})}, got {dict(got.get(cls) or {})}")
    return problems


def test_corpus_is_present() -> None:
    assert len([d for d in SCENARIOS if d.name.startswith("dev-")]) == 10


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[d.name for d in SCENARIOS])
def test_pod_group_sequence_agrees(scenario: Path) -> None:
    problems = compare(scenario, simulate(scenario))
    assert not problems, "\n".join(problems)
