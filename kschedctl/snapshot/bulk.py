"""Building a large model without the cyclic garbage collector in the way.

Loading a 50,000-pod snapshot creates millions of dicts, lists and model objects that
live as long as the command. CPython's collector is triggered by allocation counts, so
while they are created it runs again and again, and every full collection walks the
whole growing heap: on such a snapshot that is more than half of an explain's time.
None of those objects is garbage, so the collector is paused while they are built;
when the build made many objects they are then frozen (``gc.freeze``), which moves
everything alive into a generation later collections do not walk. Small builds (tests,
demo snapshots) are left to the collector as before.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Net new tracked objects above which a build is frozen once done.
FREEZE_ABOVE = 50_000
#: Documents above which a build is frozen whatever the net count says (a build that frees the
#: documents as it goes can make millions of objects and still end with a net count near zero).
FREEZE_DOCUMENTS = 20_000


@contextmanager
def bulk_build(*, freeze: bool = False) -> Iterator[None]:
    """Pause the cyclic collector for the block; freeze what it built when that is a lot (``freeze``:
    in any case)."""
    was_enabled = gc.isenabled()
    before = gc.get_count()[0]
    gc.disable()
    try:
        yield
    finally:
        made = gc.get_count()[0] - before
        if was_enabled:
            gc.enable()
            if freeze or made > FREEZE_ABOVE:
                gc.freeze()
