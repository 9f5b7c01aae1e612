"""The recorded API answers of tests/recordings/ read without a server.

The live-cluster tests compare what kschedctl reads from the recorded API server
(``tests.apiserver``) with what these files hold when read directly: the same
Cluster, built through the package's own ``Fetched`` and loader, must come out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kschedctl.errors import InputError
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.source import RESOURCES, Fetched, Warn, list_items
from tests.apiserver import recording_name


class RecordingsSource:
    """Answers recorded from a real API server (tests/recordings/ layout), read without a server.

    Each list is read from the file recorded for ``GET <list path>?limit=500``; a resource
    without a file is treated as not served by that server.
    """

    def __init__(self, directory: str | Path, *, redacted: bool = True) -> None:
        self.directory = Path(directory)
        self.redacted = redacted

    def fetch(self) -> Fetched:
        fetched = Fetched(str(self.directory))
        if not self.directory.is_dir():
            raise InputError("no such directory", source=str(self.directory))
        fetched.server_version = self.server_version()
        for res in RESOURCES:
            f = self.directory / recording_name(res.list_path())
            if not f.is_file():
                fetched.not_served(res)
                continue
            fetched.lists.append((res, list_items(res, _read(f), redacted=self.redacted)))
        return fetched

    def server_version(self) -> str | None:
        version = self.directory / "version.json"
        return str(_read(version).get("gitVersion") or "") or None if version.is_file() else None

    def load(self, *, warn: Warn | None = None, features: Features = DEFAULT_FEATURES) -> Cluster:
        return self.fetch().to_cluster(warn, features)


def _read(f: Path) -> dict[str, Any]:
    try:
        data = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"cannot read recorded answer: {e}", source=str(f)) from None
    if not isinstance(data, dict):
        raise InputError("a recorded answer must be a JSON object", source=str(f))
    return data


def kind_counts(cluster: Cluster) -> dict[str, int]:
    """How many objects of each kind the cluster holds (Node and Pod always; other kinds when any)."""
    out = {"Node": len(cluster.nodes), "Pod": len(cluster.pods)}
    for kind, objects in cluster.objects.items():
        if objects:
            out[kind] = len(objects)
    return out
