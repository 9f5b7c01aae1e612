"""The old home of the command line, kept as an alias: ``kschedctl.cli.app:main`` is the console-script
entry point of installs made before it moved to ``kschedctl.cli.main:main``. New code imports
``kschedctl.cli.main`` (the assembled app) or ``kschedctl.cli.common`` (what commands share)."""

from kschedctl.cli.main import app, main

__all__ = ["app", "main"]
