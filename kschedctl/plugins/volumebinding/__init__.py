"""The VolumeBinding plugin package: the plugin (``plugin``), its volume binder (``binder``), and the
storage helpers (PVC/PV/StorageClass semantics, CSI translation) the other volume plugins share.

Upstream model: ``pkg/scheduler/framework/plugins/volumebinding``.
"""
