"""Random YAML-able objects for the parser tests: scalars whose text YAML reads in more than one way
(the YAML 1.1 booleans, numbers in every base, timestamps, indicators), strings, and the lists and
mappings made of them. ``test_yamldocs`` and ``test_simpleyaml`` both compare a reader with PyYAML on them."""

from __future__ import annotations

from hypothesis import strategies as st

#: Scalars whose text is not plainly a string to YAML 1.1, or that need quoting.
TRICKY = [
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "n",
    "true",
    "False",
    "~",
    "null",
    "Null",
    "",
    " ",
    "0",
    "-0",
    "+12",
    "0x1F",
    "0o17",
    "017",
    "0b101",
    "1_000",
    "1:30",
    "-1:30:00",
    "1.5e3",
    "1e3",
    "6.8523015e+5",
    ".5",
    "1.",
    ".inf",
    "-.Inf",
    ".NaN",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10 -5",
    "=",
    "<<",
    "a: b",
    "- x",
    "-x",
    "--v=2",
    "&a",
    "*a",
    "!tag",
    "#c",
    "x #y",
    "x# y",
    "'q'",
    '"dq"',
    "it's",
    "500m",
    "1Gi",
    "app-007:1",
    "a:b",
    "é",
    "tab\there",
    "trailing ",
    " leading",
    "a,b",
    "[x]",
    "{y}",
    "a[0]",
    "?x",
    ":x",
    "%x",
    "@x",
    "back\\slash",
    'quote"d',
    "line\nbreak",
    "\u2028",
    "k8s.io/name",
]

scalars = st.one_of(
    st.sampled_from(TRICKY),
    st.text(max_size=12),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
)
keys = st.one_of(st.sampled_from(TRICKY), st.text(max_size=8), st.integers(-5, 5), st.booleans(), st.none())
objects = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)),
    max_leaves=25,
)

#: Short texts of YAML's indicator characters: most are not YAML, some are, in odd ways.
YAMLISH = st.text(alphabet=list("ab01:-?[]{},&*!<=~#'\"|>. \n\t%@`\\"), max_size=60)
