"""Rich terminal output of a trace: one section per extension point, laid out for the console's width.

Node and plugin names are never cut. Each section picks the first layout that fits:

* Filter: the node × plugin matrix; else one row per node with its verdict (the plugin that
  rejected it and why: the plugins before it passed, those after it did not run); else the
  same verdicts as lines.
* Score: the node × plugin matrix with full plugin names; else the same matrix with short
  aliases and a legend; else plugins as rows and the best nodes as columns (``-o wide``: every
  scored node, a few per table); else one block per node.
* Other tables fall back to a stacked view (``kschedctl.render.layout``).

The default (``-o table``) is the short answer to "where will it go / why is it pending": the
headline, the Filter rejections grouped by plugin and reason, the best few scored nodes, the
selection, the order line and the FitError; a status table only when a plugin did more than
pass or skip. ``-o wide`` prints every extension point's table in full.

Colour is used only when stdout is a terminal and NO_COLOR is unset (rich's own rule). Notes go
to ``notes_console`` (stderr, from the CLI), never between the tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from kschedctl.render.common import (
    FAIL,
    PASS,
    compact,
    extender_rows,
    extender_score_columns,
    filter_cells,
    filter_columns,
    fmt_cpu,
    fmt_mem,
    gates_shown,
    headline,
    nominated_wait_line,
    order_line,
    placement_generate_rows,
    placement_score_rows,
    pod_group_line,
    pod_scheduled_line,
    post_bind_line,
    ranked_nodes,
    score_cell,
    selected_words,
    skipped_filter_line,
    status_line,
)
from kschedctl.render.layout import (
    TEXT_MIN_WIDTH,
    Cell,
    Column,
    aliases,
    build_table,
    fits,
    print_indented,
    print_packed,
    print_table,
    print_title,
)

#: Node names a short answer lists per group of rejected nodes (-o wide and -o json list them all).
MAX_NAMES = 6
#: Codes a short answer leaves out of a status table (it is printed only when another code appears).
_QUIET_CODES = ("Success", "Skip")
#: The last line of a short answer: where the rest is.
WIDE_HINT = "(every extension point's table: -o wide; every field: -o json)"
#: Nodes shown in the default (not wide) output when the score table has to be transposed or stacked.
TOP_NODES = 3

_CODE_STYLE = {
    "Success": "green",
    "Skip": "dim",
    "Unschedulable": "yellow",
    "UnschedulableAndUnresolvable": "red",
    "Error": "bold red",
    "Wait": "cyan",
    "Pending": "cyan",
}

STATUS_COLUMNS = (Column("plugin", keep=True), Column("code", keep=True), Column("reasons", min_width=TEXT_MIN_WIDTH))


def _line(console: Console, text: str | Text) -> None:
    console.print(text if isinstance(text, Text) else Text(text), overflow="fold")


def _status_lines(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> None:
    for plugin, code, *reasons in rows:
        line = Text(f"{plugin}: ")
        line.append(code if isinstance(code, Text) else Text(code))
        text = "".join(r.plain if isinstance(r, Text) else r for r in reasons)
        if text:
            line.append(f" ({text})")
        print_indented(console, line)


def print_status(console: Console, title: str, records: list[dict[str, Any]]) -> None:
    """plugin, code and reasons (the reasons column only when a plugin gave one)."""
    rows = [
        [r["plugin"], Text(r["code"], style=_CODE_STYLE.get(r["code"], "")), "; ".join(r.get("reasons", []))]
        for r in records
    ]
    if any(row[2] for row in rows):
        print_table(console, title, STATUS_COLUMNS, rows, stacked=_status_lines)
    else:
        print_table(console, title, STATUS_COLUMNS[:2], [row[:2] for row in rows], stacked=_status_lines)


def _quiet(records: list[dict[str, Any]]) -> bool:
    """Every plugin passed or skipped: nothing a short answer needs to show."""
    return all(r["code"] in _QUIET_CODES for r in records)


def _status(console: Console, title: str, records: list[dict[str, Any]], wide: bool) -> None:
    """A status table; in the short answer only when a plugin did more than pass or skip."""
    if wide or not _quiet(records):
        print_status(console, title, records)


def render_trace(t: dict[str, Any], console: Console, *, wide: bool = False, notes_console: Console | None = None) -> None:
    """The trace as tables: the short answer by default, every extension point's table with ``wide``."""
    d = t["details"]
    outcome = t.get("outcome")
    style = {"scheduled": "bold green", "unschedulable": "bold red", "gated": "bold yellow"}.get(str(outcome), "bold")
    _line(console, Text(headline(t), style=style))
    _line(console, f"profile: {t['profile']}   nodes: {d['numAllNodes']}   kube-scheduler {t['k8sVersion']}{gates_shown(t)}")

    _status(console, "PreEnqueue", t["preEnqueue"], wide)
    if outcome == "gated":
        if pod_scheduled_line(t):
            _line(console, Text(str(pod_scheduled_line(t)), style="bold yellow"))
        _notes(t, notes_console or console)
        return
    if t.get("placementGenerate"):
        cols = [Column("plugin", keep=True), Column("code", keep=True), Column("parent", keep=True), Column("placements", min_width=20), Column("reasons", min_width=TEXT_MIN_WIDTH)]
        print_table(console, "PlacementGenerate (pod-group cycle)", cols, placement_generate_rows(t))
    if t["preFilter"]:
        _status(console, "PreFilter", t["preFilter"], wide)
    if t["preFilterNodeNames"] is not None:
        _line(console, f"PreFilter narrowed the nodes to: {', '.join(t['preFilterNodeNames']) or '(none)'}")

    if t["filter"]:
        if wide:
            _filter_section(t, console)
        else:
            _filter_summary(t, console)
    if t.get("extenders"):
        cols = [Column("extender", min_width=20), Column("verb", keep=True), Column("outcome", keep=True), Column("answer", min_width=24)]
        print_table(console, "Extenders (HTTP calls, in order)", cols, extender_rows(t))
    if t["postFilter"]:
        _post_filter_section(t, console, wide)
    if nominated_wait_line(t):
        _line(console, Text(str(nominated_wait_line(t)), style="bold"))
    if t["preScore"]:
        _status(console, "PreScore", t["preScore"], wide)
    if t["score"] or extender_score_columns(t):
        _score_section(t, console, wide)
    if t.get("placementScore"):
        headers, rows = placement_score_rows(t)
        cols = [Column(headers[0], keep=True), *[Column(h, keep=True, justify="right") for h in headers[1:]]]
        print_table(console, "PlacementScore (raw→normalized×weight=weighted)", cols, rows)
    if pod_group_line(t):
        _line(console, str(pod_group_line(t)))
    _selection(t, console, wide)
    if order_line(t) and not t.get("selected"):  # (with a selection it follows the "Selected" line)
        _line(console, Text(str(order_line(t)), style="bold yellow"))
    if t["fitError"]:
        _line(console, Text("FitError (PodScheduled condition message):", style="bold red"))
        _line(console, t["fitError"])
    if t.get("error"):
        _line(console, Text(f"error: {t['error']}", style="bold red"))
    if wide:
        _wide_details(t, console)
    _notes(t, notes_console or console)


# --------------------------------------------------------------------------- Filter


def _filter_section(t: dict[str, Any], console: Console) -> None:
    """-o wide: every evaluated node, as a matrix or as verdicts."""
    d = t["details"]
    plugins = filter_columns(t)
    nodes = list(t["filter"])
    shown = nodes
    title = "Filter (node × plugin, first rejection wins)"
    cols, rows = _filter_matrix(t, plugins, shown)
    if fits(console, cols, rows):
        print_title(console, title)
        console.print(build_table(cols, rows))
    else:
        _filter_verdicts(t, console, plugins, shown)
    if skipped_filter_line(t):
        _line(console, str(skipped_filter_line(t)))
    if stopped_early(t):
        _line(
            console,
            f"Filtering stopped after {d['numNodesToFind']} feasible nodes (percentageOfNodesToScore); "
            f"{len(nodes)} of {d['numAllNodes']} nodes were evaluated.",
        )


def _rejections(t: dict[str, Any]) -> dict[tuple[str, str], list[str]]:
    """The rejected nodes grouped by the plugin that rejected them and its reasons, largest group first."""
    groups: dict[tuple[str, str], list[str]] = {}
    for node, v in t["filter"].items():
        if v["code"] != "Success":
            reasons = "; ".join(v.get("reasons", [])) or v["code"]
            groups.setdefault((str(v.get("plugin")), reasons), []).append(node)
    return dict(sorted(groups.items(), key=lambda kv: -len(kv[1])))


def _filter_summary(t: dict[str, Any], console: Console) -> None:
    """The short answer's Filter: how many nodes fit, and who rejected the others and why."""
    d = t["details"]
    nodes = list(t["filter"])
    feasible = [n for n in nodes if t["filter"][n]["code"] == "Success"]
    groups = _rejections(t)
    _line(console, Text(f"Filter: {len(feasible)} of {len(nodes)} nodes evaluated fit" + ("; rejected by:" if groups else ""), style="italic"))
    for (plugin, reasons), names in groups.items():
        line = Text(f"{plugin}: ", style="bold")
        line.append(Text(reasons, style="red"))
        line.append(f" ({len(names)}: {', '.join(sorted(names)[:MAX_NAMES])}{' …' if len(names) > MAX_NAMES else ''})")
        print_indented(console, line)
    if stopped_early(t):
        _line(console, f"Filtering stopped after {d['numNodesToFind']} feasible nodes (percentageOfNodesToScore).")


def stopped_early(t: dict[str, Any]) -> bool:
    """Whether the node search stopped before the last node: percentageOfNodesToScore stops it only
    once that many nodes were found feasible (with none feasible, every node was evaluated)."""
    d = t["details"]
    return bool(d.get("numNodesToFind")) and d["numNodesToFind"] < d["numAllNodes"] and len(t["feasibleNodes"]) >= d["numNodesToFind"]


def _node_text(t: dict[str, Any], node: str) -> Text:
    return Text(node, style="green" if t["filter"][node]["code"] == "Success" else "red")


def _filter_matrix(t: dict[str, Any], plugins: list[str], nodes: list[str]) -> tuple[list[Column], list[list[Cell]]]:
    """Nodes as rows, Filter plugins as columns (never narrower than their name)."""
    rejecting = {t["filter"][n].get("plugin") for n in nodes}
    cols = [Column("node", keep=True)]
    cols += [Column(p, min_width=max(len(p), TEXT_MIN_WIDTH if p in rejecting else 0)) for p in plugins]
    return cols, [[_node_text(t, n), *filter_cells(t, n)] for n in nodes]


def _verdict(t: dict[str, Any], node: str) -> str:
    v = t["filter"][node]
    if v["code"] == "Success":
        return f"{PASS} passed"
    reasons = "; ".join(v.get("reasons", []))
    return f"{FAIL} {v.get('plugin')}" + (f": {reasons}" if reasons else f" ({v['code']})")


def _filter_verdicts(t: dict[str, Any], console: Console, plugins: list[str], nodes: list[str]) -> None:
    """Too narrow for the matrix: each node's verdict; the plugin order says which ones ran."""
    print_title(console, f"Filter (first rejection wins; plugins in order: {', '.join(plugins)})")
    cols = [Column("node", keep=True), Column("verdict", min_width=TEXT_MIN_WIDTH)]
    rows: list[list[Cell]] = [[_node_text(t, n), _verdict(t, n)] for n in nodes]
    if fits(console, cols, rows):
        console.print(build_table(cols, rows))
        return
    for node, verdict in rows:
        line = node.copy() if isinstance(node, Text) else Text(node)
        line.append(f": {verdict}" if isinstance(verdict, str) else verdict)
        _line(console, line)


# --------------------------------------------------------------------------- PostFilter


def _post_filter_section(t: dict[str, Any], console: Console, wide: bool) -> None:
    d = t["details"]
    pf = t["postFilter"]
    per_plugin = d["postFilter"]["perPlugin"] if d.get("postFilter") else []
    if wide or not pf["nominatedNodeName"]:
        print_status(console, "PostFilter", per_plugin)
    if pf["nominatedNodeName"]:
        prios = (d.get("postFilter") or {}).get("victimPriorities", {})
        _line(
            console,
            Text(f"Preemption dry run: would nominate {pf['nominatedNodeName']} and evict {len(pf['victims'])} pod(s)", style="bold"),
        )
        cols = [Column("pod", keep=True), Column("priority", keep=True, justify="right")]
        print_table(console, "Victims (most important first; nothing is evicted)", cols, [[v, str(prios.get(v, ""))] for v in pf["victims"]])


# --------------------------------------------------------------------------- Score

SCORE_TITLE = "Score (raw→normalized×weight=weighted)"


class _Scores:
    """The score figures of a trace, by plugin (and prioritizing extender) and node."""

    def __init__(self, t: dict[str, Any], wide: bool) -> None:
        self.t = t
        self.plugins = list(t["score"])
        self.extenders = extender_score_columns(t)
        ranked = ranked_nodes(t)
        self.ranked = ranked
        self.candidates = set((t.get("selected") or {}).get("candidates", []))
        self.wide = wide

    def names(self) -> list[str]:
        """Column names: plugins, then prioritizing extenders."""
        return [*self.plugins, *(title for title, _ in self.extenders)]

    def aliases(self) -> dict[str, str]:
        """Short column headers: plugins by their initials (NRBA), extenders numbered (E1, E2)."""
        out = aliases(self.plugins)
        out.update({title: f"E{i}" for i, (title, _) in enumerate(self.extenders, 1)})
        return out


    def cells(self, node: str) -> list[str]:
        return [score_cell(self.t["score"][p], node) for p in self.plugins] + [c.get(node, "") for _, c in self.extenders]

    def node_text(self, node: str) -> Text:
        return Text(node, style="bold green" if node in self.candidates else "")

    def total_text(self, node: str) -> Text:
        return Text(str(self.total(node)), style="bold" if node in self.candidates else "")

    def total(self, node: str) -> int | str:
        """The node's total; blank when scoring failed before totals were summed."""
        return (self.t.get("totals") or {}).get(node, "")


def _score_section(t: dict[str, Any], console: Console, wide: bool) -> None:
    s = _Scores(t, wide)
    shown = s.ranked if wide else s.ranked[:TOP_NODES]
    for alias in (None, s.aliases()):
        cols, rows = _score_matrix(s, shown, alias)
        if fits(console, cols, rows):
            print_title(console, SCORE_TITLE)
            console.print(build_table(cols, rows))
            if alias:
                print_packed(console, [f"{a} = {n}" for n, a in alias.items()])
            if len(shown) < len(s.ranked):
                _line(console, f"… {len(s.ranked) - len(shown)} more scored nodes (use -o wide or -o json to see all)")
            return
    if not _score_transposed(s, console):
        _score_stacked(s, console)


def _score_matrix(s: _Scores, nodes: list[str], alias: dict[str, str] | None) -> tuple[list[Column], list[list[Cell]]]:
    """Nodes as rows, plugins as columns (headed by their name and weight, or by an alias)."""
    cols = [Column("node", keep=True)]
    for name in s.names():
        if alias:
            header = alias[name]
        elif name in s.t["score"]:
            header = f"{name}\n(weight {s.t['score'][name]['weight']})"
        else:
            header = name
        cols.append(Column(header, keep=True, justify="right"))
    cols.append(Column("total", keep=True, justify="right"))
    return cols, [[s.node_text(n), *s.cells(n), s.total_text(n)] for n in nodes]


def _transposed(s: _Scores, nodes: list[str]) -> tuple[list[Column], list[list[Cell]]]:
    """Plugins as rows (each cell shows the weight), the given nodes as columns."""
    cols = [Column("plugin", keep=True), *(Column(s.node_text(n), keep=True, justify="right") for n in nodes)]
    per_node = [s.cells(n) for n in nodes]
    rows: list[list[Cell]] = [[name, *(cells[i] for cells in per_node)] for i, name in enumerate(s.names())]
    rows.append([Text("total", style="bold"), *(s.total_text(n) for n in nodes)])
    return cols, rows


def _score_transposed(s: _Scores, console: Console) -> bool:
    """Plugins as rows, nodes as columns, as many nodes per table as fit (at least two)."""
    nodes = s.ranked if s.wide else s.ranked[:TOP_NODES]
    tables: list[tuple[list[str], list[Column], list[list[Cell]]]] = []
    start = 0
    while start < len(nodes):
        k = len(nodes) - start
        while k > 0 and not fits(console, *_transposed(s, nodes[start : start + k])):
            k -= 1
        if k < min(2, len(nodes) - start):
            return False
        chunk = nodes[start : start + k]
        tables.append((chunk, *_transposed(s, chunk)))
        start += k
        if not s.wide:
            break
    for i, (chunk, cols, rows) in enumerate(tables):
        first = nodes.index(chunk[0]) + 1
        where = f"nodes {first}–{first + len(chunk) - 1} of {len(s.ranked)} by total"
        print_title(console, f"{SCORE_TITLE}, {where}" if i == 0 else where)
        console.print(build_table(cols, rows))
    shown = sum(len(chunk) for chunk, _, _ in tables)
    if shown < len(s.ranked):
        _line(console, f"… {len(s.ranked) - shown} more scored nodes (use -o wide or a wider terminal; -o json has all)")
    return True


def _score_stacked(s: _Scores, console: Console) -> None:
    """Narrow terminals: one block per node, one line per plugin."""
    nodes = s.ranked if s.wide else s.ranked[:TOP_NODES]
    print_title(console, SCORE_TITLE)
    for n in nodes:
        head = s.node_text(n)
        head.append(f"  total {s.total(n)}")
        _line(console, head)
        for name, cell in zip(s.names(), s.cells(n), strict=True):
            if cell:
                print_indented(console, f"{name}: {cell}")
    if len(nodes) < len(s.ranked):
        _line(console, f"… {len(s.ranked) - len(nodes)} more scored nodes (use -o wide or -o json to see all)")


# --------------------------------------------------------------------------- selection and binding


def _selection(t: dict[str, Any], console: Console, wide: bool) -> None:
    d = t["details"]
    if not t.get("selected"):
        return
    _line(console, Text(f"Selected: {d.get('selectedNode')}  ({selected_words(t)})", style="bold green"))
    if order_line(t):  # the tie, if any, shorter than tieBreak, and what else is left to order
        _line(console, Text(str(order_line(t)), style="bold yellow"))
    elif d.get("tieBreak"):
        _line(console, d["tieBreak"])
    for title, key in (("Reserve", "reserve"), ("Permit", "permit"), ("PreBind", "preBind"), ("Bind", "bind")):
        if t[key] and (wide or not _quiet(t[key])):
            _line(console, f"{title}: {status_line(t[key])}")
    if d.get("binding"):
        b = d["binding"]
        _line(
            console,
            f"Would create Binding {b['metadata']['namespace']}/{b['metadata']['name']} → node {b['target']['name']} "
            "(not sent: kschedctl never writes)",
        )
    if post_bind_line(t):
        _line(console, str(post_bind_line(t)))


# --------------------------------------------------------------------------- -o wide


def _wide_details(t: dict[str, Any], console: Console) -> None:
    nodes = t["details"].get("nodes") or {}
    if nodes:
        cols = [
            Column("node", keep=True),
            Column("cpu (cores)", keep=True),
            Column("memory", keep=True),
            Column("pods", keep=True),
            Column("taints", min_width=TEXT_MIN_WIDTH),
        ]
        rows = []
        for n, info in nodes.items():
            a, r = info["allocatable"], info["requested"]
            rows.append([
                n,
                f"{fmt_cpu(r.get('cpu', 0))} / {fmt_cpu(a.get('cpu', 0))}",
                f"{fmt_mem(r.get('memory', 0))} / {fmt_mem(a.get('memory', 0))}",
                f"{info['pods']} / {a.get('pods', 0)}",
                ", ".join(info["taints"]) + (" (cordoned)" if info["unschedulable"] else ""),
            ])
        print_table(console, "Nodes (requested / allocatable)", cols, rows)
    for plugin, detail in (t["details"].get("plugins") or {}).items():
        rows = [[f"cycle: {phase}", compact(value)] for phase, value in (detail.get("cycle") or {}).items() if value]
        rows += [[node, compact(value)] for node, value in (detail.get("nodes") or {}).items()]
        if detail.get("error"):
            rows.append(["error", str(detail["error"])])
        if rows:
            cols = [Column("scope", keep=True), Column("detail", min_width=24)]
            print_table(console, f"{plugin}: why (full structure in -o json)", cols, rows)


def _notes(t: dict[str, Any], console: Console) -> None:
    for n in t.get("notes", []):
        console.print(Text(f"note: {n}", style="dim"))
