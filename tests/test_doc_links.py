"""Every relative link of README.md and docs/*.md leads somewhere: the README is the front door and
docs/ holds the reference, so a section moved or renamed must not leave a dead link behind.

A link's target must exist in the repository; a ``#fragment`` must be the GitHub anchor of a heading
of the target Markdown file (lower-cased, punctuation other than ``-`` and ``_`` dropped, spaces
turned into ``-``, repeats numbered ``-1``, ``-2``...). Links inside code blocks and inline code are
not links; absolute URLs are not checked (no network in tests).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[(?:[^\]\n]|`[^`\n]*`)*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def prose(text: str) -> str:
    """``text`` without fenced code blocks (whose ``#`` lines are no headings and ``[x](y)`` no links)."""
    return FENCE.sub("", text)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: its text (markup removed) lower-cased, without punctuation."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for m in HEADING.finditer(prose(page.read_text(encoding="utf-8"))):
        base = github_anchor(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def relative_links(page: Path) -> list[str]:
    # inline code may hold brackets and parentheses that are not links (a link's text may be code)
    text = INLINE_CODE.sub("`code`", prose(page.read_text(encoding="utf-8")))
    return [m.group(1) for m in LINK.finditer(text) if not re.match(r"[a-z][a-z0-9+.-]*:", m.group(1))]


@pytest.mark.parametrize(("heading", "anchor"), [
    ("`kschedctl check`", "kschedctl-check"),
    ("What would make it fit (`--fix`)", "what-would-make-it-fit---fix"),
    ("Sequence scenarios: `expected-sequence.yaml`", "sequence-scenarios-expected-sequenceyaml"),
    ("Plugins and agreement with kube-scheduler v1.35.4", "plugins-and-agreement-with-kube-scheduler-v1354"),
    ("A failing change, and `--update`", "a-failing-change-and---update"),
])
def test_github_anchor(heading: str, anchor: str) -> None:
    assert github_anchor(heading) == anchor


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    dead = []
    for link in relative_links(page):
        path, _, fragment = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            dead.append(f"{link}: no file {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
        elif fragment and target.suffix == ".md" and fragment not in anchors(target):
            dead.append(f"{link}: no heading with anchor #{fragment} in {target.relative_to(ROOT)}")
    assert not dead, f"{page.relative_to(ROOT)}: dead links:\n" + "\n".join(dead)


def test_the_readme_links_every_docs_page() -> None:
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in relative_links(ROOT / "README.md")}
    assert [p.name for p in PAGES[1:] if p.resolve() not in linked] == []
