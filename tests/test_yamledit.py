"""Comment-keeping YAML edits (``check --update`` on hand-written expectations): cases, then a property:
whatever the change, the edited text loads as the new data."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedctl.check.update import json_text
from kschedctl.check.yamledit import edit_yaml, flow


def edited(text: str, change: Any) -> tuple[str, bool]:
    data = yaml.safe_load(text)
    new = change(data) or data
    out, kept = edit_yaml(text, new)
    assert yaml.safe_load(out) == new
    return out, kept


def _set(path: str, value: Any) -> Any:
    def change(d: Any) -> None:
        *head, last = path.split(".")
        for k in head:
            d = d[int(k)] if isinstance(d, list) else d[k]
        if isinstance(d, list):
            d[int(last)] = value
        else:
            d[last] = value
    return change


def _del(path: str) -> Any:
    def change(d: Any) -> None:
        *head, last = path.split(".")
        for k in head:
            d = d[int(k)] if isinstance(d, list) else d[k]
        del d[last]
    return change


CASES = [
    (
        "scalar with its comment",
        "# head\nfitError: oops  # why\nselected: {candidates: [a]}\n",
        _set("fitError", None),
        "# head\nfitError: null  # why\nselected: {candidates: [a]}\n",
    ),
    (
        "flow list inside a flow mapping",
        "selected: {maxScore: 3, candidates: [a, b]}  # tie\n",
        _set("selected.candidates", ["c"]),
        "selected: {maxScore: 3, candidates: [c]}  # tie\n",
    ),
    (
        "indented block list",
        "victims:\n  - a   # first\n  - b\n# after\nnode: n\n",
        _set("victims", ["x", "y", "z"]),
        "victims:\n  - x\n  - y\n  - z\n# after\nnode: n\n",
    ),
    (
        "compact block list",
        "victims:\n- a\n- b\nnode: n\n",
        _set("victims", ["x"]),
        "victims:\n- x\nnode: n\n",
    ),
    (
        "block list to an empty one",
        "victims:\n- a\nnode: n  # kept\n",
        _set("victims", []),
        "victims: []\nnode: n  # kept\n",
    ),
    (
        "key removed from a block mapping",
        "# head\nscore:\n  # raw scores\n  raw: {a: 1}\n  gone: {a: 2}  # bye\nnode: n\n",
        _del("score.gone"),
        "# head\nscore:\n  # raw scores\n  raw: {a: 1}\nnode: n\n",
    ),
    (
        "key removed from a flow mapping",
        "filter:\n  # the GPU node\n  gpu: {code: Unschedulable, plugin: X}\n",
        _del("filter.gpu.plugin"),
        "filter:\n  # the GPU node\n  gpu: {code: Unschedulable}\n",
    ),
    (
        "first key of a list item removed",
        "# list\nplacements:\n- pod: a\n  node: n1\n- pod: b  # b\n  node: n2\n",
        _del("placements.1.pod"),
        "# list\nplacements:\n- pod: a\n  node: n1\n- node: n2\n",
    ),
    (
        "quoting a flow context needs",
        "a: x\nb: [y]\n",
        lambda d: {"a": "p, q", "b": ["r: s", "#t"]},
        "a: 'p, q'\nb: ['r: s', '#t']\n",
    ),
    (
        "characters beyond ASCII before the change",
        "# Größe: ≥ 2\nnode: ä\nfitError: x\n",
        _set("fitError", "ü"),
        "# Größe: ≥ 2\nnode: ä\nfitError: ü\n",
    ),
    (
        "a document start marker",
        "--- # expectations\nfitError: x\n",
        _set("fitError", None),
        "--- # expectations\nfitError: null\n",
    ),
]


@pytest.mark.parametrize(("text", "change", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_edits_in_place(text: str, change: Any, want: str) -> None:
    out, kept = edited(text, change)
    assert kept
    assert out == want


def test_a_block_scalar_rewrites_the_document_keeping_the_leading_comments() -> None:
    out, kept = edited("# about\n# this\nfitError: |\n  many\n  lines\nnode: n  # lost\n", _set("fitError", "one"))
    assert not kept
    assert out == "# about\n# this\nfitError: one\nnode: n\n"


def test_flow_rendering_is_one_line() -> None:
    assert flow({"a": [1, None, True], "b": "x y"}) == "{a: [1, null, true], b: x y}"
    assert flow("line\nbreak") == '"line\\nbreak"'
    out, kept = edited("a:\n  b: x  # c\n", _set("a.b", "two\nlines"))
    assert kept and out == 'a:\n  b: "two\\nlines"  # c\n'


def test_json_layout_is_kept() -> None:
    assert json_text('{\n    "a": 1\n}\n', {"a": 2, "b": [1]}) == '{\n    "a": 2,\n    "b": [\n        1\n    ]\n}\n'
    assert json_text('{"a": 1}', {"a": "é"}) == '{"a": "é"}'
    assert json_text('{"a": "\\u00e9"}', {"a": "é"}) == '{"a": "\\u00e9"}'
    assert json_text('{\n\t"a": 1\n}', {"a": 2}) == '{\n\t"a": 2\n}'


# --------------------------------------------------------------------------- the property

KEYS = st.sampled_from(["a", "b", "node", "fitError", "x-y", "ip-10-0-1-2.ec2.internal", "1", "on"])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 10**6),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8),
)
DATA = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, min_size=1, max_size=4), max_leaves=12
)


@st.composite
def changed(draw: Any, old: Any) -> Any:
    """``old`` with values replaced and keys removed, as ``--update`` changes an expectation."""
    if isinstance(old, dict):
        out = {}
        for k, v in old.items():
            what = draw(st.sampled_from(["keep", "keep", "change", "drop"]))
            if what != "drop":
                out[k] = draw(changed(v)) if what == "change" else v
        return out or old
    if isinstance(old, list) and old and draw(st.booleans()):
        return [draw(changed(v)) for v in old]
    return draw(DATA)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, DATA, min_size=1, max_size=5), st.data(), st.sampled_from([None, True, False]), st.booleans())
def test_edited_text_loads_as_the_new_data(old: dict[str, Any], data: Any, style: bool | None, comments: bool) -> None:
    text = yaml.safe_dump(old, default_flow_style=style, sort_keys=False, allow_unicode=True, width=80)
    if comments:
        text = "# head\n" + "".join(f"{line}  # c\n" if line.rstrip().endswith(("]", "}")) else f"{line}\n" for line in text.splitlines())
    new = data.draw(changed(old))
    out, _ = edit_yaml(text, new)
    assert yaml.safe_load(out) == new
