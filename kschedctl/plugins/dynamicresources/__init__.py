"""The DynamicResources plugin package: the plugin (``plugin``), the structured-parameters device
allocator its Filter runs (``allocator``) and the resource.k8s.io objects both read (``api``).

Upstream model: ``pkg/scheduler/framework/plugins/dynamicresources``.
"""
