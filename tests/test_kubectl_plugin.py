"""kubectl-plugin conventions: usage text, kubectl's completion helper, shell scripts, the krew manifest."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from kschedctl import __version__
from kschedctl.cli.complete import SCRIPTS, cobra_completions, completion_script, kubectl_complete
from kschedctl.cli.options import COMPLETION_TIMEOUT_ENV, completion_timeout
from tests.apiserver import RecordedAPIServer

ROOT = Path(__file__).parent.parent


def test_usage_reads_kubectl_kschedctl_as_a_plugin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from kschedctl.cli.main import main

    monkeypatch.setattr(sys, "argv", ["/home/me/.local/bin/kubectl-kschedctl", "explain", "pod", "--help"])
    with pytest.raises(SystemExit) as e:
        main()
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith("Usage: kubectl kschedctl explain pod [OPTIONS]")
    monkeypatch.setattr(sys, "argv", ["kschedctl", "explain", "pod", "--help"])
    with pytest.raises(SystemExit):
        main()
    assert capsys.readouterr().out.startswith("Usage: kschedctl explain pod")
    monkeypatch.setenv("KSCHEDCTL_KUBECTL_PLUGIN", "1")  # set by the krew shim
    with pytest.raises(SystemExit):
        main()
    assert capsys.readouterr().out.startswith("Usage: kubectl kschedctl explain pod")


def test_help_does_not_import_the_kubernetes_client() -> None:
    code = "import sys, kschedctl.cli.main; sys.exit('kubernetes' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


# --------------------------------------------------------------------------- kubectl completion


def test_kubectl_complete_subcommands(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["kubectl_complete-kschedctl", "explain", ""])
    kubectl_complete()
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split("\t")[0] for ln in lines] == ["pod", "pending", ":4"]
    assert lines[0].startswith("pod\tDry-run one scheduling cycle")


@pytest.mark.parametrize(
    ("words", "values", "directive"),
    [
        (["sn"], ["snapshot"], 4),
        (["explain", "pod", "--con"], ["--config", "--context"], 4),
        (["explain", "pod", "-o", ""], ["table", "wide", "json", "yaml", "markdown"], 4),
        (["explain", "pending", "-o", "m"], ["markdown"], 4),
        (["explain", "pod", "--snapshot", ""], [], 0),  # files: the shell's own completion
        (["explain", "pod", "--config", ""], [], 0),
    ],
)
def test_cobra_protocol(words: list[str], values: list[str], directive: int) -> None:
    lines = cobra_completions(words)
    assert [ln.split("\t")[0] for ln in lines[:-1]] == values
    assert lines[-1] == f":{directive}"


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[RecordedAPIServer]:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with RecordedAPIServer() as srv:
        kc = srv.kubeconfig(tmp_path / "kc", namespace="shop")
        other = tmp_path / "other"
        other.write_text(
            yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "clusters": [], "users": [], "contexts": [{"name": "staging", "context": {"cluster": "x", "user": "y"}}]})
        )
        monkeypatch.setenv("KUBECONFIG", f"{kc}{os.pathsep}{other}")
        yield srv


def test_completes_from_the_cluster(served: RecordedAPIServer) -> None:
    pods = [ln.split("\t")[0] for ln in cobra_completions(["explain", "pod", "web-"])]
    assert pods[0] == "web-7c9f8d6b4-new01"  # the pending pod first
    assert len(pods) > 2 and all(p.startswith("web-") for p in pods[:-1]) and pods[-1] == ":4"
    assert cobra_completions(["explain", "pod", "-n", "mon"]) == ["monitoring", ":4"]
    assert cobra_completions(["explain", "pending", "--context", ""]) == ["recorded", "staging", ":4"]
    assert cobra_completions(["explain", "pod", "-n", "kube-system", "kube-proxy-01"]) == [
        "kube-proxy-010", "kube-proxy-011", "kube-proxy-012", ":4",
    ]
    assert {s.method for s in served.seen} == {"GET"}


@pytest.mark.parametrize(("value", "seconds"), [(None, 2.0), ("7.5", 7.5), ("0", 0.0), ("-1", 0.0), ("soon", 2.0)])
def test_completion_timeout_from_the_environment(monkeypatch: pytest.MonkeyPatch, value: str | None, seconds: float) -> None:
    if value is None:
        monkeypatch.delenv(COMPLETION_TIMEOUT_ENV, raising=False)
    else:
        monkeypatch.setenv(COMPLETION_TIMEOUT_ENV, value)
    assert completion_timeout() == seconds


def test_completion_without_a_cluster_offers_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert cobra_completions(["explain", "pod", ""]) == [":0"]


# --------------------------------------------------------------------------- shell scripts


@pytest.mark.parametrize("shell", sorted(SCRIPTS))
def test_completion_scripts_are_up_to_date(shell: str) -> None:
    committed = ROOT / "completions" / SCRIPTS[shell]
    assert committed.is_file(), f"missing {committed}: run python3 -m kschedctl.cli.complete"
    assert committed.read_text() == completion_script(shell), (
        f"{committed} is stale: run python3 -m kschedctl.cli.complete"
    )


def test_console_scripts() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubectl-kschedctl"] == scripts["kschedctl"] == "kschedctl.cli.main:run"
    assert scripts["kubectl_complete-kschedctl"] == "kschedctl.cli.complete:kubectl_complete"


# --------------------------------------------------------------------------- krew


def _build_release() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_release", ROOT / "krew" / "build_release.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_krew_manifest() -> None:
    manifest = yaml.safe_load((ROOT / "krew" / "kschedctl.yaml").read_text())
    assert manifest["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert manifest["kind"] == "Plugin"
    assert manifest["metadata"]["name"] == "kschedctl"
    spec = manifest["spec"]
    assert spec["version"] == f"v{__version__}"
    assert spec["homepage"].startswith("https://")
    assert spec["shortDescription"] and spec["description"]
    assert "python3 -m pip install ." in spec["caveats"] and "python3 -m kschedctl.dist" in spec["caveats"]  # the README's ways
    assert spec["platforms"]
    for p in spec["platforms"]:
        assert p["bin"] == "kubectl-kschedctl"
        assert {"from": "kubectl-kschedctl", "to": "."} in p["files"]
        assert p["uri"].endswith(f"/v{__version__}/kubectl-kschedctl-v{__version__}.zip")
        assert re.fullmatch(r"[0-9a-f]{64}", p["sha256"])
        assert p["selector"]["matchExpressions"][0]["values"] == ["linux", "darwin"]


def test_krew_archive_is_reproducible_and_matches_the_manifest(tmp_path: Path) -> None:
    br = _build_release()
    archive = br.build_archive(tmp_path, f"v{__version__}")
    with zipfile.ZipFile(archive) as zf:
        assert zf.namelist() == ["kubectl-kschedctl"]
        info = zf.getinfo("kubectl-kschedctl")
        assert (info.external_attr >> 16) & 0o777 == 0o755
        assert zf.read("kubectl-kschedctl") == (ROOT / "krew" / "kubectl-kschedctl").read_bytes()
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    manifest = yaml.safe_load((ROOT / "krew" / "kschedctl.yaml").read_text())
    assert {p["sha256"] for p in manifest["spec"]["platforms"]} == {digest}, "run python3 krew/build_release.py"
    assert br.main(["--out", str(tmp_path / "again"), "--check"]) == 0
    filled = br.fill_manifest((ROOT / "krew" / "kschedctl.yaml").read_text(), "v9.9.9", "ab" * 32)
    spec = yaml.safe_load(filled)["spec"]
    assert spec["version"] == "v9.9.9"
    assert spec["platforms"][0]["uri"].endswith("/download/v9.9.9/kubectl-kschedctl-v9.9.9.zip")
    assert spec["platforms"][0]["sha256"] == "ab" * 32


@pytest.mark.skipif(sys.platform == "win32", reason="the shim is a POSIX shell script")
def test_krew_shim_runs_the_installed_kschedctl(tmp_path: Path) -> None:
    fake = tmp_path / "kschedctl"
    fake.write_text('#!/bin/sh\necho "plugin=$KSCHEDCTL_KUBECTL_PLUGIN args=$*"\n')
    fake.chmod(0o755)
    env = {"PATH": f"{tmp_path}{os.pathsep}/usr/bin{os.pathsep}/bin"}
    out = subprocess.run([str(ROOT / "krew" / "kubectl-kschedctl"), "explain", "pending", "-A"], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "plugin=1 args=explain pending -A"
