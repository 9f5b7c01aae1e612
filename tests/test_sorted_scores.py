"""``SortedScoredNodes`` (the score heap the cycle and OpportunisticBatching pop from) is Go's
container/heap with the scheduler's Less: every pop order equals a plain transcription of it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.framework.batch import SortedScoredNodes


def go_heap_pops(names: list[str], totals: dict[str, int], rand: dict[str, int]) -> list[str]:
    """Go's container/heap (Init, then Pop until empty) with the scheduler's Less, written out plainly."""
    h = list(names)

    def less(i: int, j: int) -> bool:
        a, b = h[i], h[j]
        return totals[a] > totals[b] or (totals[a] == totals[b] and rand.get(a, 0) > rand.get(b, 0))

    def down(i: int, n: int) -> None:
        while 2 * i + 1 < n:
            j = 2 * i + 1
            if j + 1 < n and less(j + 1, j):
                j += 1
            if not less(j, i):
                return
            h[i], h[j] = h[j], h[i]
            i = j

    for i in range(len(h) // 2 - 1, -1, -1):
        down(i, len(h))
    out = []
    while h:
        n = len(h) - 1
        h[0], h[n] = h[n], h[0]
        down(0, n)
        out.append(h.pop())
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), max_size=60), st.booleans())
def test_pops_equal_the_plain_go_heap(scores: list[tuple[int, int]], randomized: bool) -> None:
    names = [f"n{i}" for i in range(len(scores))]
    totals = {n: t for n, (t, _) in zip(names, scores, strict=True)}
    rand = {n: r for n, (_, r) in zip(names, scores, strict=True)} if randomized else {}
    h = SortedScoredNodes(names, totals, rand or None)
    assert len(h) == len(names)
    assert h.peek() == (go_heap_pops(names, totals, rand)[0] if names else None)
    assert [h.pop() for _ in names] == go_heap_pops(names, totals, rand)


def test_a_tie_goes_to_the_node_the_heap_holds_first() -> None:
    totals = {"a": 5, "b": 9, "c": 9, "d": 1}
    assert SortedScoredNodes(["a", "b", "c", "d"], totals).pop() == "b"
    assert SortedScoredNodes(["a", "c", "b", "d"], totals).pop() == "c"
