"""The VolumeBinding plugin package: the plugin, its volume binder, and the storage helpers
(PVC/PV/StorageClass semantics, CSI translation) the other volume plugins share."""

from kschedctl.plugins.volumebinding.plugin import NAME, VolumeBinding, new

__all__ = ["NAME", "VolumeBinding", "new"]
