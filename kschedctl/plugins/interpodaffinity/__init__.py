"""The InterPodAffinity plugin package: the plugin (``plugin``), its hard rules (``filtering``), its
soft ones (``scoring``) and the counts taken from the snapshot's indexes (``indexed``).

Upstream model: ``pkg/scheduler/framework/plugins/interpodaffinity``.
"""
