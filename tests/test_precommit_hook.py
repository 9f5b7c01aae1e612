"""``.pre-commit-hooks.yaml``: kschedctl's pre-commit hooks, validated and run in a temporary git repository.

pre-commit installs a ``language: python`` hook by pip-installing this repository with its
dependencies into a new virtualenv, which needs the package index. So the hooks are run here as
pre-commit runs them once installed, but from a ``repo: local`` configuration holding the very same
definitions (read from ``.pre-commit-hooks.yaml``, with the ``args`` and ``files`` docs/ci.md gives
them) and ``language: unsupported``, i.e. the ``kschedctl`` already on PATH. pre-commit then does
the rest for real: its ``git commit`` hook, selecting files by ``files``, passing them (or not) as
arguments, failing the commit on exit status 1. The definitions are also checked against
pre-commit's own manifest schema, and by the strict check below, which needs no pre-commit.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_ci_docs import REPO, env, unlabeled_yaml, yaml_files

ROOT = Path(__file__).parent.parent
MANIFEST = ROOT / ".pre-commit-hooks.yaml"

#: pre-commit's manifest keys (``pre_commit.clientlib.MANIFEST_HOOK_DICT``) and the type of each.
REQUIRED = {"id": str, "name": str, "entry": str, "language": str}
OPTIONAL: dict[str, type | tuple[type, ...]] = {
    "alias": str, "files": str, "exclude": str, "types": list, "types_or": list, "exclude_types": list,
    "additional_dependencies": list, "args": list, "always_run": bool, "fail_fast": bool, "pass_filenames": bool,
    "description": str, "language_version": str, "log_file": str, "require_serial": bool, "stages": list,
    "verbose": bool, "minimum_pre_commit_version": str,
}
SCENARIO_FILES = ["scheduling-tests/web/pod.yaml", "pods.yaml", "a/cluster.yaml", "a/config.yaml", "a/expected.json",
                  "a/expected.yml", "a/expected-sequence.yaml", "a/expected-sequence.json"]
OTHER_FILES = ["README.md", "values.yaml", "a/mypod.yaml", "a/pods.yaml.bak", "a/expected.txt", "chart/templates/deployment.yaml"]


def hooks() -> list[dict[str, Any]]:
    return list(yaml.safe_load(MANIFEST.read_text()))


def test_manifest_is_strictly_valid() -> None:
    ids = [h.get("id") for h in hooks()]
    assert ids == ["kschedctl-check", "kschedctl-check-all"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    for hook in hooks():
        for key, kind in REQUIRED.items():
            assert isinstance(hook.get(key), kind), (hook["id"], key)
        for key, value in hook.items():
            assert key in REQUIRED or key in OPTIONAL, (hook["id"], f"unknown key {key}")
            if key in OPTIONAL:
                assert isinstance(value, OPTIONAL[key]), (hook["id"], key)
        assert hook["language"] == "python"  # pre-commit pip-installs this repository: pyproject.toml
        assert hook["entry"].split()[0] in scripts and hook["entry"].split()[1] == "check"
        assert hook["require_serial"] is True  # one kschedctl reads the cluster once, not one per chunk of files
        files = re.compile(hook["files"])
        assert all(files.search(f) for f in SCENARIO_FILES), hook["id"]
        assert not any(files.search(f) for f in OTHER_FILES), hook["id"]
    by_id = {h["id"]: h for h in hooks()}
    assert by_id["kschedctl-check"]["pass_filenames"] is True and "--changed" in by_id["kschedctl-check"]["entry"]
    assert by_id["kschedctl-check-all"]["pass_filenames"] is False


def test_manifest_and_the_docs_config_pass_pre_commits_own_schema(tmp_path: Path) -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib", reason="pre-commit is a dev dependency: pip install -e '.[dev]'")
    loaded = clientlib.load_manifest(str(MANIFEST))
    assert [h["id"] for h in loaded] == ["kschedctl-check", "kschedctl-check-all"]
    config = tmp_path / ".pre-commit-config.yaml"
    config.write_text(yaml_files()[".pre-commit-config.yaml"])
    [repo] = clientlib.load_config(str(config))["repos"]
    assert {h["id"] for h in repo["hooks"]} == {h["id"] for h in hooks()}


def test_a_plugin_in_additional_dependencies_passes_pre_commits_schema(tmp_path: Path) -> None:
    """docs/ci.md's snippet: the kschedctl-check hook with an out-of-tree plugin's package."""
    clientlib = pytest.importorskip("pre_commit.clientlib", reason="pre-commit is a dev dependency: pip install -e '.[dev]'")
    [[snippet]] = unlabeled_yaml()
    assert snippet["id"] == "kschedctl-check" and snippet["additional_dependencies"]
    docs = yaml.safe_load(yaml_files()[".pre-commit-config.yaml"])
    docs["repos"][0]["hooks"][0] = snippet
    config = tmp_path / ".pre-commit-config.yaml"
    config.write_text(yaml.safe_dump(docs))
    [repo] = clientlib.load_config(str(config))["repos"]
    assert repo["hooks"][0]["additional_dependencies"] == snippet["additional_dependencies"]
    assert "additional_dependencies" in MANIFEST.read_text()  # the manifest's comment says so too


def local_config(docs_config: dict[str, Any]) -> dict[str, Any]:
    """The docs' configuration with the hooks defined locally: same definitions, the kschedctl on PATH."""
    defined = {h["id"]: h for h in hooks()}
    [repo] = docs_config["repos"]
    local = []
    for use in repo["hooks"]:
        hook = {**defined[use["id"]], **{k: v for k, v in use.items() if k != "id"}, "id": use["id"]}
        hook["language"] = "unsupported"
        local.append(hook)
    return {"repos": [{"repo": "local", "hooks": local}]}


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(["git", *args], cwd=repo, env=_env(repo), capture_output=True, text=True, timeout=300)
    if check:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def _env(repo: Path) -> dict[str, str]:
    home = repo.parent / "home"
    return env(
        HOME=str(home), PRE_COMMIT_HOME=str(home / "pre-commit"), GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
    )


def commit(repo: Path, message: str) -> subprocess.CompletedProcess[str]:
    """``git commit`` with the hooks' output (git gives a hook's stdout to stderr) as ``stdout``."""
    git(repo, "add", "-A")
    return subprocess.run(["git", "commit", "-m", message], cwd=repo, env=_env(repo), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)


def status_of(output: str, hook_name: str) -> str:
    line = next(ln for ln in output.splitlines() if ln.startswith(hook_name))
    return line.rsplit(".", 1)[-1].replace("(no files to check)", "").strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_hooks_guard_commits_in_a_git_repository(tmp_path: Path) -> None:
    pytest.importorskip("pre_commit", reason="pre-commit is a dev dependency: pip install -e '.[dev]'")
    repo = tmp_path / "repo"
    shutil.copytree(REPO, repo)
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(local_config(yaml.safe_load(yaml_files()[".pre-commit-config.yaml"]))))
    git(repo, "init", "-q", "-b", "main")
    assert commit(repo, "scheduling tests").returncode == 0
    pre_commit = [sys.executable, "-m", "pre_commit"]
    r = subprocess.run([*pre_commit, "install"], cwd=repo, env=_env(repo), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    check, check_all = (h["name"] for h in hooks())

    # a scenario's expectation changed, wrongly: its hook runs it and refuses the commit
    expected = repo / "scheduling-tests" / "web-fits" / "expected.yaml"
    good = expected.read_text()
    expected.write_text(good.replace("ip-10-0-7-32", "ip-10-0-1-14"))
    r = commit(repo, "web moves")
    assert r.returncode != 0, r.stdout
    assert status_of(r.stdout, check) == "Failed" and status_of(r.stdout, check_all) == "Skipped"
    assert "FAIL web-fits (scheduling-tests/web-fits): 1 difference" in r.stdout
    assert "training-fits" not in r.stdout  # only the changed scenario ran

    # a comment added: the scenario still passes, the commit goes through
    expected.write_text("# reviewed\n" + good)
    r = commit(repo, "comment")
    assert r.returncode == 0, r.stdout
    assert status_of(r.stdout, check) == "Passed"

    # the scheduler configuration changed: every scenario runs, and two no longer hold
    cfg = repo / "deploy" / "scheduler-config.yaml"
    cfg.write_text(cfg.read_text().replace("MostAllocated", "LeastAllocated"))
    r = commit(repo, "spread instead of pack")
    assert r.returncode != 0
    assert status_of(r.stdout, check) == "Skipped" and status_of(r.stdout, check_all) == "Failed"
    assert "2 passed, 2 failed" in r.stdout

    # nothing the hooks look at: both skipped
    git(repo, "checkout", "HEAD", "--", "deploy/scheduler-config.yaml")
    (repo / "README.md").write_text("scheduling tests\n")
    r = commit(repo, "readme")
    assert r.returncode == 0, r.stdout
    assert status_of(r.stdout, check) == "Skipped" and status_of(r.stdout, check_all) == "Skipped"
