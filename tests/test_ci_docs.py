"""docs/ci.md is copy-pasteable: its workflow files are the ones shipped in ``examples/ci``, parse, have
the structure a CI system needs, and the commands they hold pass on that repository of scheduling
tests and fail on a pull request that changes the scheduler configuration.

The repository's snapshot was written as the page tells users to write it, by ``kschedctl snapshot``,
from a real API server's recorded answers (``tests/apiserver.py``), which also stand in for the
live cluster of the nightly workflow; a test writes it again and compares. The install line is run
as written, with OWNER/REF pointing at an archive of this repository laid out as GitHub serves one
(``pip install --dry-run``: what would be installed, without the package index); the ``kschedctl``
being tested is the one on PATH.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl import __version__
from tests.apiserver import RecordedAPIServer
from tests.test_junit import validate

ROOT = Path(__file__).parent.parent
DOC = ROOT / "docs" / "ci.md"
REPO = ROOT / "examples" / "ci"
INSTALL = 'python -m pip install "kschedctl @ https://github.com/OWNER/kschedctl/archive/REF.tar.gz"'
#: A bound for a hung process, far above a run (pip builds included) even on a machine ten times slower.
TIMEOUT = 900
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(DOC.read_text())]


def yaml_files() -> dict[str, str]:
    """The page's YAML blocks, by the path their first line names (``# .gitlab-ci.yml``)."""
    out = {}
    for lang, text in blocks():
        if lang == "yaml":
            first, _, rest = text.partition("\n")
            assert first.startswith("# "), f"a YAML block must start with the file it is: {first!r}"
            out[first[2:].strip()] = rest
    return out


def shell_commands() -> list[str]:
    return [line for lang, text in blocks() if not lang for line in text.splitlines() if line.startswith("kschedctl ")]


def unlabeled_yaml() -> list[Any]:
    """The page's unlabeled blocks that are YAML snippets (indented lines of a file shown above)."""
    return [yaml.safe_load(text) for lang, text in blocks() if not lang and text.startswith("      - id:")]


def env(**extra: str) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    assert (Path(bin_dir) / "kschedctl").exists(), "the kschedctl console script is not installed beside python"
    e = {k: v for k, v in os.environ.items() if not k.startswith(("KSCHEDCTL_", "GITHUB_", "CI_", "KUBERNETES_"))}
    # never a kubeconfig of the machine running the tests: only the one a test gives
    e.update(PATH=bin_dir + os.pathsep + e.get("PATH", ""), COLUMNS="120", NO_COLOR="1", KUBECONFIG=os.devnull)
    e.update(extra)
    return e


@pytest.fixture(scope="module")
def server() -> Iterator[RecordedAPIServer]:
    with RecordedAPIServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def fresh_snapshot(server: RecordedAPIServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``kschedctl snapshot -o snapshots/prod.yaml``, as the page says, of the recorded cluster."""
    d = tmp_path_factory.mktemp("snapshot")
    kubeconfig = server.kubeconfig(d / "kubeconfig")
    out = d / "prod.yaml"
    r = subprocess.run(["kschedctl", "snapshot", "-o", str(out)], env=env(KUBECONFIG=str(kubeconfig)),
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    return out


def without_header(snapshot: str) -> str:
    """A snapshot file less its comment header (context, server address and time taken)."""
    return "".join(line for line in snapshot.splitlines(keepends=True) if not line.startswith("# "))


def test_the_shipped_snapshot_is_what_kschedctl_snapshot_writes(fresh_snapshot: Path) -> None:
    shipped = (REPO / "snapshots" / "prod.yaml").read_text()
    assert shipped.startswith("# kschedctl snapshot of context ")
    assert without_header(shipped) == without_header(fresh_snapshot.read_text())


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the repository of scheduling tests, as shipped."""
    return Path(shutil.copytree(REPO, tmp_path / "repo"))


def pull_request_changes_the_configuration(repo: Path) -> None:
    """The change a reviewer must see: from bin-packing back to kube-scheduler's default scoring
    (``pull-request/scheduler-config.yaml`` is the file as the pull request leaves it)."""
    cfg = repo / "deploy" / "scheduler-config.yaml"
    shutil.copy(repo / "pull-request" / "scheduler-config.yaml", cfg)


def test_the_pull_request_changes_only_the_scoring_strategy() -> None:
    def body(path: Path) -> str:
        return "".join(line for line in path.read_text().splitlines(keepends=True) if not line.startswith("#"))

    deploy, changed = body(REPO / "deploy" / "scheduler-config.yaml"), body(REPO / "pull-request" / "scheduler-config.yaml")
    assert changed == deploy.replace("type: MostAllocated", "type: LeastAllocated") != deploy


def resolve(text: str, secrets: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        assert name.startswith("secrets."), f"an expression the test cannot evaluate: {m.group(0)}"
        return secrets[name.removeprefix("secrets.")]
    return EXPRESSION.sub(one, text)


def run_step(step: dict[str, Any], repo: Path, secrets: dict[str, str] | None = None, **extra: str) -> subprocess.CompletedProcess[str]:
    """A ``run:`` step as GitHub runs it with ``shell: bash`` (``bash --noprofile --norc -eo pipefail``)."""
    assert step.get("shell") == "bash", "kschedctl's status must survive the pipe: shell: bash sets pipefail"
    step_env = {k: resolve(str(v), secrets or {}) for k, v in (step.get("env") or {}).items()}
    assert "${{" not in step["run"], "run: scripts take secrets through env:, never inline"
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=repo,
                          env=env(**extra, **step_env), capture_output=True, text=True, timeout=TIMEOUT)


def junit_of(command: str) -> str:
    m = re.search(r"--junit\s+(\S+)", command)
    assert m, f"no --junit in {command!r}"
    return m.group(1)


def check_paths(command: str) -> list[str]:
    """The paths a ``kschedctl check`` command reads: its PATHs, --config and --snapshot."""
    words = command.replace("\\\n", " ").split()
    words = words[words.index("check") + 1:]
    out, skip = [], False
    for i, w in enumerate(words):
        if w in ("|", "&&"):
            break
        if skip:
            skip = False
            continue
        if w in ("--config", "-c", "--snapshot", "-s"):
            out.append(words[i + 1])
        if w.startswith("-"):
            skip = w in ("--config", "-c", "--snapshot", "-s", "--junit", "-o", "--output")
            continue
        out.append(w)
    return out


def files_under(repo: Path, paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        target = repo / p
        found = [target] if target.is_file() else [f for f in target.rglob("*") if f.is_file()]
        assert found, p
        out += [str(f.relative_to(repo)) for f in found]
    return out


def triggered(globs: list[str], path: str) -> bool:
    return any(fnmatch.fnmatch(path, g.replace("**/*", "*").replace("**", "*")) for g in globs)


def workflow(name: str) -> dict[str, Any]:
    data = yaml.safe_load(yaml_files()[name])
    data["on"] = data.pop("on", None) or data.pop(True)  # YAML 1.1 reads the key on as true
    return dict(data)


def steps(data: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """(install steps, check steps, the upload step) of the workflow's one job."""
    [job] = data["jobs"].values()
    install = [s for s in job["steps"] if "pip install" in s.get("run", "")]
    checks = [s for s in job["steps"] if "kschedctl check" in s.get("run", "")]
    [upload] = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert {str(s["uses"]).split("@")[0] for s in job["steps"] if "uses" in s} == {
        "actions/checkout", "actions/setup-python", "actions/upload-artifact"}
    return install, checks, upload


def assert_installs_this_version(scripts: list[str]) -> None:
    assert [s.strip() for s in scripts] == [INSTALL]


def github_archive(dest: Path, ref: str) -> Path:
    """This repository's committed tree as GitHub serves ``archive/REF.tar.gz``: one top directory."""
    out = dest / f"{ref}.tar.gz"
    subprocess.run(["git", "archive", "--format=tar.gz", f"--prefix=kschedctl-{ref}/", "-o", str(out), "HEAD"],
                   cwd=ROOT, check=True, timeout=TIMEOUT)
    return out


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git clone")
def test_the_install_lines_run_as_written(tmp_path: Path) -> None:
    """The documented requirements (kschedctl, and an out-of-tree plugin for pre-commit) resolve to this
    version once OWNER/REF name a real archive: pip builds each and would install it."""
    archive = github_archive(tmp_path, "0123abc").as_uri()
    [snippet] = unlabeled_yaml()
    [plugin] = snippet[0]["additional_dependencies"]
    base = "https://github.com/OWNER/kschedctl/archive/REF.tar.gz"
    assert INSTALL.endswith(f'"kschedctl @ {base}"') and base in plugin
    requirements = [INSTALL.split('"')[1].replace(base, archive), plugin.replace(base, archive)]
    report = tmp_path / "report.json"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-build-isolation", "--no-index",
                        "--report", str(report), "-q", *requirements], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout + r.stderr
    installed = {i["metadata"]["name"]: i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}
    assert installed == {"kschedctl": __version__, "kschedctl-gpu-binpack": "0.1.0"}


def test_every_job_has_a_timeout() -> None:
    for name in (".github/workflows/kschedctl.yml", ".github/workflows/kschedctl-live.yml"):
        [job] = workflow(name)["jobs"].values()
        assert 0 < job["timeout-minutes"] <= 30, name
    [job] = yaml.safe_load(yaml_files()[".gitlab-ci.yml"]).values()
    assert job["timeout"] == "15 minutes"


# --------------------------------------------------------------------------- the page itself


def test_every_yaml_block_parses_and_is_a_shipped_file() -> None:
    files = yaml_files()
    assert set(files) == {
        "scheduling-tests/web-fits/expected.yaml", ".github/workflows/kschedctl.yml", ".github/workflows/kschedctl-live.yml",
        ".gitlab-ci.yml", ".pre-commit-config.yaml",
    }
    for name, text in files.items():
        yaml.safe_load(text)
        assert (REPO / name).read_text() == text, f"examples/ci/{name} is not the page's block"


def test_the_pages_commands_pass_then_update_restores_a_broken_expectation(repo: Path) -> None:
    first, check, update = shell_commands()
    assert first + " --junit kschedctl-report.xml" == check
    assert "--update" in update and "--update" not in check
    r = subprocess.run(["bash", "-c", check], cwd=repo, env=env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.rstrip().splitlines()[-1] == "4 passed, 0 failed"
    validate((repo / junit_of(check)).read_bytes())
    expected = repo / "scheduling-tests" / "web-fits" / "expected.yaml"
    original = expected.read_text()
    expected.write_text(original.replace("[ip-10-0-7-32.ec2.internal]", "[ip-10-0-1-14.ec2.internal]"))
    r = subprocess.run(["bash", "-c", update], cwd=repo, env=env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert expected.read_text() == original  # comments and layout included
    assert "-  candidates: [ip-10-0-1-14.ec2.internal]   # MostAllocated" in r.stdout
    assert r.stdout.rstrip().splitlines()[-1] == "3 passed, 0 failed, 1 updated"


# --------------------------------------------------------------------------- GitHub Actions


def test_github_pull_request_workflow_structure(repo: Path) -> None:
    data = workflow(".github/workflows/kschedctl.yml")
    globs = data["on"]["pull_request"]["paths"]
    install, [check], upload = steps(data)
    assert_installs_this_version([s["run"] for s in install])
    for f in files_under(repo, check_paths(check["run"])):
        assert triggered(globs, f), f"a change to {f} does not run the workflow"
    assert not triggered(globs, "README.md")
    assert upload["if"] == "always()" and upload["with"]["path"] == junit_of(check["run"])


def test_github_pull_request_workflow_passes_then_catches_a_configuration_change(repo: Path, tmp_path: Path) -> None:
    _, [check], _ = steps(workflow(".github/workflows/kschedctl.yml"))
    summary = tmp_path / "summary.md"
    r = run_step(check, repo, GITHUB_STEP_SUMMARY=str(summary))
    assert r.returncode == 0, r.stdout + r.stderr
    report = repo / junit_of(check["run"])
    assert validate(report.read_bytes()).find("testsuite").get("failures") == "0"  # type: ignore[union-attr]
    assert summary.read_text().rstrip().splitlines()[-1] == "4 passed, 0 failed"
    assert "| web-fits " in summary.read_text()

    pull_request_changes_the_configuration(repo)
    r = run_step(check, repo, GITHUB_STEP_SUMMARY=str(summary))
    assert r.returncode == 1, r.stdout + r.stderr  # the job fails
    suite = validate(report.read_bytes()).find("testsuite")
    assert suite is not None
    failed = {c.get("name"): c.findtext("failure") for c in suite.findall("testcase") if c.find("failure") is not None}
    assert failed == {
        "gpu-pool-keeps-web-off": 'selected.candidates: expected ["general-0"], got ["general-1"]',
        "web-fits": 'selected.candidates: expected ["ip-10-0-7-32.ec2.internal"], got ["ip-10-0-6-29.ec2.internal"]',
    }
    assert summary.read_text().rstrip().splitlines()[-1] == "2 passed, 2 failed"


def test_github_nightly_workflow_against_the_live_cluster(repo: Path, tmp_path: Path, server: RecordedAPIServer) -> None:
    data = workflow(".github/workflows/kschedctl-live.yml")
    assert "schedule" in data["on"] and "pull_request" not in data["on"]  # no secrets for pull requests from forks
    install, [check], upload = steps(data)
    assert_installs_this_version([s["run"] for s in install])
    assert "--snapshot" not in check["run"]
    assert upload["if"] == "always()" and upload["with"]["path"] == junit_of(check["run"])
    kubeconfig = server.kubeconfig(tmp_path / "kubeconfig").read_text()
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    seen = len(server.seen)
    r = run_step(check, repo, {"KSCHEDCTL_KUBECONFIG": kubeconfig},
                 RUNNER_TEMP=str(runner_temp), GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.rstrip().splitlines()[-1] == "4 passed, 0 failed"
    validate((repo / junit_of(check["run"])).read_bytes())
    requests = server.seen[seen:]
    assert requests and {s.method for s in requests} == {"GET"}
    assert sum(s.path == "/api/v1/nodes" for s in requests) == 1  # read once for the three scenarios without cluster.yaml


# --------------------------------------------------------------------------- GitLab CI


def test_gitlab_job_structure_and_run(repo: Path) -> None:
    [(name, job)] = yaml.safe_load(yaml_files()[".gitlab-ci.yml"]).items()
    [rule] = job["rules"]
    assert rule["if"] == '$CI_PIPELINE_SOURCE == "merge_request_event"'
    install = [line for line in job["script"] if "pip install" in line]
    assert_installs_this_version(install)
    [check] = [line for line in job["script"] if line.startswith("kschedctl check")]
    for f in files_under(repo, check_paths(check)):
        assert triggered(rule["changes"], f), f"a change to {f} does not run {name}"
    assert job["artifacts"]["when"] == "always" and job["artifacts"]["reports"]["junit"] == junit_of(check)
    for line in job["script"]:
        if line in install:
            continue
        r = subprocess.run(["sh", "-c", line], cwd=repo, env=env(), capture_output=True, text=True, timeout=TIMEOUT)
        assert r.returncode == 0, r.stdout + r.stderr
    validate((repo / job["artifacts"]["reports"]["junit"]).read_bytes())
    pull_request_changes_the_configuration(repo)
    r = subprocess.run(["sh", "-c", check], cwd=repo, env=env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 1
    assert "FAIL web-fits (scheduling-tests/web-fits): 1 difference" in r.stdout


# --------------------------------------------------------------------------- the README's excerpt


def section(path: Path, heading: str) -> str:
    """The text of ``path`` from ``heading`` up to the next level-2 heading."""
    text = path.read_text()
    start = text.index(heading)
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_readme_excerpt_is_the_real_output(repo: Path) -> None:
    """The README's ``kschedctl check`` example is what the command prints in ``examples/ci`` (here a copy,
    since ``--update`` writes) with the pull request's configuration, and the ``--update`` diff of
    docs/check.md is what ``--update`` then prints."""
    readme = section(ROOT / "README.md", "## `kschedctl check`")
    [shown] = [b for lang, b in ((m.group(1), m.group(2)) for m in FENCE.finditer(readme)) if not lang]
    cd, command, *rest = shown.splitlines()
    printed = rest[: rest.index("$ echo $?")]
    assert cd == "$ cd examples/ci" and command.startswith("$ kschedctl check ") and rest[-1] == "1"
    assert "--config pull-request/scheduler-config.yaml" in command
    r = subprocess.run(["bash", "-c", command[2:]], cwd=repo, env=env(COLUMNS="100"), capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 1
    assert r.stdout.splitlines() == printed
    reference = section(ROOT / "docs" / "check.md", "## A failing change, and `--update`")
    assert command[2:] in reference.replace("\n", " ")
    [diff] = [m.group(2) for m in FENCE.finditer(reference) if m.group(1) == "diff"]
    r = subprocess.run(["bash", "-c", command[2:] + " --update"], cwd=repo, env=env(COLUMNS="100"), capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert r.returncode == 0 and diff in r.stdout
    assert r.stdout.rstrip().splitlines()[-1] == "2 passed, 0 failed, 2 updated"
