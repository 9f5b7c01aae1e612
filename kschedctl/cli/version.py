"""``kschedctl version``: kschedctl's version, the kube-scheduler version it models by default (also
``--version``) and every version ``--kube-version`` can choose."""

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
    """Print kschedctl's version, the kube-scheduler version it models by default and those --kube-version chooses."""
    from kschedctl.kube.versions import RELEASES
    from kschedctl.render.data import emit

    data = {"kschedctl": __version__, "kubeScheduler": K8S_VERSION, "supportedVersions": list(RELEASES.values())}

    def text(_d: object) -> None:
        print(version_line())
        print("supported (--kube-version): " + ", ".join(RELEASES.values()))

    emit(data, output.value, table=text)
