"""The nodes a plugin's details explain (``explain.cycle._explained_nodes``): the candidates, then the best
scored, then the nodes the plugin rejected, then the others, at most ``MAX_EXPLAINED_NODES``; found with a
partial sort and a walk that stops early, the same list as sorting every score and walking every node."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.explain.cycle import MAX_EXPLAINED_NODES, _explained_nodes


def reference(trace: Any, plugin: str) -> list[str]:
    out: list[str] = list(trace.candidates)
    ranked = sorted(trace.totals, key=lambda n: (-trace.totals[n], n))
    rejected = [n for n, v in trace.filter.items() if v.status.plugin == plugin]
    for n in ranked + rejected + list(trace.filter):
        if len(out) >= MAX_EXPLAINED_NODES:
            break
        if n not in out:
            out.append(n)
    return out


names = st.integers(0, 60).map(lambda i: f"n{i:02d}")


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(names, st.sampled_from(["", "A", "B"]), max_size=50),
    st.dictionaries(names, st.integers(0, 5), max_size=40),
    st.lists(names, max_size=25),
)
def test_the_same_nodes_as_sorting_them_all(verdicts: dict[str, str], totals: dict[str, int], candidates: list[str]) -> None:
    trace = SimpleNamespace(
        candidates=candidates,
        totals=totals,
        filter={n: SimpleNamespace(status=SimpleNamespace(plugin=p)) for n, p in verdicts.items()},
    )
    assert _explained_nodes(trace, "A") == reference(trace, "A")  # type: ignore[arg-type]
