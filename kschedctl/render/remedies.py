"""Output of "why this node" (the margin) and "what would make it fit" (remedies), table and markdown.

Both read the plain dictionaries the trace carries (``details.margin``, ``remedies`` and
``remediesSearch``) and are printed after the trace. Remedies are a numbered list rather than a
table: each holds a YAML patch, and a list reads the same at 80 columns as at 200.
"""

from __future__ import annotations

import textwrap
from typing import Any

from rich.console import Console
from rich.text import Text
from tabulate import tabulate

from kschedctl.render.data import to_yaml
from kschedctl.render.layout import Column, print_table

VERIFIED = "verified by re-running the cycle"


# --------------------------------------------------------------------------- why this node


def margin_title(m: dict[str, Any]) -> str:
    other = m["other"]
    if other is None:  # the only feasible node: nothing to compare with
        return f"Why {m['selected']}"
    label = "compared with" if m["compared"] else "runner-up"
    return f"Why {m['selected']} and not {other} ({label})" if m["selected"] else f"{other} ({label})"


def margin_lines(m: dict[str, Any]) -> list[str]:
    """The sentences under the margin table (or instead of it)."""
    if m.get("rejected"):
        r = m["rejected"]
        return [f"{m['other']} was rejected by {r['plugin']} ({r['code']}): {'; '.join(r['reasons'])}"]
    if m.get("note"):
        return [str(m["note"])]
    if m["tie"]:
        return [str(m["tieNote"])]
    deciding = ", ".join(f"{r['plugin']} (+{r['difference']})" for r in m["plugins"] if r["plugin"] in m["decidedBy"])
    return [
        f"{m['selected']} wins by {m['difference']} ({m['selectedTotal']} vs {m['otherTotal']}); decided by {deciding}: "
        f"without {'that plugin' if len(m['decidedBy']) == 1 else 'those plugins'} {m['other']} would have tied or won."
    ]


def _margin_rows(m: dict[str, Any]) -> list[list[str]]:
    rows = []
    for r in m["plugins"]:
        w = f" (w{r['weight']})" if r["weight"] is not None else ""
        rows.append([f"{r['plugin']}{w}", str(r["selected"]), str(r["other"]), f"{r['difference']:+d}"])
    rows.append(["total", str(m["selectedTotal"]), str(m["otherTotal"]), f"{m['difference']:+d}"])
    return rows


def render_margin(m: dict[str, Any] | None, console: Console, *, wide: bool = True) -> None:
    """The margin: its table of weighted scores with ``wide``, else only its title and sentence."""
    if not m:
        return
    if m["plugins"] and wide:
        cols = [Column("plugin (weight)", keep=True)]
        cols += [Column(h, keep=True, justify="right") for h in (str(m["selected"]), str(m["other"]), "difference")]
        rows = []
        for i, row in enumerate(_margin_rows(m)):
            bold = "bold" if i == len(m["plugins"]) or row[0].split(" ")[0] in m["decidedBy"] else ""
            rows.append([Text(c, style=bold) for c in row])
        print_table(console, margin_title(m) + ": weighted scores", cols, rows)
    else:
        console.print(Text(margin_title(m), style="bold"))
    for line in margin_lines(m):
        console.print(Text(line), overflow="fold")


def margin_markdown(m: dict[str, Any] | None) -> str:
    if not m:
        return ""
    out = [f"#### {margin_title(m)}", ""]
    if m["plugins"]:
        headers = ["plugin (weight)", str(m["selected"]), str(m["other"]), "difference"]
        out += [tabulate(_margin_rows(m), headers=headers, tablefmt="github"), ""]
    out += [*margin_lines(m), ""]
    return "\n".join(out)


# --------------------------------------------------------------------------- what would make it fit


#: Node names a headline lists before "and N more" (JSON keeps every name).
MAX_NODE_NAMES = 5


def names_text(names: list[str], limit: int = MAX_NODE_NAMES) -> str:
    """``a, b, c`` for a few names; the first ``limit`` and "and N more" for a long list."""
    shown = ", ".join(names[:limit])
    rest = len(names) - limit
    return f"{shown} and {rest} more" if rest > 0 else shown


def remedy_headline(r: dict[str, Any]) -> str:
    d = r.get("detail") or {}
    extra = ""
    if "opensNodes" in d:
        n = len(d["opensNodes"])
        extra = f" (opens {n} node{'s' if n != 1 else ''}" + (f": {names_text(d['opensNodes'])})" if n else ")")
    if "copies" in d:
        c = d["copies"]
        extra = f" (this one node takes {c}{'+' if d.get('copiesCapped') else ''} cop{'ies' if c != 1 else 'y'} of the pod)"
    return f"{r['change']}{extra}"


def patch_heading(r: dict[str, Any]) -> str:
    """What the patch is for and how it is applied (``apply``: the remedy's patch check, when it has one)."""
    if r["kind"] == "add-node":
        return f"{r['target']}, shaped like the node group's most common node:"
    a = r.get("apply")
    if r["side"] != "pod":
        return f"strategic-merge patch for {r['target']}:"
    if a is None:
        return f"strategic-merge patch for {r['target']} (or its controller's spec.template):"
    if a["target"] != r["target"]:
        return f"strategic-merge patch for {r['target']}: apply it to the pod template of {a['target']} (under spec.template):"
    if a["inPlace"]:
        return f"strategic-merge patch for {r['target']} (the API server takes it on the live pod):"
    return f"strategic-merge patch for {r['target']} (a live pod's spec cannot change this way: re-create the pod with it applied):"


def patch_command(r: dict[str, Any]) -> str | None:
    """The command that makes the change: a node's kubectl command, or the patch of a pod it applies to in place."""
    a = r.get("apply")
    if r.get("command"):
        return str(r["command"])
    if r["side"] == "pod" and a is not None and a["inPlace"]:
        return str(a["how"])
    return None


def search_line(search: dict[str, Any]) -> str:
    used = search["used"]
    b = search["budget"]
    text = (f"Budget: used {used['reruns']} of {b['reruns']} cycle re-runs, {used['probes']} of {b['probes']} Filter probes, "
            f"{used['seconds']:.2f} of {b['seconds']:g} s")
    if search.get("notTried"):
        text += f"; exhausted, not tried: {', '.join(search['notTried'])}"
    return text


def indented(console: Console, text: str, indent: int = 4, style: str = "", hang: int = 0) -> None:
    """Text whose wrapped lines keep the indent (plus ``hang`` after the first); YAML keeps its lines."""
    pad = " " * indent
    for line in text.splitlines():
        if len(pad + line) <= console.width or line.startswith(" "):
            console.print(Text(pad + line, style=style))
            continue
        width = max(console.width, indent + hang + 20)
        wrapped = textwrap.wrap(line, width, initial_indent=pad, subsequent_indent=pad + " " * hang,
                                break_long_words=False, break_on_hyphens=False)
        console.print(Text("\n".join(wrapped), style=style))


def render_remedies(t: dict[str, Any], console: Console, notes_console: Console | None = None) -> None:
    if "remedies" not in t:
        return
    search = t.get("remediesSearch") or {}
    remedies = t["remedies"]
    helpful = [r for r in remedies if r["helps"]]
    console.print(Text("What would make it fit (single changes, each verified by re-running the cycle)", style="bold"))
    if not remedies:
        for n in search.get("notes") or ["no single change of the kinds kschedctl tries makes the pod fit"]:
            console.print(Text(f"  {n}"))
    for i, r in enumerate(helpful, 1):
        console.print(Text(f"{i:>2}. ", style="bold green"), Text(remedy_headline(r), style="bold green"), sep="")
        indented(console, f"→ {r['verdict']['text']} — {VERIFIED}")
        command = patch_command(r)
        if command:
            indented(console, f"$ {command}")
        indented(console, patch_heading(r))
        indented(console, to_yaml(r["patch"]).rstrip(), 6)
    failed = [r for r in remedies if not r["helps"]]
    if failed:
        console.print(Text("Tried, does not help:", style="bold"))
        for r in failed:
            indented(console, f"- {remedy_headline(r)} → {r['verdict']['text']}", 2, hang=2)
    if remedies:
        for n in search.get("notes") or []:  # on stderr, as every note
            (notes_console or console).print(Text(f"note: {n}", style="dim"))
    if search:
        console.print(Text(search_line(search), style="dim"))


def remedies_markdown(t: dict[str, Any]) -> str:
    if "remedies" not in t:
        return ""
    search = t.get("remediesSearch") or {}
    out = ["#### What would make it fit", "", f"Single changes, each {VERIFIED}.", ""]
    for i, r in enumerate([r for r in t["remedies"] if r["helps"]], 1):
        out += [f"{i}. **{remedy_headline(r)}** → {r['verdict']['text']}", ""]
        command = patch_command(r)
        if command:
            out += [f"   `{command}`", ""]
        out += [f"   {patch_heading(r)}", "", "   ```yaml", *("   " + ln for ln in to_yaml(r["patch"]).rstrip().splitlines()),
                "   ```", ""]
    failed = [r for r in t["remedies"] if not r["helps"]]
    if failed:
        out += ["Tried, does not help:", "", *(f"- {remedy_headline(r)} → {r['verdict']['text']}" for r in failed), ""]
    out += [*(f"_note: {n}_" for n in search.get("notes") or []), ""]
    if search:
        out += [f"_{search_line(search)}_", ""]
    return "\n".join(out)


def render_whatif_sections(t: dict[str, Any], console: Console, notes_console: Console | None = None, *, wide: bool = True) -> None:
    """Everything this module adds after a trace: the margin (its table with ``wide``), then the remedies
    (notes on ``notes_console``)."""
    render_margin(t["details"].get("margin"), console, wide=wide)
    render_remedies(t, console, notes_console)


def whatif_sections_markdown(t: dict[str, Any]) -> str:
    return margin_markdown(t["details"].get("margin")) + remedies_markdown(t)
