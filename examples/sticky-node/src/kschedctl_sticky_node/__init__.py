"""An example out-of-tree kschedctl plugin, StickyNode; the plugin itself is in ``.plugin``."""
