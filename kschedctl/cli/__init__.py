"""The command line: thin typer commands, option parsing and exit codes.

Imports run one way: ``main`` (the entry point) imports the command modules (``explain``,
``snapshot``, ``check``, ``plugins``, ``diff``, ``simulate``, ``version``) and registers their
functions on the app; they import ``common`` (app objects, exit codes, stderr, the debug flag),
``options`` (shared options; ``drain_opts``, ``plugin_opts``), ``sources`` (reading the cluster),
never one another, and each run calls one entry point below the CLI (its use case,
``kschedctl.usecases``). ``app`` is an alias of ``main`` for old installs.
"""
