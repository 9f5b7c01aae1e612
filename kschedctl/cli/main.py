"""The command line as a whole: every command module's commands registered on the app, and ``main``.

The one module that imports the command modules; none of them imports it back (nor does
anything else but the entry points: the ``kschedctl`` console scripts, ``python -m kschedctl``
and ``kubectl_complete-kschedctl``). Commands are listed in ``--help`` in the order
registered here; ``explain``'s subcommands under it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from typing import NoReturn

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

__all__ = ["app", "main", "run"]


def main() -> None:
    """The command line: the command ``sys.argv`` names, run; ``SystemExit`` with its exit status."""
    from kschedctl.cli.streams import guard_pipes

    guard_pipes()
    app(prog_name=prog_name())


def run() -> NoReturn:
    """The installed commands' entry point (and ``python -m kschedctl``): ``main``, then the process ends as
    an exit does (the ``atexit`` handlers, the streams flushed) but without freeing its objects one by one,
    which after a big cluster's explain takes longer than anything the user still waits for (a tenth of a
    second at 5,000 nodes), and without waiting for the snapshot cache's write of what it loaded, which
    finishes on its own (``forked.let_go``). ``main`` itself returns, for callers that go on after it."""
    from kschedctl.snapshot import forked

    forked.let_go()  # (a cache write still under way finishes after the answer)
    try:
        main()
        code = 0
    except SystemExit as e:
        code = _status(e.code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # (a reader gone, a stream closed: nothing more to say)
            stream.flush()
    os._exit(code)


def _status(code: object) -> int:
    """The exit status ``SystemExit(code)`` ends a process with (a message is printed, as Python does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
