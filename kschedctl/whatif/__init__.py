"""What-if analyses built on the scheduling core: the same cycle under two configurations
(``diff``), and a sequence of cycles whose placements build on each other (``simulate``).

Like ``explain``, these modules take a Cluster and configurations and return plain result
objects with ``to_dict()``; reading files and rendering happen in ``cli`` and ``render``.
``workloads`` turns pod and workload manifests into the pods their controllers would create.
"""
