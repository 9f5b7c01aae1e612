"""What-if analyses built on the scheduling core: the same cycle under two configurations
(``diff``), and a sequence of cycles whose placements build on each other (``simulate``).

Like ``explain``, these modules take a Cluster and configurations and return plain result
objects with ``to_dict()``; reading files and rendering happen in ``cli`` and ``render``.
``workloads`` turns pod and workload manifests into the pods their controllers would create.
"""

#: The most new nodes of one template a scale-up least-count search tries unless told otherwise
#: (``simulate --add-nodes T=auto``, ``explain --scale-up``; ``--max-new-nodes``). Here, not in
#: ``whatif.scaleup``, so that the command line can name it without importing the scheduling core.
DEFAULT_MAX_NEW_NODES = 100
