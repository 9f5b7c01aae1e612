"""Go's ``sort.Slice`` (pattern-defeating quicksort) so unstable sorts land where Go puts them.

kube-scheduler orders preemption victims with ``sort.Slice``, which is not
stable: pods that compare equal (same priority, same start second) come out in
an order decided by the algorithm itself, and a comparator that is not a strict
weak order (pods without a start time) is resolved the way the algorithm happens
to probe it. Python's ``sorted`` is stable and would disagree, so this module
re-implements the algorithm Go (1.19 and later) uses, step for step: insertion
sort up to 12 elements, otherwise pdqsort with a deterministic xorshift for
pattern breaking and heapsort as the fallback. The xorshift is the 64-bit one
(shifts 13, 7, 17) of the Go the reference scheduler is built with; Go releases
before the fix of golang/go#70144 shifted by 13, 17, 5, which moves ties among
13 or more victims.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_MASK64 = (1 << 64) - 1
_INSERTION_MAX = 12
_NINTHER_MIN = 50
_MAX_SWAPS = 12
_PARTIAL_MAX_STEPS = 5
_PARTIAL_MIN_LEN = 50

_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2


def go_sort_slice(items: list[T], less: Callable[[T, T], bool]) -> None:
    """Sort ``items`` in place exactly as Go's ``sort.Slice(items, less)`` would."""
    n = len(items)
    if n <= 1:
        return
    _Sorter(items, less).pdqsort(0, n, n.bit_length())


class _Sorter:
    __slots__ = ("data", "lt")

    def __init__(self, data: list[T], less: Callable[[T, T], bool]) -> None:
        self.data = data
        self.lt = less

    # index-based primitives, as the Go algorithm is written against Less(i, j)/Swap(i, j)
    def less(self, i: int, j: int) -> bool:
        d = self.data
        return bool(self.lt(d[i], d[j]))

    def swap(self, i: int, j: int) -> None:
        d = self.data
        d[i], d[j] = d[j], d[i]

    def insertion(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heapsort(self, a: int, b: int) -> None:
        first, hi = a, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(0, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        balanced = True
        partitioned = True
        while True:
            length = b - a
            if length <= _INSERTION_MAX:
                self.insertion(a, b)
                return
            if limit == 0:
                self.heapsort(a, b)
                return
            if not balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if balanced and partitioned and hint == _INCREASING and self.partial_insertion(a, b):
                return
            if a > 0 and not self.less(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i += 1
        j -= 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i += 1
            j -= 1

    def partial_insertion(self, a: int, b: int) -> bool:
        i = a + 1
        for _ in range(_PARTIAL_MAX_STEPS):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < _PARTIAL_MIN_LEN:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                k = i - 1
                while k >= 1:
                    if not self.less(k, k - 1):
                        break
                    self.swap(k, k - 1)
                    k -= 1
            if b - i >= 2:
                k = i + 1
                while k < b:
                    if not self.less(k, k - 1):
                        break
                    self.swap(k, k - 1)
                    k += 1
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        state = length & _MASK64
        modulus = 1 << length.bit_length()
        base = a + (length // 4) * 2
        for idx in range(base - 1, base + 2):
            # the 64-bit xorshift triple (13, 7, 17) of the sort package's generator
            state ^= (state << 13) & _MASK64
            state ^= state >> 7
            state ^= (state << 17) & _MASK64
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        n = b - a
        swaps = [0]
        q = n // 4
        i, j, k = a + q, a + q * 2, a + q * 3
        if n >= 8:
            if n >= _NINTHER_MIN:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        if swaps[0] == _MAX_SWAPS:
            return j, _DECREASING
        return j, _UNKNOWN

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def reverse(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i += 1
            j -= 1
