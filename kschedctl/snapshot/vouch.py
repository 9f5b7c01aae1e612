"""A snapshot file that says its objects were validated: by the API server that stored them.

A live read is not validated again (``LiveSource.load``: the API server validated what it
stores), but a snapshot file of the same objects was, on its first load: at 5,000 nodes about a
third of the first explain of a new snapshot. So ``kschedctl snapshot`` (``writer``) writes in
its List's annotations the SHA-256 of the text after ``"items": [``, and the loader takes a file
whose text still has that digest as validated, as it takes one whose verdict the snapshot cache
holds. A file edited by hand (or by anything but kschedctl) no longer matches its digest and is
validated as any other; the digest is a check against edits, not a signature.
"""

from __future__ import annotations

import hashlib
import re

#: The List annotation holding the digest (a List's metadata is not sent to the server by kubectl apply).
ANNOTATION = "kschedctl.io/items-sha256"
#: Where the digest covers from: the end of this, after the annotation.
ITEMS = '"items": ['
#: What the writer puts in the header until the digest is known (as long as a digest).
PLACEHOLDER = "0" * 64
#: How far into the text the annotation and the items' start are looked for.
HEAD = 16 * 1024

_DIGEST = re.compile(rf'"{re.escape(ANNOTATION)}": ?"([0-9a-f]{{64}})"')


def digest(items: bytes | memoryview) -> str:
    return hashlib.sha256(items).hexdigest()


def vouched(text: str, data: bytes | None = None) -> bool:
    """Whether ``text`` (a whole file) is a snapshot whose items are as kschedctl wrote them (``data``: the
    text's UTF-8 bytes, when the caller has them)."""
    m = _DIGEST.search(text, 0, HEAD)
    if m is None:
        return False
    at = text.find(ITEMS, m.end(), HEAD)
    if at < 0:
        return False
    start = at + len(ITEMS)  # (the digest of the encoded text from there: no copy of the text's tail first)
    if data is None:
        data = text.encode("utf-8", "surrogatepass")
    return digest(memoryview(data)[len(text[:start].encode("utf-8", "surrogatepass")) :]) == m.group(1)
