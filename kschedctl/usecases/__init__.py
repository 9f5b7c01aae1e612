"""The use cases: what each command of kschedctl does, below the command line and above the analyses.

One module per command (``explain_pod``, ``explain_pending``, ``diff_profiles``, ``diff_versions``,
``simulate``, ``drain``, ``check``; a new command such as a scale-up gets its own), each with its
request type and one entry point that takes the request and returns a plain result; ``request``
holds the base types every request shares (``Request``, ``ClusterRequest``) and ``Hooks``, the
notes and progress a run reports through; ``comparison`` what the two diff commands share.

The floors, bottom to top: kube < apivalidation < snapshot < framework < config < plugins < the
analyses (``explain/``, ``whatif/``, ``check/``) < usecases < render < cli. A use case picks the
pods, runs the analyses, adds what its command asked for on top (margins, remedies, cause groups,
repeated runs) and hands the result back; it never shows it (``render/``) nor reads options
(``cli/``), which ``tests/test_layering.py`` enforces. Each CLI command parses its options into a
request, calls one entry point and renders what comes back.
"""
