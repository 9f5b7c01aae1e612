"""``--kube-version`` and ``--feature-gates`` on every command, and ``diff-versions``, through typer's CliRunner.

Every command takes both options; a bad version or gate is one line and exit 2, in kube-scheduler's
words; the version used heads table and markdown output and is ``kubeVersion`` in JSON/YAML.
``diff-versions`` on the demo attributes each difference to the rule change that caused it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app
from kschedctl.config.changes import RULES, changes_between
from kschedctl.kube.versions import resolve_features

ROOT = Path(__file__).parent.parent
DEMO = str(ROOT / "fixtures" / "demo" / "cluster.yaml")
CART = str(ROOT / "fixtures" / "demo" / "cart.yaml")
CONFORMANCE = ROOT / "tests" / "conformance"
runner = CliRunner()

#: Each command, run on the demo (or two scenarios), with what it prints the version as.
COMMANDS: dict[str, list[str]] = {
    "explain pod": ["explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO],
    "explain pending": ["explain", "pending", "-A", "--snapshot", DEMO],
    "diff-profiles": ["diff-profiles", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "-p", "default-scheduler",
                      "-p", "default-scheduler"],
    "simulate": ["simulate", "-f", CART, "--snapshot", DEMO, "--replicas", "2", "--no-pending"],
    "check": ["check", str(CONFORMANCE / "dev-002-pod-affinity-required"), str(CONFORMANCE / "dev-003-pod-overhead"),
              "-j", "1"],
    "plugins": ["plugins"],
    "diff-versions": ["diff-versions", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--to", "1.36"],
}


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args))


def one_error_line(r: Any) -> str:
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.output
    return str(lines[0])


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "diff-versions"])
@pytest.mark.parametrize("version", ["1.33", "v1.36.2", "1.37"])
def test_every_command_runs_as_the_version_given(command: str, version: str) -> None:
    release = {"1.33": "v1.33.5", "v1.36.2": "v1.36.2", "1.37": "v1.37.2"}[version]
    r = invoke(*COMMANDS[command], "--kube-version", version)
    assert r.exit_code in (0, 1), r.output
    assert f"kube-scheduler {release}" in r.stdout.splitlines()[0] + r.stdout.splitlines()[1], r.stdout


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--kube-version", "1.40"], "error: Kubernetes 1.40 is not supported: kschedctl explains kube-scheduler 1.33, 1.34, 1.35, 1.36, 1.37"),
        (["--kube-version", "2.0"], 'error: invalid argument "2.0" for "{flag}" flag: want 1.MINOR or 1.MINOR.PATCH, e.g. 1.35'),
        (["--kube-version", "1.035"], 'error: invalid argument "1.035" for "{flag}" flag: "035" starts with 0 (did you mean 1.35?)'),
        (["--kube-version", "1.x"], 'error: invalid argument "1.x" for "{flag}" flag: want 1.MINOR or 1.MINOR.PATCH, e.g. 1.35'),
        (["--feature-gates", "NoSuchGate=true"],
         'error: invalid argument "NoSuchGate=true" for "--feature-gates" flag: unrecognized feature gate: NoSuchGate '
         "(kube-scheduler {release} has no such gate)"),
        (["--feature-gates", "GangScheduling=maybe"],
         'error: invalid argument "GangScheduling=maybe" for "--feature-gates" flag: invalid value of GangScheduling=maybe, '
         'err: strconv.ParseBool: parsing "maybe": invalid syntax'),
        (["--kube-version", "1.35", "--feature-gates", "DynamicResourceAllocation=false"],
         'error: invalid argument "DynamicResourceAllocation=false" for "--feature-gates" flag: cannot set feature gate '
         "DynamicResourceAllocation to false, feature is locked to true"),
    ],
)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_bad_version_or_gate_is_one_line_and_exit_2(command: str, options: list[str], message: str) -> None:
    args, flag = COMMANDS[command], "--kube-version"
    if command == "diff-versions" and options[0] == "--kube-version":
        args, options, flag = args[:-1], [options[1], *options[2:]], "--to"  # --to takes the version
    release = "v1.36.2" if command == "diff-versions" else "v1.35.4"  # the version checked first (--to's)
    assert one_error_line(invoke(*args, *options)) == message.format(flag=flag, release=release)


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("command", ["explain pod", "diff-profiles", "simulate"])
def test_machine_readable_output_carries_the_version_and_changed_gates(command: str, fmt: str) -> None:
    r = invoke(*COMMANDS[command], "--kube-version", "1.36", "--feature-gates", "GangScheduling=true,GenericWorkload=true",
               "-o", fmt)
    data = json.loads(r.stdout) if fmt == "json" else yaml.safe_load(r.stdout)
    assert data["kubeVersion"] == "v1.36.2"
    assert data["featureGates"] == {"GangScheduling": True, "GenericWorkload": True}


def test_the_default_is_v135_and_changed_gates_show_in_the_header() -> None:
    r = invoke(*COMMANDS["explain pod"], "-o", "json")
    assert json.loads(r.stdout)["kubeVersion"] == "v1.35.4" and "featureGates" not in json.loads(r.stdout)
    r = invoke(*COMMANDS["explain pod"], "--feature-gates", "GangScheduling=true,GenericWorkload=true")
    assert "kube-scheduler v1.35.4   feature gates: GangScheduling=true,GenericWorkload=true" in r.stdout
    r = invoke(*COMMANDS["explain pod"], "-o", "markdown", "--kube-version", "1.34")
    assert "kube-scheduler v1.34.2." in r.stdout


def test_plugins_shows_the_default_profile_of_the_version() -> None:
    rows = {r["name"]: r for r in json.loads(invoke("plugins", "-o", "json", "--kube-version", "1.33").stdout)}
    assert rows["DynamicResources"]["defaultProfile"] == {"kubeVersion": "v1.33.5", "enabled": "off"}
    assert rows["TaintToleration"]["defaultProfile"]["enabled"] == "on (weight 3)"
    rows = {r["name"]: r for r in json.loads(invoke("plugins", "-o", "json", "--kube-version", "1.35").stdout)}
    assert rows["DynamicResources"]["defaultProfile"]["enabled"] == "on (weight 2)"
    assert "defaultProfile" not in json.loads(invoke("plugins", "-o", "json").stdout)[0]


@pytest.mark.parametrize(("version", "expected"), [("1.33", "expected-v1.33.json"), ("1.36", "expected-v1.36.json"),
                                                    ("1.35", "expected.json")])
def test_check_prefers_the_versions_expected_file(version: str, expected: str, tmp_path: Path) -> None:
    """A scenario whose only per-version file is wrong fails under that version and passes under the others."""
    import shutil

    scenario = tmp_path / "dev-003-pod-overhead"
    shutil.copytree(CONFORMANCE / "dev-003-pod-overhead", scenario)
    assert invoke("check", str(scenario), "--kube-version", version).exit_code == 0
    data = json.loads((scenario / expected).read_text())
    data["selected"] = {"candidates": ["no-such-node"]}
    (scenario / expected).write_text(json.dumps(data))
    r = invoke("check", str(scenario), "--kube-version", version)
    assert r.exit_code == 1, r.output
    other = "1.34" if version != "1.34" else "1.33"
    assert invoke("check", str(scenario), "--kube-version", other).exit_code == 0


SCS_SCENARIO = CONFORMANCE / "dev-446-csi-storage-capacity-max-volume-size"
SCS_EXPLAIN = ["explain", "pod", "-f", str(SCS_SCENARIO / "pod.yaml"), "--snapshot", str(SCS_SCENARIO / "cluster.yaml")]
SCS_GATE = ["--feature-gates", "StorageCapacityScoring=true"]


def test_storage_capacity_scoring_puts_volume_binding_in_the_score_table() -> None:
    r = invoke(*SCS_EXPLAIN, "--kube-version", "1.36", *SCS_GATE)
    assert r.exit_code in (0, 1), r.output
    assert "kube-scheduler v1.36.2   feature gates: StorageCapacityScoring=true" in r.stdout
    score_table = r.stdout[r.stdout.index("Score (raw") : r.stdout.index("Selected:")]
    assert "VolumeBinding" in score_table
    data = json.loads(invoke(*SCS_EXPLAIN, "--kube-version", "1.36", *SCS_GATE, "-o", "json").stdout)
    expected = json.loads((SCS_SCENARIO / "expected-v1.36-scs.json").read_text())
    assert data["score"]["VolumeBinding"] == expected["score"]["VolumeBinding"]
    assert "VolumeBinding" not in json.loads(invoke(*SCS_EXPLAIN, "--kube-version", "1.36", "-o", "json").stdout)["score"]


@pytest.mark.parametrize("version", ["1.35", "1.36"])
def test_all_alpha_is_accepted_and_turns_storage_capacity_scoring_on(version: str) -> None:
    r = invoke(*SCS_EXPLAIN, "--kube-version", version, "--feature-gates", "AllAlpha=true", "-o", "json")
    assert r.exit_code in (0, 1), r.output
    data = json.loads(r.stdout)
    assert data["featureGates"]["StorageCapacityScoring"] is True
    assert "VolumeBinding" in data["score"]


def test_v1_37_scores_volume_binding_by_default() -> None:
    """StorageCapacityScoring is on by default in v1.37: VolumeBinding is in the score table with the scores
    v1.36.2 gives with the gate on."""
    r = invoke(*SCS_EXPLAIN, "--kube-version", "1.37")
    assert r.exit_code in (0, 1), r.output
    assert "kube-scheduler v1.37.2" in r.stdout and "feature gates" not in r.stdout
    assert "VolumeBinding" in r.stdout[r.stdout.index("Score (raw") : r.stdout.index("Selected:")]
    data = json.loads(invoke(*SCS_EXPLAIN, "--kube-version", "1.37", "-o", "json").stdout)
    expected = json.loads((SCS_SCENARIO / "expected-v1.36-scs.json").read_text())
    assert data["score"]["VolumeBinding"] == expected["score"]["VolumeBinding"]
    assert data["kubeVersion"] == "v1.37.2" and "featureGates" not in data
    off = json.loads(invoke(*SCS_EXPLAIN, "--kube-version", "1.37", "--feature-gates", "StorageCapacityScoring=false",
                            "-o", "json").stdout)
    assert "VolumeBinding" not in off["score"] and off["featureGates"] == {"StorageCapacityScoring": False}


def test_check_under_v1_37_compares_the_v1_37_answer(tmp_path: Path) -> None:
    """A scenario keeps v1.37's answer as expected-v1.37.json; check --kube-version 1.37 compares that file."""
    import shutil

    scenario = tmp_path / SCS_SCENARIO.name
    shutil.copytree(SCS_SCENARIO, scenario)
    shutil.copyfile(SCS_SCENARIO / "expected-v1.36-scs.json", scenario / "expected-v1.37.json")
    r = invoke("check", str(scenario), "--kube-version", "1.37", "-o", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)[0]["file"].endswith("expected-v1.37.json")
    data = json.loads((scenario / "expected-v1.37.json").read_text())
    data["selected"] = {"candidates": ["no-such-node"]}
    (scenario / "expected-v1.37.json").write_text(json.dumps(data))
    assert invoke("check", str(scenario), "--kube-version", "1.37").exit_code == 1


def test_simulate_under_v1_37() -> None:
    r = invoke(*COMMANDS["simulate"], "--kube-version", "1.37", "-o", "json")
    assert r.exit_code in (0, 1), r.output
    data = json.loads(r.stdout)
    assert data["kubeVersion"] == "v1.37.2" and "featureGates" not in data


def test_a_gate_kschedctl_does_not_reproduce_is_one_line_and_exit_2() -> None:
    r = invoke(*COMMANDS["explain pod"], "--kube-version", "1.37", "--feature-gates",
               "InPlacePodVerticalScalingSchedulerPreemption=true")
    line = one_error_line(r)
    assert line.startswith('error: invalid argument "InPlacePodVerticalScalingSchedulerPreemption=true" for "--feature-gates" '
                           "flag: kschedctl does not reproduce feature gate InPlacePodVerticalScalingSchedulerPreemption")
    assert line.endswith("; leave it off")
    assert one_error_line(invoke(*COMMANDS["explain pod"], "--kube-version", "1.37", "--feature-gates",
                                 "GangScheduling=true")).endswith(
        "unrecognized feature gate: GangScheduling (kube-scheduler v1.37.2 has no such gate; it exists in v1.35 and v1.36)")


def test_check_prefers_the_answer_for_the_changed_gates(tmp_path: Path) -> None:
    """Under v1.36 with StorageCapacityScoring=true, expected-v1.36-scs.json is compared, not expected-v1.36.json."""
    import shutil

    scenario = tmp_path / SCS_SCENARIO.name
    shutil.copytree(SCS_SCENARIO, scenario)
    assert invoke("check", str(scenario), "--kube-version", "1.36", *SCS_GATE).exit_code == 0
    gated = scenario / "expected-v1.36-scs.json"
    data = json.loads(gated.read_text())
    data["selected"] = {"candidates": ["no-such-node"]}
    gated.write_text(json.dumps(data))
    r = invoke("check", str(scenario), "--kube-version", "1.36", *SCS_GATE)
    assert r.exit_code == 1, r.output
    assert invoke("check", str(scenario), "--kube-version", "1.36").exit_code == 0


# --------------------------------------------------------------------------- diff-versions


def test_diff_versions_from_v1_36_to_v1_37_names_storage_capacity_scoring() -> None:
    scenario = SCS_SCENARIO
    r = invoke("diff-versions", "-f", str(scenario / "pod.yaml"), "--snapshot", str(scenario / "cluster.yaml"),
               "--from", "1.36", "--to", "1.37")
    assert r.exit_code == 1, r.output
    assert "A: kube-scheduler v1.36.2, default configuration" in r.stdout
    assert "B: kube-scheduler v1.37.2, default configuration" in r.stdout
    assert ("because v1.37: StorageCapacityScoring is on by default: VolumeBinding scores nodes by the storage "
            "utilization the pod's volumes would cause there") in r.stdout
    # a pod without volumes: VolumeBinding scores 0 everywhere, nothing changes
    r = invoke("diff-versions", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--from", "1.36", "--to", "1.37")
    assert r.exit_code == 0, r.output
    assert "1 unchanged" in r.stdout and "because" not in r.stdout


def test_diff_versions_attributes_the_score_change_to_balanced_allocation() -> None:
    r = invoke("diff-versions", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--from", "1.35", "--to", "1.36")
    assert r.exit_code == 1, r.output
    assert "A: kube-scheduler v1.35.4, default configuration" in r.stdout
    assert "B: kube-scheduler v1.36.2, default configuration" in r.stdout
    assert "Scores change: total on memory-b0: 873 → 854 (-19)" in r.stdout
    assert ("because v1.36: NodeResourcesBalancedAllocation scores the change in balance the pod makes, not the "
            "balance after it") in r.stdout.replace("\n", " ")
    data = json.loads(invoke("diff-versions", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--from", "1.35",
                             "--to", "1.36", "-o", "json").stdout)
    pod = data["pods"][0]
    assert pod["differs"] and pod["change"] == "same"
    assert [c["name"] for c in pod["attribution"]["changes"]] == ["BalancedAllocationChange"]
    assert pod["attribution"]["parts"] == ["score NodeResourcesBalancedAllocation"]
    assert pod["attribution"]["unexplained"] == []


def test_diff_versions_attributes_messages_and_preemption_to_v134() -> None:
    data = json.loads(invoke("diff-versions", "--pending", "--snapshot", DEMO, "--from", "1.33", "--to", "1.34",
                             "-o", "json").stdout)
    by_pod = {p["pod"]: p for p in data["pods"]}
    notebook = by_pod["ml/notebook-pending"]
    names = {c["name"]: c for c in notebook["attribution"]["changes"]}
    assert set(names) == {"TaintTolerationMessage", "FitUnresolvable", "DynamicResourceAllocation"}
    dra = names["DynamicResourceAllocation"]
    assert dra["version"] == "v1.34" and dra["kind"] == "gate" and dra["explains"] == ["message"]
    assert "no new claims to deallocate" in dra["text"]  # the pod has no claims: only that note is DRA's doing
    assert names["FitUnresolvable"]["explains"] == ["code"] and names["TaintTolerationMessage"]["explains"] == ["message"]
    assert notebook["kind"] == "code" and list(notebook["byKind"]) == ["code", "message"]
    assert any(d.startswith("PodScheduled message (FitError) differs") for d in notebook["byKind"]["message"])
    assert data["summary"]["byKind"] == {"outcome": 0, "code": 3, "score": 0, "message": 2}


# --------------------------------------------------------------------------- diff-versions: what a new user met


def test_a_wording_change_is_a_message_only_difference() -> None:
    r = invoke("diff-versions", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--from", "1.33", "--to", "1.34")
    assert r.exit_code == 1, r.output
    out = " ".join(r.stdout.split())
    assert "same decision, messages only" in out
    assert "Filter verdicts change" not in out and "Filter verdict differs" not in out
    assert "Messages change (words only): TaintToleration's reason on 2 node(s) (gpu-a0, gpu-b0)" in out
    assert "because v1.34: TaintToleration's Filter reason no longer quotes the untolerated taint" in out
    assert "1 differ in messages only, 0 unchanged" in out
    data = json.loads(invoke("diff-versions", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--from", "1.33",
                             "--to", "1.34", "-o", "json").stdout)
    (pod,) = data["pods"]
    assert (pod["change"], pod["kind"]) == ("same", "message")
    assert {(f["node"], f["kind"], f["feasibleA"], f["feasibleB"]) for f in pod["feasibilityChanges"]} == {
        ("gpu-a0", "message", False, False), ("gpu-b0", "message", False, False)}


def test_a_status_code_change_is_shown_with_what_it_does_to_preemption() -> None:
    r = invoke("diff-versions", "train-pending", "-n", "ml", "--snapshot", DEMO, "--from", "1.33", "--to", "1.34")
    assert r.exit_code == 1, r.output
    out = " ".join(r.stdout.split())
    assert "Filter verdicts: no change" not in out
    assert "same decision, status codes change" in out
    assert "Status codes that change" not in out  # the table is -o wide's; the short answer says it in words
    wide = " ".join(invoke("diff-versions", "train-pending", "-n", "ml", "--snapshot", DEMO, "--from", "1.33", "--to", "1.34",
                           "-o", "wide").stdout.split())
    assert "Status codes that change (preemption no longer tries these nodes)" in wide
    assert ("Status codes change: NodeResourcesFit rejects 9 node(s) (general-a0, general-a1, general-a2, …) as "
            "UnschedulableAndUnresolvable, not Unschedulable: preemption no longer tries them") in out
    assert "because v1.34: NodeResourcesFit rejects a request above a node's whole allocatable" in out
    data = json.loads(invoke("diff-versions", "train-pending", "-n", "ml", "--snapshot", DEMO, "--from", "1.33",
                             "--to", "1.34", "-o", "json").stdout)
    (pod,) = data["pods"]
    codes = [f for f in pod["feasibilityChanges"] if f["kind"] == "code"]
    assert len(codes) == 9 and {(f["codeA"], f["codeB"]) for f in codes} == {("Unschedulable", "UnschedulableAndUnresolvable")}
    assert "10 Preemption is not helpful" in pod["b"]["fitError"] and "1 Preemption is not helpful" in pod["a"]["fitError"]


def test_a_dra_change_is_not_cited_for_a_pod_without_claims_where_it_changes_nothing() -> None:
    data = json.loads(invoke("diff-versions", "checkout-pending", "-n", "shop", "--snapshot", DEMO, "--from", "1.33",
                             "--to", "1.36", "-o", "json").stdout)
    (pod,) = data["pods"]
    names = [c["name"] for c in pod["attribution"]["changes"]]
    assert names == ["TaintTolerationMessage", "FitUnresolvable"]
    assert pod["attribution"]["unexplained"] == []
    r = invoke("diff-versions", "checkout-pending", "-n", "shop", "--snapshot", DEMO, "--from", "1.33", "--to", "1.36", "-o", "wide")
    assert "DynamicResource" not in r.stdout.split("Filter verdicts that change")[1]
    short = invoke("diff-versions", "checkout-pending", "-n", "shop", "--snapshot", DEMO, "--from", "1.33", "--to", "1.36")
    assert "DynamicResource" not in short.stdout


def test_a_downgrade_is_worded_as_going_back() -> None:
    r = invoke("diff-versions", "notebook-pending", "-n", "ml", "--snapshot", DEMO, "--from", "1.36", "--to", "1.33")
    assert r.exit_code == 1, r.output
    out = " ".join(r.stdout.split())
    assert "because back before v1.34: TaintToleration's Filter reason quotes the untolerated taint again" in out
    assert ("because back before v1.34: NodeResourcesFit rejects a request above a node's whole allocatable as "
            "Unschedulable again, so preemption tries that node again") in out
    assert "preemption now tries them" in out
    assert "no longer quotes" not in out and "v1.34: DynamicResourceAllocation is on" not in out
    assert "back before v1.34: DynamicResourceAllocation is off by default" in out


def test_diff_versions_of_one_version_says_so_in_one_line() -> None:
    r = invoke("diff-versions", "--pending", "--snapshot", DEMO, "--from", "1.35", "--to", "1.35")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == ["--from and --to are both kube-scheduler v1.35.4 with the same feature gates: "
                                     "nothing can differ (give another --to)"]
    r = invoke("diff-versions", "--pending", "--snapshot", DEMO, "--from", "1.35", "--to", "1.35", "-o", "json")
    data = json.loads(r.stdout)
    assert (r.exit_code, data["sameSides"], data["differs"], data["pods"]) == (0, True, False, [])
    r = invoke("diff-versions", "--pending", "--snapshot", DEMO, "--from", "1.35", "--to", "1.35", "-o", "markdown")
    assert r.stdout.splitlines()[-1].startswith("--from and --to are both kube-scheduler v1.35.4")


@pytest.mark.parametrize(
    ("scope", "pods"),
    [
        (["-A"], {"shop/web-7d9f-pending", "shop/checkout-pending", "shop/canary-gated", "ml/train-pending",
                  "ml/notebook-pending", "batch/report-pending"}),
        ([], {"shop/web-7d9f-pending", "shop/checkout-pending", "shop/canary-gated", "ml/train-pending",
              "ml/notebook-pending", "batch/report-pending"}),
        (["-n", "ml"], {"ml/train-pending", "ml/notebook-pending"}),
    ],
)
@pytest.mark.parametrize("command", [["diff-versions", "--to", "1.36"], ["diff-profiles", "-p", "default-scheduler", "-p", "default-scheduler"]])
def test_pending_pods_of_one_namespace_or_all(command: list[str], scope: list[str], pods: set[str]) -> None:
    r = invoke(*command, "--pending", *scope, "--snapshot", DEMO, "-o", "json")
    assert r.exit_code in (0, 1), r.output
    assert {p["pod"] for p in json.loads(r.stdout)["pods"]} == pods


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pending", "-A", "-n", "ml"], "error: give -n NAMESPACE or -A, not both"),
        (["train-pending", "-A"], "error: -A goes with --pending (every pending pod of every namespace)"),
    ],
)
def test_all_namespaces_is_for_pending_pods_only(args: list[str], message: str) -> None:
    assert one_error_line(invoke("diff-versions", *args, "--snapshot", DEMO, "--to", "1.36")) == message


def test_diff_versions_defaults_from_to_the_clusters_version_and_needs_to() -> None:
    r = invoke("diff-versions", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--to", "1.36", "-o", "json")
    data = json.loads(r.stdout)
    assert data["a"]["label"].startswith("kube-scheduler v1.35.4")
    assert one_error_line(invoke("diff-versions", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO)) == (
        "error: give --to VERSION (1.33, 1.34, 1.35, 1.36 or 1.37)")


def test_diff_versions_markdown_has_its_title_and_the_attribution() -> None:
    r = invoke("diff-versions", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--to", "1.36", "-o", "markdown")
    assert r.stdout.startswith("### kschedctl diff-versions")
    assert "- because v1.36: NodeResourcesBalancedAllocation" in r.stdout


@pytest.mark.parametrize(
    ("a", "b", "names"),
    [
        (35, 36, {"BalancedAllocationChange", "NodeDeclaredFeaturesTable", "NodeDeclaredFeatures", "PodGroupCycle",
                  "PermitWaitMessage", "InPlacePodLevelResourcesVerticalScaling", "ImageLocalityImageVolumes",
                  "DRADeviceTaints"}),
        (34, 35, {"DynamicResourcesScore", "DeterministicTieBreak", "OpportunisticBatching"}),
        (33, 34, {"TaintTolerationMessage", "FitUnresolvable", "ReadWriteOncePodMessage", "NodePortsSidecars",
                  "DynamicResourceAllocation", "PodLevelResources"}),
        (36, 35, {"BalancedAllocationChange", "NodeDeclaredFeaturesTable", "NodeDeclaredFeatures", "PodGroupCycle",
                  "PermitWaitMessage", "InPlacePodLevelResourcesVerticalScaling", "ImageLocalityImageVolumes",
                  "DRADeviceTaints"}),
        # the gates whose effects changed; NodeDeclaredFeatures (locked now) was on in v1.36 already
        (36, 37, {"GangSchedulingByGenericWorkload", "PodGroupPostFilter", "StorageCapacityScoring",
                  "ResizeRequestsMaxOfTotals", "ImageLocalityVolumeThreshold", "NodeDeclaredFeaturesBindMounts",
                  "VolumeLimitScaling", "DRADeviceTaintRules", "GatedPodsNominated"}),
        (37, 36, {"GangSchedulingByGenericWorkload", "PodGroupPostFilter", "StorageCapacityScoring",
                  "ResizeRequestsMaxOfTotals", "ImageLocalityVolumeThreshold", "NodeDeclaredFeaturesBindMounts",
                  "VolumeLimitScaling", "DRADeviceTaintRules", "GatedPodsNominated"}),
    ],
)
def test_the_change_table_between_two_versions(a: int, b: int, names: set[str]) -> None:
    assert {c.name for c in changes_between(resolve_features(a), resolve_features(b))} == names


def test_a_gate_set_by_flag_is_a_change_of_its_own() -> None:
    fa = resolve_features(35)
    fb = resolve_features(35, {"NodeDeclaredFeatures": True})
    (change,) = changes_between(fa, fb)
    assert change.kind == "gate" and change.text.startswith("NodeDeclaredFeatures is on (--feature-gates)")
    assert all(r.minor in (34, 35, 36, 37) for r in RULES)
    (scs,) = changes_between(resolve_features(36), resolve_features(36, {"StorageCapacityScoring": True}))
    assert scs.touches("VolumeBinding", "score") and scs.text.startswith("StorageCapacityScoring is on (--feature-gates)")


# --------------------------------------------------------------------------- ties


def _tied(tmp_path: Path) -> tuple[str, str]:
    """Two identical nodes and a pod that fits both equally: a tie of two."""
    from tests.builders import make_node, make_pod

    nodes = [make_node(n).alloc(cpu="4", memory="16Gi", pods="110").raw for n in ("node-a", "node-b")]
    pod = make_pod("web").req(cpu="1", memory="1Gi").raw
    pod["metadata"].pop("uid", None)
    cluster, pods = tmp_path / "cluster.yaml", tmp_path / "pod.yaml"
    cluster.write_text(yaml.safe_dump_all(nodes, sort_keys=False))
    pods.write_text(yaml.safe_dump(pod, sort_keys=False))
    return str(cluster), str(pods)


@pytest.mark.parametrize(("version", "rule"), [("1.34", "random"), ("1.35", "first")])
def test_explain_says_how_the_version_breaks_a_tie(version: str, rule: str, tmp_path: Path) -> None:
    cluster, pod = _tied(tmp_path)
    r = invoke("explain", "pod", "-f", pod, "--snapshot", cluster, "--kube-version", version)
    assert r.exit_code == 0, r.output
    said = " ".join(r.stdout.split())
    assert ("picks one of them at random" in said) == (rule == "random")
    data = json.loads(invoke("explain", "pod", "-f", pod, "--snapshot", cluster, "--kube-version", version, "-o", "json").stdout)
    assert data["details"]["tieRule"] == rule and len(data["selected"]["candidates"]) == 2
    md = invoke("explain", "pod", "-f", pod, "--snapshot", cluster, "--kube-version", version, "-o", "markdown").stdout
    assert ("picks one of them at random" in " ".join(md.split())) == (rule == "random")


def test_simulate_notes_once_that_a_random_tie_makes_the_run_one_outcome(tmp_path: Path) -> None:
    cluster, pod = _tied(tmp_path)
    r = invoke("simulate", "-f", pod, "--snapshot", cluster, "--replicas", "3", "--kube-version", "1.34")
    said = " ".join(r.output.split())
    assert said.count("breaks a tie among the top totals at random") == 1
    r = invoke("simulate", "-f", pod, "--snapshot", cluster, "--replicas", "3", "--kube-version", "1.35")
    assert "at random" not in " ".join(r.output.split())


def test_a_kind_the_version_does_not_serve_is_refused_with_the_file_and_the_version() -> None:
    d = CONFORMANCE / "dev-247-dra-claims-two-devices"
    args = ["explain", "pod", "-f", str(d / "pod.yaml"), "--snapshot", str(d / "cluster.yaml")]
    line = one_error_line(invoke(*args, "--kube-version", "1.33"))
    assert line.startswith(f"error: {d / 'cluster.yaml'}: document 12: DeviceClass gpu.nvidia.com: apiVersion: ")
    assert line.endswith("(this API version does not exist in kube-scheduler/apiserver v1.33.5)")
    assert invoke(*args, "--kube-version", "1.34").exit_code in (0, 1)


def test_every_command_that_schedules_takes_the_version_options() -> None:
    """The rule: a command that takes --plugin-module runs plugins, so it takes the version and the gates too."""
    import typer

    def walk(cmd: Any, path: str) -> Any:
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            yield from walk(sub, f"{path} {name}".strip())
        if getattr(cmd, "commands", None) is None:
            yield path, cmd

    for path, cmd in walk(typer.main.get_command(app), ""):
        options = {o for p in cmd.params for o in getattr(p, "opts", [])}
        if "--plugin-module" in options:
            assert "--feature-gates" in options, path
            assert ({"--kube-version"} if path != "diff-versions" else {"--from", "--to"}) <= options, path


# --------------------------------------------------------------------------- versions a run can trust

CI = ROOT / "examples" / "ci"
CI_CHECK = ["check", str(CI / "scheduling-tests"), "--config", str(CI / "deploy" / "scheduler-config.yaml"),
            "--snapshot", str(CI / "snapshots" / "prod.yaml"), "-j", "1"]
OVERHEAD = CONFORMANCE / "dev-003-pod-overhead"


def recording(cluster: Path, version: str) -> None:
    """``cluster`` rewritten as ``kschedctl snapshot`` writes one: a List recording the server's ``version``."""
    items = list(yaml.safe_load_all(cluster.read_text()))
    doc = {"apiVersion": "v1", "kind": "List", "metadata": {"annotations": {"kschedctl.io/server-version": version}},
           "items": [i for i in items if i]}
    cluster.write_text(yaml.safe_dump(doc, sort_keys=False))


def scenario_recording(tmp_path: Path, name: str, version: str | None) -> Path:
    import shutil

    d = tmp_path / name
    shutil.copytree(OVERHEAD, d)
    if version is not None:
        recording(d / "cluster.yaml", version)
    return d


def test_check_follows_the_version_each_scenarios_cluster_records() -> None:
    """examples/ci's prod.yaml records v1.36.2: the scenarios checked against it run as v1.36.2, as explain
    does; gpu-pool-keeps-web-off has its own cluster.yaml, which records none: v1.35.4. --kube-version wins."""
    r = invoke(*CI_CHECK, "-o", "json")
    assert r.exit_code == 0, r.output
    assert {s["name"]: s["kubeVersion"] for s in json.loads(r.stdout)} == {
        "cart-rollout": "v1.36.2", "gpu-pool-keeps-web-off": "v1.35.4", "training-fits": "v1.36.2", "web-fits": "v1.36.2"}
    assert all("featureGates" not in s for s in json.loads(r.stdout))
    table = invoke(*CI_CHECK).stdout.splitlines()
    assert table[0] == "kschedctl check" and "┃ kube-scheduler ┃" in table[2]
    assert [ln.split("│")[2].strip() for ln in table if "gpu-pool-keeps-web-off" in ln and "│" in ln] == ["v1.35.4"]
    md = invoke(*CI_CHECK, "-o", "markdown").stdout
    assert "| scenario               | kube-scheduler   | result   |" in md
    r = invoke(*CI_CHECK, "--kube-version", "1.36", "-o", "json")
    assert {s["kubeVersion"] for s in json.loads(r.stdout)} == {"v1.36.2"}
    r = invoke(*CI_CHECK, "--kube-version", "1.36")
    assert r.stdout.splitlines()[0] == "kube-scheduler v1.36.2" and "┃ kube-scheduler ┃" not in r.stdout


def test_check_of_the_default_version_has_no_header_and_a_scenario_cluster_records_its_own(tmp_path: Path) -> None:
    plain = scenario_recording(tmp_path, "plain", None)
    r = invoke("check", str(plain))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0] == "kschedctl check" and "kube-scheduler" not in r.stdout
    recorded = scenario_recording(tmp_path, "recorded", "v1.36.2")
    r = invoke("check", str(recorded), "-o", "json")
    assert r.exit_code == 0, r.output
    [result] = json.loads(r.stdout)
    assert result["kubeVersion"] == "v1.36.2" and result["file"].endswith("expected-v1.36.json")
    assert invoke("check", str(recorded)).stdout.splitlines()[0] == "kube-scheduler v1.36.2"


def test_check_runs_another_patch_as_the_modelled_one_with_a_note(tmp_path: Path) -> None:
    d = scenario_recording(tmp_path, "patch", "v1.36.0")
    r = invoke("check", str(d), "-o", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)[0]["kubeVersion"] == "v1.36.2"
    assert (f"note: {d / 'cluster.yaml'}: Kubernetes v1.36.0; kschedctl follows kube-scheduler v1.36.2's rules for "
            "every v1.36 patch release") in " ".join(r.stderr.split())
    r = invoke("check", str(d), "--kube-version", "1.35.99")
    assert r.exit_code == 0, r.output
    assert ("note: --kube-version 1.35.99: kschedctl follows kube-scheduler v1.35.4's rules for every v1.35 patch "
            "release") in " ".join(r.stderr.split())


def test_check_refuses_a_malformed_recorded_version_as_that_scenarios_bad_input(tmp_path: Path) -> None:
    bad = scenario_recording(tmp_path, "bad", "banana")
    good = scenario_recording(tmp_path, "good", None)
    r = invoke("check", str(bad), str(good), "-o", "json")
    assert r.exit_code == 2, r.output
    by_name = {s["name"]: s for s in json.loads(r.stdout)}
    assert by_name["good"]["passed"] and by_name["good"]["kubeVersion"] == "v1.35.4"
    assert by_name["bad"]["kubeVersion"] is None
    assert by_name["bad"]["error"] == (
        f'{bad / "cluster.yaml"}: metadata.annotations["kschedctl.io/server-version"]: invalid Kubernetes version '
        '"banana": want 1.MINOR or 1.MINOR.PATCH, e.g. 1.35; correct it, or choose the version with --kube-version')
    assert invoke("check", str(bad), "--kube-version", "1.35").exit_code == 0


def test_check_applies_the_gates_to_each_scenarios_version_and_names_the_one_lacking_a_gate(tmp_path: Path) -> None:
    v136 = scenario_recording(tmp_path, "v136", "v1.36.2")
    gates = ["--feature-gates", "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"]
    r = invoke("check", str(v136), *gates, "-o", "json")
    assert r.exit_code == 0, r.output
    [result] = json.loads(r.stdout)
    assert result["featureGates"] == {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}
    assert (invoke("check", str(v136), *gates).stdout.splitlines()[0]
            == "kube-scheduler v1.36.2   feature gates: GenericWorkload=true, TopologyAwareWorkloadScheduling=true")
    v135 = scenario_recording(tmp_path, "v135", None)
    assert one_error_line(invoke("check", str(v136), str(v135), *gates)) == (
        'error: invalid argument "GenericWorkload=true,TopologyAwareWorkloadScheduling=true" for "--feature-gates" flag: '
        "unrecognized feature gate: TopologyAwareWorkloadScheduling (kube-scheduler v1.35.4 has no such gate; it exists in "
        "v1.36 and v1.37)")


def test_a_snapshots_recorded_version_is_checked(tmp_path: Path) -> None:
    """A malformed record is refused naming the file and the annotation (--kube-version overrides it); another
    patch of a supported minor runs as the modelled one, with a note."""
    snap = tmp_path / "cluster.yaml"
    snap.write_text(Path(DEMO).read_text())
    recording(snap, "1.x")
    args = ["explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", str(snap)]
    assert one_error_line(invoke(*args)) == (
        f'error: {snap}: metadata.annotations["kschedctl.io/server-version"]: invalid Kubernetes version "1.x": '
        "want 1.MINOR or 1.MINOR.PATCH, e.g. 1.35; correct it, or choose the version with --kube-version")
    assert invoke(*args, "--kube-version", "1.36").exit_code == 0
    recording(snap, "v1.36.0")
    r = invoke(*args)
    assert r.exit_code == 0, r.output
    assert "kube-scheduler v1.36.2" in r.stdout.splitlines()[1]
    assert (f"note: {snap}: Kubernetes v1.36.0; kschedctl follows kube-scheduler v1.36.2's rules for every v1.36 patch "
            "release") in " ".join(r.stderr.split())
    recording(snap, "v1.36.2")
    assert f"note: {snap}" not in invoke(*args).stderr


@pytest.mark.parametrize(("version", "release"), [("1.35.99", "v1.35.4"), ("v1.36.0", "v1.36.2")])
def test_another_patch_runs_the_modelled_one_with_a_note(version: str, release: str) -> None:
    r = invoke(*COMMANDS["explain pod"], "--kube-version", version)
    assert r.exit_code == 0, r.output
    assert f"kube-scheduler {release}" in r.stdout.splitlines()[1]
    minor = release.rsplit(".", 1)[0]
    assert [ln for ln in r.stderr.splitlines() if ln.startswith("note: --kube-version")] == [
        f"note: --kube-version {version}: kschedctl follows kube-scheduler {release}'s rules for every {minor} patch release"]
    assert "note: --kube-version" not in invoke(*COMMANDS["explain pod"], "--kube-version", release).stderr


def test_diff_versions_applies_the_gates_to_both_versions() -> None:
    """StorageCapacityScoring=true makes VolumeBinding score on both sides (before, neither side had it)."""
    args = ["diff-versions", "-f", str(SCS_SCENARIO / "pod.yaml"), "--snapshot", str(SCS_SCENARIO / "cluster.yaml"),
            "--from", "1.35", "--to", "1.36", "-o", "json"]

    def volume_binding(data: dict[str, Any]) -> list[bool]:
        plugins = {p["plugin"]: p for p in data["pods"][0]["scores"][0]["plugins"]}
        vb = plugins.get("VolumeBinding")
        return [vb is not None and vb[side] is not None for side in ("a", "b")]

    assert volume_binding(json.loads(invoke(*args, *SCS_GATE).stdout)) == [True, True]
    assert volume_binding(json.loads(invoke(*args).stdout)) == [False, False]
    changes = json.loads(invoke(*args, *SCS_GATE).stdout)["pods"][0]["attribution"]["changes"]
    assert "StorageCapacityScoring" not in {c["name"] for c in changes}  # on for both: not a change
    line = one_error_line(invoke(*args[:-2], "--feature-gates", "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"))
    assert "TopologyAwareWorkloadScheduling (kube-scheduler v1.35.4 has no such gate; it exists in v1.36 and v1.37)" in line


def test_diff_versions_reads_the_cluster_with_the_gates(tmp_path: Path) -> None:
    """A pod group's member keeps spec.schedulingGroup, and its PodGroup is read, when GenericWorkload is on."""
    snap = tmp_path / "cluster.yaml"
    snap.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {kubernetes.io/hostname: n1}}\n"
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n---\n"
        "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: pg, namespace: default}\n"
        "spec: {schedulingPolicy: {basic: {}}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
        "spec: {schedulingGroup: {podGroupName: pg}, containers: [{name: c, image: x}]}\n")
    r = invoke("diff-versions", "p", "--snapshot", str(snap), "--from", "1.36", "--to", "1.36",
               "--feature-gates", "GenericWorkload=true")
    assert r.exit_code == 0, r.output
    assert "schedulingGroup" not in r.output
