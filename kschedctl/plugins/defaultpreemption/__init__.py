"""The DefaultPreemption plugin package: the plugin (``plugin``), the node-independent preemption
evaluator it drives (``evaluator``) and Go's unstable sort its victim order needs (``gosort``).

Upstream model: ``pkg/scheduler/framework/plugins/defaultpreemption`` and ``pkg/scheduler/framework/preemption``.
"""
