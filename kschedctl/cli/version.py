"""``kschedctl version``: kschedctl's version and the kube-scheduler version it models (also ``--version``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from kschedctl import K8S_VERSION, __version__
from kschedctl.cli.common import version_line


class VersionOutput(StrEnum):
    text = "text"
    json = "json"
    yaml = "yaml"


def version(
    output: Annotated[
        VersionOutput, typer.Option("--output", "-o", metavar="FORMAT", help="text, json or yaml.")
    ] = VersionOutput.text,
) -> None:
    """Print kschedctl's version and the kube-scheduler version it models."""
    from kschedctl.render.data import emit

    data = {"kschedctl": __version__, "kubeScheduler": K8S_VERSION}
    emit(data, output.value, table=lambda _d: print(version_line()))
