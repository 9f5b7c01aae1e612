"""An example out-of-tree kschedctl plugin, GPUBinPack; the plugin itself is in ``.plugin``."""
