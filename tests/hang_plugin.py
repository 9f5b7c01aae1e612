"""Hang: a test plugin whose Filter never returns on the node its args name (``node``; every node when
absent), for tests/test_plugin_trust.py. The hang never ends, so no test races it against a clock; the
watchdog runs plugin calls on daemon threads, so an abandoned hang does not keep the test process alive.
``marker``: a file it creates as it starts to hang (a test then knows the call is running)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from kschedctl.framework.status import Status

NAME = "Hang"


class Hang:
    name = NAME

    def __init__(self, args: dict[str, Any] | None) -> None:
        args = args or {}
        self.node: str | None = args.get("node")
        self.marker: str | None = args.get("marker")

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status:
        if self.node is None or node_info.name == self.node:
            if self.marker:
                Path(self.marker).touch()
            threading.Event().wait()  # never set
        return Status()


def new(args: Any, handle: Any) -> Hang:
    return Hang(args)
