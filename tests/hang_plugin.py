"""Hang: a test plugin whose Filter never returns on the node its args name (``node``; every node when
absent), for tests/test_plugin_trust.py. ``seconds`` bounds the hang so that abandoned threads end;
``marker``: a file it creates as it starts to hang (a test then knows the call is running)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kschedctl.framework.status import Status

NAME = "Hang"


class Hang:
    name = NAME

    def __init__(self, args: dict[str, Any] | None) -> None:
        args = args or {}
        self.node: str | None = args.get("node")
        self.seconds: float = float(args.get("seconds", 3600))
        self.marker: str | None = args.get("marker")

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status:
        if self.node is None or node_info.name == self.node:
            if self.marker:
                Path(self.marker).touch()
            time.sleep(self.seconds)
        return Status()


def new(args: Any, handle: Any) -> Hang:
    return Hang(args)
