"""Test builders: ``make_pod("web").req(cpu="500m").toleration(...)`` instead of YAML walls.

They live in the public ``kschedctl.testing`` module, which plugin authors use too (so the
helpers kschedctl's own tests rely on are the ones documented in docs/plugin-api.md); this
module re-exports them under the names the tests import.
"""

from __future__ import annotations

from kschedctl.testing import (
    FakeHandle,
    NodeBuilder,
    PodBuilder,
    SnapshotHandle,
    cluster_from_yaml,
    load_config,
    make_cluster,
    make_node,
    make_object,
    make_pod,
    make_snapshot,
    node_info,
    registry,
    schedule,
)

__all__ = [
    "FakeHandle",
    "NodeBuilder",
    "PodBuilder",
    "SnapshotHandle",
    "cluster_from_yaml",
    "load_config",
    "make_cluster",
    "make_node",
    "make_object",
    "make_pod",
    "make_snapshot",
    "node_info",
    "registry",
    "schedule",
]
