"""Tables that fit the console they are printed on.

A table's narrowest width is worked out before it is printed: names (nodes, pods, plugins) and
figures are never wrapped or cut, text (reasons, notes) may wrap (rich's own measurement is not
used: it counts a cell's longest word even where a column may fold it, and ignores ``no_wrap``). When the narrowest rendering of a table is still
wider than the console, the caller's next layout is tried, and last a stacked view (one block per
row, ``header: value`` lines) that fits any width. Titles are printed on their own line, so no
line ends in the padding rich would add to a title.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from rich.cells import cell_len
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

Cell = str | Text
Justify = Literal["left", "right", "center"]

#: Width a wrapping column gets at least, so that a reason is not cut into one word per line.
TEXT_MIN_WIDTH = 16


@dataclass(frozen=True)
class Column:
    """A column: ``keep`` ones (names, figures) are never wrapped; the others wrap at word boundaries."""

    header: Cell
    keep: bool = False
    min_width: int = 0
    justify: Justify = "left"


def whole_width(cells: Sequence[Cell]) -> int:
    """The width of the widest cell (or header line), for a column that must not wrap.

    rich measures a cell's minimum as its longest word even in a ``no_wrap`` column, so a
    column that must stay whole is given this as its ``min_width``."""
    widths = [0]
    for cell in cells:
        text = cell.plain if isinstance(cell, Text) else cell
        widths.extend(cell_len(line) for line in text.split("\n"))
    return max(widths)


def column_min_width(column: Column, cells: Sequence[Cell]) -> int:
    """How narrow a column may get: all of a kept cell; for text, its ``min_width`` (or less when no
    cell is that wide), never less than the header's longest word."""
    if column.keep:
        return max(column.min_width, whole_width([column.header, *cells]))
    header = column.header.plain if isinstance(column.header, Text) else column.header
    widest_header_word = max((cell_len(w) for w in header.split()), default=1)
    return max(widest_header_word, min(column.min_width, whole_width(cells)))


def required_width(columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> int:
    """The narrowest console the table fits: column minimums plus padding and borders (3 per column, 1 more)."""
    widths = [column_min_width(c, [row[i] for row in rows]) for i, c in enumerate(columns)]
    return sum(widths) + 3 * len(columns) + 1


def fits(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> bool:
    return required_width(columns, rows) <= console.width


def build_table(columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> Table:
    tbl = Table(title=None)
    for i, c in enumerate(columns):
        width = column_min_width(c, [row[i] for row in rows])
        if c.keep:
            tbl.add_column(c.header, no_wrap=True, justify=c.justify, min_width=width)
        else:
            tbl.add_column(c.header, overflow="fold", justify=c.justify, min_width=width)
    for row in rows:
        tbl.add_row(*(cell if isinstance(cell, Text) else Text(cell) for cell in row))
    return tbl


def print_title(console: Console, title: str) -> None:
    console.print(Text(title, style="italic"), overflow="fold")


def print_packed(console: Console, items: Sequence[str], sep: str = ", ") -> None:
    """Items on as few lines as the console allows, never breaking one item across lines."""
    line = ""
    for item in items:
        candidate = f"{line}{sep}{item}" if line else item
        if line and cell_len(candidate) > console.width:
            console.print(Text(line + sep.rstrip()), overflow="fold")
            candidate = item
        line = candidate
    if line:
        console.print(Text(line), overflow="fold")


def print_indented(console: Console, text: Cell, indent: int = 2) -> None:
    """A line indented by ``indent``, its continuation lines too."""
    body = text if isinstance(text, Text) else Text(text)
    body.overflow = "fold"
    console.print(Padding(body, (0, 0, 0, indent)))


def print_stacked(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> None:
    """One block per row: its first cell, then ``header: value`` for every other non-empty cell."""
    for row in rows:
        first = row[0] if isinstance(row[0], Text) else Text(row[0])
        console.print(first.copy(), overflow="fold")
        for col, cell in zip(columns[1:], row[1:], strict=False):
            text = cell.plain if isinstance(cell, Text) else cell
            if text:
                header = col.header.plain if isinstance(col.header, Text) else col.header
                line = Text(f"{header}: ")
                line.append(cell.copy() if isinstance(cell, Text) else Text(cell))
                print_indented(console, line)


Stacked = Callable[[Console, Sequence[Column], Sequence[Sequence[Cell]]], None]


def print_table(
    console: Console,
    title: str | None,
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    *,
    stacked: Stacked | None = None,
) -> None:
    """The title, then the table when it fits, else the stacked view."""
    if title:
        print_title(console, title)
    if fits(console, columns, rows):
        console.print(build_table(columns, rows))
    else:
        (stacked or print_stacked)(console, columns, rows)


_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b)|[A-Z]?[a-z]+|\d+")


def aliases(names: Sequence[str]) -> dict[str, str]:
    """Short, distinct names for column headers: the initials of each CamelCase word
    (NodeResourcesBalancedAllocation → NRBA), lengthened or numbered where two would clash."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        words = _WORD.findall(name) or [name]
        alias = "".join(w[0].upper() for w in words)
        if alias in used:
            alias = "".join(w[0].upper() for w in words[:-1]) + words[-1][:3].capitalize()
        base, n = alias, 2
        while alias in used:
            alias = f"{base}{n}"
            n += 1
        used.add(alias)
        out[name] = alias
    return out
