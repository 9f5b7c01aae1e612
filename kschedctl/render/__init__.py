"""Presentation of traces and check results: rich tables, JSON/YAML, markdown.

Renderers only read plain result objects (``Trace.to_dict()``, check results);
they never touch a snapshot or a plugin.
"""

from __future__ import annotations
