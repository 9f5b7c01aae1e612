"""The JSON encoder of the snapshot files ``kschedctl snapshot`` writes.

The lists of a 5,000-node cluster are about 100 MB of JSON; encoding the snapshot's objects again
was a quarter of a ``kschedctl snapshot``'s work with the standard library's ``json``. ``orjson``
(a compiled, widely used and well-kept codec, with wheels for every platform kschedctl runs on)
writes the same objects in a quarter of the time, as compact JSON (no space after ``:`` and
``,``), which YAML's flow style reads the same. What it cannot write (an integer beyond 64 bits, a
lone surrogate) the writer leaves to ``json``. The answers are still decoded by ``json``: orjson
decodes a third faster, but builds the whole document in its own form first, which costs a
page's size several times over in memory.
"""

from __future__ import annotations

from typing import Any

import orjson


def dumps(obj: Any) -> bytes | None:
    """``obj`` as compact JSON in UTF-8; None when orjson cannot write it."""
    try:
        return orjson.dumps(obj)
    except TypeError:
        return None
