"""The snapshot reader for kubectl's YAML gives what PyYAML gives, or leaves the text to PyYAML.

Differential tests against ``yamldocs.ReferenceLoader`` (PyYAML's safe loader, timestamps as
strings): whatever ``load_simple`` returns must be PyYAML's documents, types included, and a text
PyYAML refuses or finds a repeated key in must come back None. Then the texts it must read itself
(kubectl's output, the perf corpus), or the speed it exists for is silently lost.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.snapshot import yamldocs
from kschedctl.snapshot.simpleyaml import load_simple
from tests.yaml_objects import YAMLISH, objects

GEN_CLUSTER = Path(__file__).resolve().parent.parent / "bench" / "perf" / "gen_cluster.py"


def same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (True is not 1, NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            same(k1, k2) and same(v1, v2) for (k1, v1), (k2, v2) in zip(a.items(), b.items(), strict=True)
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def reference(text: str) -> list[Any] | None:
    """PyYAML's documents; None when it refuses the text or a mapping sets a key twice."""
    loader = yamldocs.ReferenceLoader(text)
    loader.duplicates = []
    try:
        docs = []
        while loader.check_data():
            docs.append(loader.get_data())
        return None if loader.duplicates else docs
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


def assert_agrees(text: str) -> list[Any] | None:
    got = load_simple(text)
    if got is not None:
        ref = reference(text)
        assert ref is not None, (text, got)
        assert same(got, ref), (text, got, ref)
    return got




@settings(max_examples=400, deadline=None)
@given(
    st.lists(objects, min_size=1, max_size=3),
    st.sampled_from([None, False]),
    st.sampled_from([None, "'", '"']),
    st.sampled_from([2, 3, 4]),
    st.booleans(),
)
def test_dumped_objects_read_as_pyyaml_reads_them(
    docs: list[Any], flow: bool | None, style: str | None, indent: int, start: bool
) -> None:
    text = yaml.safe_dump_all(
        docs,
        default_flow_style=flow,
        default_style=style,
        allow_unicode=True,
        indent=indent,
        explicit_start=start,
    )
    assert_agrees(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(objects, min_size=1, max_size=3))
def test_block_dumps_of_plain_objects_are_read_here(docs: list[Any]) -> None:
    """Mappings and sequences of ordinary strings and numbers, block style: no reason to leave them to PyYAML."""
    text = yaml.safe_dump_all([{"root": d} for d in docs], default_flow_style=False, width=10**6)
    plain = all(isinstance(d, int | str) and (not isinstance(d, str) or d.isalnum()) for d in docs)
    got = assert_agrees(text)
    if plain:
        assert got is not None, text


LINES = st.lists(
    st.sampled_from(
        [
            "a: 1",
            "  b: x",
            "- c",
            "  - d: {e: f}",
            "    g: [h, 'i', \"j\"]",
            "k:",
            "  l: m",
            "-",
            "---",
            "# c",
            "",
            "  ",
            "n: o #p",
            "q: 'r''s'",
            't: "u\\nv"',
            "w: x:y",
            "z: {a: [1, {b: c}], d: e}",
            "- - x",
            "a: b: c",
            "   c: 2",
            "- y: 1",
            "  z: 2",
            "e: |",
            "  text",
            "f: -1",
            "g: --x",
            "1: one",
            "true: t",
            "~: n",
            "h: {}",
            "i: []",
            "j: {a: b, a: c}",
            "a: 2",
            "<<: {x: 1}",
            "'k': v",
            '"l": w',
            'm: "x',
        ]
    ),
    max_size=12,
)


@settings(max_examples=500, deadline=None)
@given(YAMLISH)
def test_random_text_is_read_as_pyyaml_reads_it_or_left_to_it(text: str) -> None:
    assert_agrees(text)


@settings(max_examples=1000, deadline=None)
@given(LINES)
def test_random_lines_are_read_as_pyyaml_reads_them_or_left_to_it(lines: list[str]) -> None:
    assert_agrees("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "# only a comment\n",
        "---\n",
        "a: 1\n---\n",
        "---\n---\nb: 2\n",
        "\n---\na: 1",
        "a: 1\n---\n# nothing\n---\nb:\n- 1\n- {c: d}\n",
        "list:\n- a\n- b\nnext: 1\n",
        "list:\n  - a\n  -   b: 1\n      c: 2\n",
        "- a:\n  - x\n  b: 1\n",
        "-\n  a: 1\n- \n-\n",
        "a:\n  b:\n    c: 1\n  d: 2\ne: 3\n",
        "a:   spaced   value   \n",
        "names: [registry.example/app-101:1, 'x', \"y\"]\n",
        "labels: {kubernetes.io/hostname: node-1, a b: c d}\n",
        "r: {requests: {cpu: 200m, memory: 512Mi}, limits: {}}\n",
        "n: -5\nf: -.5\nargs:\n- --v=2\n- -x\n",
        "q: 'it''s'\ne: \"a\\tb\\u00e9\"\n",
        "é: ü\n",
        "=: x\ny: =\n",  # a string, as Kubernetes' YAML reader takes it (no YAML 1.1 value key)
    ],
)
def test_kubectl_style_constructs_are_read_here(text: str) -> None:
    assert assert_agrees(text) is not None, text


@pytest.mark.parametrize(
    "text",
    [
        "a: &x [1, 2]\nb: *x\n",
        "base: {<<: {cpu: 1}}\n",
        "<<: {a: 1}\n",
        "? a\n: b\n",
        "s: !!str 1\n",
        "m: |+\n  line\n",
        "m: |2\n  line\n",
        "m: |\n\n  leading blank line\n",
        "m: |\n  spaces follow\n    \nn: 1\n",
        "m: |\n  no final line break",
        "- |\n  entry\n",
        "m: >\n  line\n",
        "p: two\n  lines\n",
        'd: "two\n  lines"\n',
        "f: {a: 1,\n  b: 2}\n",
        "c: value # comment\n",
        "t:\tx\n",
        "w: x\r\n",
        "%YAML 1.1\n---\na: 1\n",
        "a: 1\n...\n",
        "--- a: 1\n",
        "dup: 1\ndup: 2\n",
        "d: {x: 1, x: 2}\n",
        "1: a\ntrue: b\n",
        "plain scalar document\n",
        "- - nested\n",
        "a: b: c\n",
        "a: 1\n  b: 2\n",
        "\ufeffa: 1\n",
        "a: \u2028\n",
    ],
)
def test_other_yaml_is_left_to_pyyaml(text: str) -> None:
    assert load_simple(text) is None, text


BLOCK_LINES = st.lists(
    st.sampled_from(["x", "two words", "", " ", "  ", "#c", "- d", "k: v", "{\"j\": 1}", "'q'", "|", "a: |"]),
    min_size=1,
    max_size=6,
)


@settings(max_examples=1000, deadline=None)
@given(
    st.sampled_from(["|", "|-"]),
    st.sampled_from([0, 2]),
    st.lists(st.tuples(st.sampled_from([0, 1, 2, 3, 4, 6]), st.sampled_from(["x", "two words", "", " ", "#c", "- d", "k: v"])), max_size=6),
    BLOCK_LINES,
    st.sampled_from(["", "next: 1\n", "# after\nnext: 1\n", "  deeper: 1\n", "---\nb: 2\n", "tail"]),
)
def test_literal_block_scalars_are_read_as_pyyaml_reads_them(
    header: str, parent: int, extra: list[tuple[int, str]], first: list[str], after: str
) -> None:
    pad = " " * parent
    body = [f"{pad}  {first[0]}"] + [f"{pad}{' ' * n}{text}" if text else " " * n for n, text in extra]
    text = (f"top:\n{pad}k: {header}\n" if parent else f"k: {header}\n") + "\n".join(body) + "\n" + (pad + after if after and parent and not after.startswith("---") else after)
    assert_agrees(text)


def test_literal_block_scalars_of_kubectl_are_read_here() -> None:
    text = (
        "metadata:\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: |\n"
        '      {"apiVersion":"v1","kind":"Pod"}\n  name: p\ndata:\n  script: |-\n    set -e\n\n    echo "a: b # c"\n'
        "    - not an entry\n"
    )
    got = assert_agrees(text)
    assert got is not None
    assert got[0]["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] == '{"apiVersion":"v1","kind":"Pod"}\n'
    assert got[0]["data"]["script"] == 'set -e\n\necho "a: b # c"\n- not an entry'


def test_equal_lines_do_not_share_mutable_objects() -> None:
    docs = load_simple("a: {x: [1]}\n---\na: {x: [1]}\nb: {y: 1}\n---\nb: {y: 1}\n")
    assert docs is not None
    assert docs[0]["a"] is not docs[1]["a"] and docs[0]["a"]["x"] is not docs[1]["a"]["x"]
    assert docs[1]["b"] is not docs[2]["b"]


def test_kubectl_output_is_read_here() -> None:
    text = """apiVersion: v1
items:
- apiVersion: v1
  kind: Pod
  metadata:
    annotations:
      kubernetes.io/psp: "restricted"
    creationTimestamp: "2024-05-01T10:00:00Z"
    labels:
      app: web
      pod-template-hash: 5d9c7b
    name: web-5d9c7b-abcde
    namespace: default
    ownerReferences:
    - apiVersion: apps/v1
      blockOwnerDeletion: true
      controller: true
      kind: ReplicaSet
      name: web-5d9c7b
      uid: 0b1c2d3e-0000-4000-8000-000000000001
    resourceVersion: "1234"
  spec:
    containers:
    - args:
      - --port=8080
      - -v
      image: nginx:1.25
      name: web
      ports:
      - containerPort: 8080
        protocol: TCP
      resources:
        requests:
          cpu: 100m
          memory: 128Mi
    nodeName: node-1
    tolerations:
    - effect: NoExecute
      key: node.kubernetes.io/not-ready
      operator: Exists
      tolerationSeconds: 300
  status:
    phase: Running
kind: List
metadata:
  resourceVersion: ""
"""
    assert assert_agrees(text) is not None


def test_the_perf_corpus_is_read_here(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    subprocess.run([sys.executable, str(GEN_CLUSTER), "30", "200", str(out)], check=True, capture_output=True)
    assert assert_agrees(out.read_text()) is not None
