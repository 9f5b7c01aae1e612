"""The snapshot cache: keyed by content, in the user's cache directory, never stale, never trusted blindly."""

from __future__ import annotations

from pathlib import Path

import pytest

from kschedctl.errors import InputError
from kschedctl.snapshot import cache, loader, modelcache, yamldocs
from kschedctl.snapshot.loader import load_cluster

NODES = "".join(
    f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: {{zone: z{i % 3}}}}}\n"
    f"status: {{allocatable: {{cpu: '{i % 7 + 1}', memory: 4Gi, pods: '110'}}}}\n"
    for i in range(30)
)


@pytest.fixture
def snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(cache, "MIN_SIZE", 100)  # cache this small file too
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(modelcache, "_code_digest", lambda: "")  # the documents' layer alone (the Cluster's: below)
    f = tmp_path / "snap" / "cluster.yaml"
    f.parent.mkdir()
    f.write_text(NODES)
    return f


def entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "xdg" / "kschedctl" / "snapshots").glob("*.marshal"))


def forbid_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    class Fail:
        def __init__(self, text: str) -> None:
            raise AssertionError("parsed although the cache holds this text")

    monkeypatch.setattr(yamldocs, "FastLoader", Fail)


def names_and_cpu(path: Path) -> list[tuple[str, int]]:
    return [(n.name, int(n.allocatable["cpu"])) for n in load_cluster([str(path)]).nodes]


def test_second_load_comes_from_the_cache_in_the_users_cache_dir(
    snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = names_and_cpu(snapshot)
    assert len(entries(tmp_path)) == 1
    assert sorted(p.name for p in snapshot.parent.iterdir()) == ["cluster.yaml"]  # nothing next to the file
    forbid_parsing(monkeypatch)
    assert names_and_cpu(snapshot) == first


def test_an_edited_file_is_parsed_again(snapshot: Path, tmp_path: Path) -> None:
    names_and_cpu(snapshot)
    snapshot.write_text(NODES.replace("cpu: '1'", "cpu: '9'"))
    assert ("n0", 9) in names_and_cpu(snapshot)
    assert len(entries(tmp_path)) == 2


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],  # truncated
        lambda b: b[:-1] + bytes([b[-1] ^ 0xFF]),  # one byte changed
        lambda b: b"not a cache file at all",  # foreign
        lambda b: b"",
        lambda b: cache.MAGIC + b"\0" * 32 + b"\xff\xfe",  # right magic, wrong digest
    ],
)
def test_a_damaged_entry_falls_back_to_parsing(snapshot: Path, tmp_path: Path, damage: object) -> None:
    expected = names_and_cpu(snapshot)
    (entry,) = entries(tmp_path)
    entry.write_bytes(damage(entry.read_bytes()))  # type: ignore[operator]
    assert names_and_cpu(snapshot) == expected
    assert cache.read(cache.key_of(NODES)) is not None  # and the entry was rewritten


def test_a_valid_entry_of_another_shape_is_ignored(snapshot: Path, tmp_path: Path) -> None:
    import hashlib
    import marshal

    expected = names_and_cpu(snapshot)
    (entry,) = entries(tmp_path)
    payload = marshal.dumps({"not": "a list"})
    entry.write_bytes(cache.MAGIC + hashlib.sha256(payload).digest() + payload)
    assert names_and_cpu(snapshot) == expected


def test_disabled_by_environment(snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KSCHEDCTL_NO_CACHE", "1")
    names_and_cpu(snapshot)
    assert entries(tmp_path) == []


def test_small_files_are_not_cached(snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "MIN_SIZE", len(NODES) + 1)
    names_and_cpu(snapshot)
    assert entries(tmp_path) == []


def test_old_entries_are_pruned(snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "MAX_ENTRIES", 2)
    for i in range(4):
        snapshot.write_text(NODES + f"# version {i}\n")
        names_and_cpu(snapshot)
    assert len(entries(tmp_path)) == 2


def test_unwritable_cache_dir_is_not_an_error(snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert len(names_and_cpu(snapshot)) == 30


def test_a_file_that_fails_to_load_is_not_cached(snapshot: Path, tmp_path: Path) -> None:
    snapshot.write_text(NODES + "---\nkind: Node\nmetadata: {name: dup, name: again}\n")
    for _ in range(2):
        with pytest.raises(InputError, match='key "name" already set in map'):
            load_cluster([str(snapshot)])
    assert entries(tmp_path) == []


# --------------------------------------------------------------------------- the validation verdict


def verdicts(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "xdg" / "kschedctl" / "snapshots").glob("*.valid"))


def count_validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from kschedctl.snapshot import loader

    seen: list[str] = []
    real = loader.validate_object

    def spy(kind: str, raw: dict[str, object], *, minor: int) -> list[object]:
        seen.append(kind)
        return real(kind, raw, minor=minor)

    monkeypatch.setattr(loader, "validate_object", spy)
    return seen


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_a_validated_text_is_not_validated_again(
    snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    if suffix == "json":
        import json

        import yaml

        doc = {"apiVersion": "v1", "kind": "List", "items": list(yaml.safe_load_all(NODES))}
        snapshot = snapshot.with_suffix(".json")
        snapshot.write_text(json.dumps(doc))
    seen = count_validations(monkeypatch)
    first = names_and_cpu(snapshot)
    assert len(seen) == 30 and len(verdicts(tmp_path)) == 1
    assert names_and_cpu(snapshot) == first
    assert len(seen) == 30  # the second load checked nothing
    snapshot.write_text(snapshot.read_text().replace("n29", "n-29"))  # another text: checked again
    names_and_cpu(snapshot)
    assert len(seen) == 60 and len(verdicts(tmp_path)) == 2


def test_a_text_with_a_bad_object_gets_no_verdict(snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot.write_text(NODES.replace("cpu: '3'", "cpu: '-3'"))
    for _ in range(2):
        with pytest.raises(InputError, match="must be greater than or equal to 0"):
            load_cluster([str(snapshot)])
    assert verdicts(tmp_path) == []


def test_the_verdict_belongs_to_the_validation_code(snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = count_validations(monkeypatch)
    names_and_cpu(snapshot)
    monkeypatch.setattr(cache, "_validation_variant", lambda: "other-rules")  # the rules changed
    names_and_cpu(snapshot)
    assert len(seen) == 60
    monkeypatch.setattr(cache, "_validation_variant", lambda: "")  # rules of unknown version: nothing kept
    names_and_cpu(snapshot)
    names_and_cpu(snapshot)
    assert len(seen) == 120


def test_no_verdict_without_the_cache(snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KSCHEDCTL_NO_CACHE", "1")
    seen = count_validations(monkeypatch)
    names_and_cpu(snapshot)
    names_and_cpu(snapshot)
    assert len(seen) == 60 and verdicts(tmp_path) == []


@pytest.mark.parametrize(
    "text, from_bytes",
    [
        ("apiVersion: v1\n" * (1 << 19), True),  # plain ASCII, big enough
        ("note: é 中 😀\n" * (1 << 19), True),  # characters of two to four bytes
        ("\ufeffkind: List\n" * (1 << 19), True),  # a byte-order mark is kept as read
        ("kind: List\r\n" * (1 << 19), False),  # reading turns CRLF into LF: the text's key differs
        ("kind: List\n" * 1000, False),  # too small to be sure
    ],
)
def test_a_files_key_from_its_bytes_is_its_texts(tmp_path: Path, text: str, from_bytes: bool) -> None:
    """``file_keys`` takes a big file's key from its bytes, without decoding it: always the key of the text a
    load reads (``key_of``), or no key from the bytes at all."""
    path = tmp_path / "f.yaml"
    path.write_bytes(text.encode("utf-8"))
    read = path.read_text(encoding="utf-8")
    from_file = cache.key_of_file(path.read_bytes())
    assert (from_file is not None) == from_bytes
    if from_file is not None:
        assert from_file == cache.key_of(read)
    assert loader.file_keys([str(path)]) == [(str(path), cache.key_of(read))]
