"""The command line through typer's CliRunner: outputs, exit codes, one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app

ROOT = Path(__file__).parent.parent
DEMO = str(ROOT / "fixtures" / "demo" / "cluster.yaml")
CONFORMANCE = ROOT / "tests" / "conformance"
runner = CliRunner()

SCHEMA_KEYS = {
    "k8sVersion", "pod", "profile", "preEnqueue", "preFilter", "preFilterNodeNames", "filter", "feasibleNodes",
    "postFilter", "preScore", "score", "totals", "selected", "fitError", "reserve", "permit", "preBind", "bind", "notes",
}


def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), input=input)


def test_explain_schedulable_demo_pod() -> None:
    r = invoke("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO)
    assert r.exit_code == 0, r.output
    assert "shop/web-7d9f-pending: schedulable" in r.output
    assert "Filter" in r.output and "Score" in r.output


@pytest.mark.parametrize("name", ["report-pending", "notebook-pending"])
def test_explain_unschedulable_demo_pods_exit_1(name: str) -> None:
    r = invoke("explain", "pod", name, "-n", "batch" if name.startswith("report") else "ml", "--snapshot", DEMO)
    assert r.exit_code == 1, r.output
    assert "unschedulable" in r.output
    assert "0/12 nodes are available" in r.output


def test_explain_gated_pod() -> None:
    r = invoke("explain", "pod", "canary-gated", "-n", "shop", "--snapshot", DEMO, "-o", "json")
    assert r.exit_code == 1
    data = json.loads(r.output)
    assert data["outcome"] == "gated"
    assert data["preEnqueue"][0]["code"] == "UnschedulableAndUnresolvable"


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_machine_readable_trace_has_the_conformance_keys(fmt: str) -> None:
    r = invoke("explain", "pod", "train-pending", "-n", "ml", "--snapshot", DEMO, "-o", fmt)
    data = json.loads(r.output) if fmt == "json" else yaml.safe_load(r.output)
    assert set(data) >= SCHEMA_KEYS
    assert data["k8sVersion"] == "v1.35.4"


def test_markdown_and_wide() -> None:
    md = invoke("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "-o", "markdown")
    assert md.output.startswith("### kschedctl: shop/web-7d9f-pending")
    assert "| node " in md.output and "#### Filter" in md.output
    wide = invoke("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "-o", "wide")
    assert "Nodes (requested / allocatable)" in wide.output
    # spread/affinity detail: per-domain matching pods behind each node's score
    assert "PodTopologySpread: why" in wide.output and "matchingPods=" in wide.output
    assert "InterPodAffinity: why" in wide.output


def test_explain_from_file_and_stdin(tmp_path: Path) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    f = tmp_path / "pod.yaml"
    f.write_text(yaml.safe_dump(pod))
    r = invoke("explain", "pod", "-f", str(f), "--snapshot", DEMO)
    assert r.exit_code == 0, r.output
    r2 = invoke("explain", "pod", "-f", "-", "--snapshot", DEMO, "-o", "json", input=yaml.safe_dump(pod))
    assert json.loads(r2.output)["pod"] == "default/x"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["explain", "pod", "nope", "--snapshot", DEMO], 'pod "nope" not found in namespace "default"'),
        (["explain", "pod", "x", "--snapshot", "/does/not/exist.yaml"], "/does/not/exist.yaml: no such file"),
        (["explain", "pod", "--snapshot", DEMO], "give either a pod NAME"),
    ],
)
def test_errors_are_one_line_exit_2(args: list[str], message: str) -> None:
    r = invoke(*args)
    assert r.exit_code == 2
    assert message in r.output
    assert "Traceback" not in r.output
    assert len([ln for ln in r.output.splitlines() if ln.strip()]) == 1


def test_malformed_snapshot_names_file_and_document(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: 'a lot'}}\n")
    r = invoke("explain", "pod", "x", "--snapshot", str(f))
    assert r.exit_code == 2
    assert f"{f}: document 1: Node n: status.allocatable.cpu" in r.output
    assert "Traceback" not in r.output


def test_bad_config_exit_2(tmp_path: Path) -> None:
    f = tmp_path / "cfg.yaml"
    f.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 200\n")
    r = invoke("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--config", str(f))
    assert r.exit_code == 2
    assert "percentageOfNodesToScore" in r.output


def _scenario(tmp_path: Path, expected: dict) -> Path:  # type: ignore[type-arg]
    d = tmp_path / "s1"
    shutil.copytree(CONFORMANCE / "dev-015-taint-toleration", d)
    (d / "expected.json").unlink()
    (d / "expected.yaml").write_text(yaml.safe_dump(expected))
    return d


def test_check_partial_expectation_passes(tmp_path: Path) -> None:
    d = _scenario(tmp_path, {"selected": {"candidates": ["aks-apps-13146115-vmss000007", "aks-dbpool-87135710-vmss000000"]}})
    r = invoke("check", str(d))
    assert r.exit_code == 0, r.output
    assert r.output.strip().splitlines()[-1] == "1 passed, 0 failed"


def test_check_reports_differences(tmp_path: Path) -> None:
    _scenario(tmp_path, {"selected": {"candidates": ["nope"]}, "fitError": None})
    r = invoke("check", str(tmp_path), "-o", "json")
    assert r.exit_code == 1
    assert r.stderr.strip() == "0 passed, 1 failed"  # stdout is exactly one JSON document
    data = json.loads(r.stdout)
    assert data[0]["name"] == "s1" and data[0]["passed"] is False
    assert data[0]["differences"][0]["path"] == "selected.candidates"
    assert "filter" in data[0]["actual"]


def test_check_conformance_scenario_exactly() -> None:
    r = invoke("check", str(CONFORMANCE / "dev-015-taint-toleration"))
    assert r.output.strip().splitlines()[-1] == "1 passed, 0 failed", r.output


def test_kubectl_plugin_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from kschedctl.cli import common as cli

    monkeypatch.setattr("sys.argv", ["/usr/local/bin/kubectl-kschedctl"])
    assert cli.prog_name() == "kubectl kschedctl"
    monkeypatch.setattr("sys.argv", ["kschedctl"])
    assert cli.prog_name() == "kschedctl"


def test_version() -> None:
    r = invoke("version")
    assert "kube-scheduler v1.35.4" in r.output


def test_reasons_with_brackets_are_shown_verbatim() -> None:
    r = invoke("explain", "pod", "canary-gated", "-n", "shop", "--snapshot", DEMO)
    assert "waiting for scheduling gates: [example.com/rollout-approval]" in r.output


# --------------------------------------------------------------------------- global flags, help, streams


@pytest.mark.parametrize("where", ["first", "last", "env"])
def test_debug_is_accepted_anywhere_and_from_the_environment(where: str) -> None:
    args = ["explain", "pod", "nosuch", "-n", "shop", "--snapshot", DEMO]
    if where == "first":
        r = runner.invoke(app, ["--debug", *args])
    elif where == "last":
        r = runner.invoke(app, [*args, "--debug"])
    else:
        r = runner.invoke(app, args, env={"KSCHEDCTL_DEBUG": "1"})
    assert r.exit_code == 2
    assert "Traceback" in r.stderr and r.stderr.strip().endswith('error: pod "nosuch" not found in namespace "shop" of ' + DEMO)
    quiet = runner.invoke(app, args, env={"KSCHEDCTL_DEBUG": None})
    assert "Traceback" not in quiet.output


def test_version_flag_and_machine_readable_version() -> None:
    from kschedctl import K8S_VERSION, __version__

    line = f"kschedctl {__version__} (models kube-scheduler {K8S_VERSION} by default)"
    assert invoke("--version").stdout.strip() == line
    assert invoke("version").stdout.splitlines() == [line, "supported (--kube-version): v1.33.5, v1.34.2, v1.35.4, v1.36.2, v1.37.2"]
    supported = ["v1.33.5", "v1.34.2", "v1.35.4", "v1.36.2", "v1.37.2"]
    want = {"kschedctl": __version__, "kubeScheduler": K8S_VERSION, "supportedVersions": supported}
    assert json.loads(invoke("version", "-o", "json").stdout) == want
    assert yaml.safe_load(invoke("version", "-o", "yaml").stdout) == want


@pytest.mark.parametrize(
    "command", [[], ["explain", "pod"], ["explain", "pending"], ["check"], ["diff-profiles"], ["simulate"], ["plugins"], ["snapshot"], ["version"]]
)
def test_help_uses_plain_uppercase_metavars(command: list[str]) -> None:
    r = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    for leak in ("<str>", "<path>", "<int>", "list[", "{", "<table"):
        assert leak not in r.stdout, (command, leak)
    for line in r.stdout.splitlines():
        if line.lstrip().startswith("-") and "  " in line.strip():
            option = line.strip().split("  ")[0]
            metavar = option.split(" ")[-1] if " " in option.split(", ")[-1] else ""
            assert metavar == metavar.upper(), (command, line)


def test_argument_metavars_in_usage() -> None:
    assert "Usage: kschedctl check [OPTIONS] PATH..." in invoke("check", "--help").stdout
    assert "[OPTIONS] [NAME]" in invoke("explain", "pod", "--help").stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["simulate", "--bogus"], "error: No such option: --bogus (Possible options: --runs) (try 'kschedctl simulate -h')"),
        (["simulate", "--runs", "x"], "error: Invalid value for '--runs': "),
        (["nosuch"], "error: No such command 'nosuch' (try 'kschedctl -h')"),
        (["explain", "nosuch"], "error: No such command 'nosuch' (try 'kschedctl explain -h')"),
        (["explain", "pod", "x", "-o", "bogus"], "error: Invalid value for '--output' / '-o': "),
        (["check"], "error: Missing argument 'PATH...' (try 'kschedctl check -h')"),
        (["explain", "pod", "--snapshot"], "error: Option '--snapshot' requires an argument"),
    ],
)
def test_usage_errors_are_one_line(args: list[str], message: str) -> None:
    """click's usage errors read as every other error: one line on stderr, ``error: ...``, exit 2."""
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert r.stderr.startswith(message), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr


def test_help_is_still_help() -> None:
    """``--help`` and a group without its subcommand still print the usage and the options."""
    assert invoke("simulate", "--help").stdout.startswith("Usage: kschedctl simulate [OPTIONS]")
    bare = invoke("explain")
    assert "Usage: kschedctl explain [OPTIONS] COMMAND [ARGS]..." in bare.output


def test_notes_go_to_stderr_results_to_stdout() -> None:
    r = invoke("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO)
    assert "note:" not in r.stdout
    assert "note: default configuration (kube-scheduler v1.35)" in r.stderr
    j = invoke("explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "-o", "json")
    assert json.loads(j.stdout)["notes"] == ["default configuration (kube-scheduler v1.35)"]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_check_machine_output_is_one_document(fmt: str) -> None:
    r = invoke("check", str(CONFORMANCE / "dev-015-taint-toleration"), "-o", fmt)
    assert r.exit_code == 0
    doc = json.loads(r.stdout) if fmt == "json" else yaml.safe_load(r.stdout)
    assert [d["name"] for d in doc] == ["dev-015-taint-toleration"]
    assert r.stderr.strip() == "1 passed, 0 failed"


def test_plugins_as_markdown() -> None:
    r = invoke("plugins", "-o", "markdown")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0] == "### kschedctl plugins"
    assert lines[2].startswith("| name ") and "| args model" in lines[2]
    assert any(line.startswith("| `NodeResourcesFit` ") and "NodeResourcesFitArgs" in line for line in lines)


def test_install_completion_refuses_without_home() -> None:
    r = runner.invoke(app, ["--install-completion", "bash"], env={"HOME": None})
    assert r.exit_code == 2
    assert r.stderr.startswith("error: --install-completion writes into your home directory, but HOME is not set")
    r = runner.invoke(app, ["--install-completion", "bash"], env={"HOME": ""})
    assert r.exit_code == 2


def test_pod_names_complete_from_the_snapshot_given() -> None:
    from kschedctl.cli.complete import cobra_completions

    lines = cobra_completions(["explain", "pod", "--snapshot", DEMO, "-n", "shop", ""])
    names = lines[:-1]
    assert names[:3] == ["canary-gated", "checkout-pending", "web-7d9f-pending"]  # pending pods first
    assert "web-7d9f-00" in names and all(not n.startswith("etl-") for n in names)
    assert cobra_completions(["explain", "pod", "--snapshot", DEMO, "-n", "ml", "tr"])[:-1][0] == "train-pending"
    assert cobra_completions(["explain", "pod", "--snapshot", DEMO, "-n", ""])[:-1] == ["batch", "ml", "monitoring", "shop"]
    # no --snapshot and no cluster: nothing, quickly, and no traceback
    assert cobra_completions(["explain", "pod", "--kubeconfig", "/nonexistent", ""]) == [":0"]
