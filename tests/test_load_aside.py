"""A big load's second core: its documents validated by a forked process beside the build, the cache
entries written by one while the command goes on (``loader._CheckedAside``, ``forked.run_in_background``).

Whether the fork is used (forced here, ``forked.pays``: whatever the machine's load and the threads
other tests left running) must not change anything but the time: the
same Cluster, notes and warnings, and the same first error in the documents' order, whether validation
or the build finds it; no process is left behind, whatever the way out; the next load finds the cache.
``forked.MANY`` is 0 here, so that a small snapshot is handed over as a big one would be.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kschedctl.cli.main import app
from kschedctl.snapshot import cache, forked, loader, modelcache
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.loader import file_keys, load_cluster, read_documents
from kschedctl.snapshot.model import Pod
from tests.conftest import cache_every_text
from tests.test_forked import reaped
from tests.test_modelcache import described

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only")

CONFORMANCE = Path(__file__).parent / "conformance"
#: A sample of the corpus's clusters (refused ones too: their error is compared).
SCENARIOS = sorted(d for d in CONFORMANCE.iterdir() if (d / "cluster.yaml").is_file())[::23]


@pytest.fixture(autouse=True)
def small_is_many(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked, "MANY", 0)
    cache_every_text(tmp_path, monkeypatch)


@pytest.fixture
def asides(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many documents each check beside a build was handed."""
    handed: list[int] = []
    checked_aside = loader._CheckedAside

    def counted(docs: list[loader.Document], features: Any) -> loader._CheckedAside:
        handed.append(len(docs))
        return checked_aside(docs, features)

    monkeypatch.setattr(loader, "_CheckedAside", counted)
    return handed


_dirs = itertools.count()


def outcome(load: Callable[[Callable[[str], None]], Cluster]) -> tuple[Any, list[str]]:
    """The Cluster (``described``) or the error ``load(warn)`` gives, and its warnings; every command's end
    (``settle``) included."""
    warnings: list[str] = []
    try:
        return described(load(warnings.append)), warnings
    except Exception as e:
        return (type(e).__name__, str(e)), warnings
    finally:
        forked.settle()


def load(path: Path, fork: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Any, list[str]]:
    """``outcome`` of a load of ``path`` read first (as ``FileSource`` does it), in a cache of its own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / f"xdg-{next(_dirs)}"))
    monkeypatch.setattr(forked, "pays", lambda since=None: fork)
    return outcome(lambda warn: load_cluster([str(path)], warn=warn, read=read_documents([str(path)])))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[d.name for d in SCENARIOS])
def test_the_same_cluster_or_error_both_ways(
    scenario: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    here = load(scenario / "cluster.yaml", False, monkeypatch, tmp_path)
    assert not forks
    assert load(scenario / "cluster.yaml", True, monkeypatch, tmp_path) == here
    assert forks  # (the check beside the build, the cache writes)


NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n"


def node(name: str) -> str:
    return f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus: {{allocatable: {{cpu: '4', pods: '110'}}}}\n"


def pod(name: str, labels: str = "{app: web}") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: shop, labels: {labels}}}\n"
        "spec: {containers: [{name: c, image: nginx}]}\n"
    )


INVALID = pod("Not_A_Name")  # refused by validation: not a DNS subdomain


def snapshot(tmp_path: Path, *docs: str) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text("---\n".join(docs))
    return path


@pytest.mark.parametrize(
    ("docs", "expected"),
    [
        # a build error (a second Node of one name in one file) before a validation error, and after one
        ((NAMESPACE, node("a"), node("a"), INVALID, node("b")), 'document 3: Node a: nodes "a" already exists'),
        ((NAMESPACE, INVALID, node("a"), node("a")), "document 2: Pod shop/Not_A_Name: metadata.name: Invalid value"),
        # the validation error of the very document whose build fails
        ((NAMESPACE, node("a"), INVALID, INVALID), "document 3: Pod shop/Not_A_Name"),
        ((NAMESPACE, node("a"), node("b"), pod("web"), pod("web")), 'document 5: Pod shop/web: pods "web" already exists'),
    ],
)
def test_the_first_error_in_document_order_both_ways(
    docs: tuple[str, ...],
    expected: str,
    forks: list[int],
    asides: list[int],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    path = snapshot(tmp_path, *docs)
    here = load(path, False, monkeypatch, tmp_path)
    assert here[0][0] == "InputError" and expected in here[0][1]
    assert not asides
    assert load(path, True, monkeypatch, tmp_path) == here
    assert asides == [len(docs)]


@pytest.mark.parametrize("boom_is_valid", [True, False])
def test_a_build_that_fails_otherwise_than_validation(
    boom_is_valid: bool, forks: list[int], asides: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An object validation refuses may make the build raise anything: validation's error comes first for it."""
    from_raw = Pod.from_raw

    def boom(raw: dict[str, Any]) -> Pod:
        if raw["metadata"]["name"] == "boom":
            raise RuntimeError("the build fell over")
        return from_raw(raw)

    monkeypatch.setattr(Pod, "from_raw", staticmethod(boom))
    boom_pod = pod("boom") if boom_is_valid else pod("boom", "{'bad key!': x}")
    path = snapshot(tmp_path, NAMESPACE, node("a"), boom_pod, INVALID)
    here = load(path, False, monkeypatch, tmp_path)
    if boom_is_valid:
        assert here[0] == ("RuntimeError", "the build fell over")
    else:
        assert here[0][0] == "InputError" and "document 3: Pod shop/boom: metadata.labels" in here[0][1]
    assert load(path, True, monkeypatch, tmp_path) == here
    assert asides == [4]


def test_a_checking_process_that_dies_leaves_the_load_to_this_one(
    forks: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = snapshot(tmp_path, NAMESPACE, node("a"), pod("web"), INVALID)
    here = load(path, False, monkeypatch, tmp_path)
    monkeypatch.setattr(loader, "_first_invalid", lambda docs, features: os.kill(os.getpid(), signal.SIGKILL))
    assert load(path, True, monkeypatch, tmp_path) == here
    path.write_text("---\n".join((NAMESPACE, node("a"), pod("web"))))
    here = load(path, False, monkeypatch, tmp_path)
    assert load(path, True, monkeypatch, tmp_path) == here and isinstance(here[0], dict)  # (a Cluster)


def test_ctrl_c_during_the_build_stops_the_checking_process(
    forks: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = snapshot(tmp_path, NAMESPACE, node("a"), node("b"), pod("web"))
    model_of = loader._model_of
    built = itertools.count()

    def interrupted(doc: loader.Document) -> Any:
        if next(built) == 2:
            raise KeyboardInterrupt
        return model_of(doc)

    monkeypatch.setattr(loader, "_model_of", interrupted)
    monkeypatch.setattr(forked, "pays", lambda since=None: True)
    with pytest.raises(KeyboardInterrupt):
        load_cluster([str(path)], read=read_documents([str(path)]))
    forked.settle(stop=True)  # (what a command does on Ctrl-C: the document cache's writer, if any)
    assert forks


def test_the_next_load_finds_what_the_background_wrote(
    forks: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = snapshot(tmp_path, NAMESPACE, node("a"), node("b"), pod("web"), pod("db"))
    monkeypatch.setattr(forked, "pays", lambda since=None: True)
    first = described(load_cluster([str(path)], read=read_documents([str(path)])))
    writers = list(forked.background)
    assert len(writers) == 2  # the documents' entry, the Cluster's
    assert not any(reaped(w.pid) for w in writers)  # (still to be waited for: the next read does)

    def no_documents(*args: object, **kwargs: object) -> None:
        raise AssertionError("documents read although the cache holds the Cluster")

    files = file_keys([str(path)])
    assert files is not None and cache.read(files[0][1]) is not None  # the documents' entry
    monkeypatch.setattr(loader, "iter_documents", no_documents)
    assert described(load_cluster([str(path)])) == first
    assert modelcache.read_cluster(files, loader.DEFAULT_FEATURES, None) is not None


runner = CliRunner()


@pytest.mark.parametrize("fork", [False, True])
def test_commands_wait_for_their_writers(
    fork: bool, forks: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(forked, "pays", lambda since=None: fork)
    scenario = CONFORMANCE / "dev-003-pod-overhead"
    args = ["explain", "pod", "-f", str(scenario / "pod.yaml"), "--snapshot", str(scenario / "cluster.yaml"), "-o", "json"]
    cold = runner.invoke(app, args)
    assert cold.exit_code in (0, 1), cold.output
    assert not forked.background  # every writer waited for by the command
    assert bool(forks) == fork
    models = list((tmp_path / "xdg" / "kschedctl" / "snapshots").glob("*.model"))
    assert len(models) == 1
    warm = runner.invoke(app, args)
    assert (warm.exit_code, warm.output) == (cold.exit_code, cold.output)
    bad = snapshot(tmp_path, NAMESPACE, node("a"), INVALID)
    refused = runner.invoke(app, ["explain", "pod", "-f", str(scenario / "pod.yaml"), "--snapshot", str(bad)])
    assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1, refused.output
    assert "Not_A_Name" in refused.output and not forked.background
