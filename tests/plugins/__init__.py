"""Unit tests of the in-tree plugins, one module per plugin."""
