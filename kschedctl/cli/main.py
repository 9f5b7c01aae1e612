"""The command line as a whole: every command module's commands registered on the app, and ``main``.

The one module that imports the command modules; none of them imports it back (nor does
anything else but the entry points: the ``kschedctl`` console scripts, ``python -m kschedctl``
and ``kubectl_complete-kschedctl``). Commands are listed in ``--help`` in the order
registered here; ``explain``'s subcommands under it.
"""

from __future__ import annotations

from kschedctl.cli import check, diff, explain, plugins, simulate, snapshot, version
from kschedctl.cli.common import app, explain_app, prog_name

app.command("version")(version.version)
app.command("check")(check.check)
app.command("snapshot")(snapshot.snapshot_cmd)
app.command("plugins")(plugins.plugins_cmd)
app.command("diff-profiles")(diff.diff_profiles_cmd)
app.command("diff-versions")(diff.diff_versions_cmd)
app.command("simulate")(simulate.simulate_cmd)
explain_app.command("pod")(explain.explain_pod_cmd)
explain_app.command("pending")(explain.explain_pending_cmd)

__all__ = ["app", "main"]


def main() -> None:
    from kschedctl.cli.streams import guard_pipes

    guard_pipes()
    app(prog_name=prog_name())
