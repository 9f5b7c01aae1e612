"""The offload worker of ``kschedctl snapshot``: the list head read without decoding the items, and a
page done in the worker giving the lines the main process would write (or handed back when it cannot)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kschedctl.snapshot.offload import Offload, encode_page, list_head
from kschedctl.snapshot.source import POD, Encoded, list_items
from kschedctl.snapshot.writer import encode_items
from tests.apiserver import RECORDINGS

PAGE1 = (RECORDINGS / "api_v1_pods__limit=100_page1.json").read_bytes()
PAGE2 = (RECORDINGS / "api_v1_pods__limit=100_page2.json").read_bytes()


@pytest.mark.parametrize(
    ("body", "meta"),
    [
        (PAGE1, json.loads(PAGE1)["metadata"]),
        (PAGE2, json.loads(PAGE2)["metadata"]),
        (b'{"kind": "PodList", "apiVersion": "v1", "metadata": {"continue": "t"},\n "items": []}', {"continue": "t"}),
        (b'{"items": [], "metadata": {"continue": "t"}}', None),  # items first: no head
        (b'{"kind": "PodList", "extra": 1, "metadata": {}, "items": []}', None),  # not a list's head
        (b'{"kind": "PodList", "metadata": [], "items": []}', None),
        (b'{"kind": "PodList", "metadata": {"a": "b"} "items": []}', None),  # no comma
        (b"not json", None),
        (b'{"kind": "PodList", "metadata": {"continue": "unterminated, "items": []}', None),
    ],
)
def test_list_head(body: bytes, meta: dict[str, Any] | None) -> None:
    assert list_head(body) == meta


@pytest.mark.parametrize("redacted", [True, False])
def test_the_worker_encodes_a_page_as_the_main_process_would(redacted: bool) -> None:
    items = list_items(POD, json.loads(PAGE1), redacted=redacted)
    want = Encoded(encode_items(items), len(items))
    assert encode_page(POD, PAGE1, redacted=redacted) == want
    worker = Offload()
    worker.start()
    try:
        assert worker.submit(POD, PAGE1, redacted=redacted)
        assert worker.result() == want
        for bad in (b"not json", b"[]", b'{"items": 3}'):  # handed back: the main process reports it
            assert worker.submit(POD, bad, redacted=redacted)
            assert worker.result() is None
        assert worker.submit(POD, PAGE2, redacted=redacted)
        worker.drop()
    finally:
        worker.close()
    assert not worker.submit(POD, PAGE2, redacted=redacted)  # closed: the caller does the page itself
