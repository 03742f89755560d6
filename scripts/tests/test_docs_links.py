"""The README and docs/*.md: every relative link and image names a file of the repository, and
every #anchor a heading of the page it points into (GitHub's heading anchors)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "python" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.M)


def _anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page):
    seen, anchors = {}, set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        anchor = _anchor(heading)
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return anchors


def _links(page):
    """(target path or None for the page itself, anchor or None) of each relative link."""
    for target in LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        yield (page.parent / path).resolve() if path else page, anchor or None


def broken_links(pages, root=ROOT):
    """One line per link whose file or heading does not exist."""
    broken = []
    for page in pages:
        for target, anchor in _links(page):
            where = f"{page.relative_to(root)} -> {target} #{anchor}"
            if not target.exists():
                broken.append(f"{where}: no such file")
            elif anchor and (target.suffix != ".md" or anchor not in _anchors(target)):
                broken.append(f"{where}: no such heading")
    return broken


def test_every_link_of_readme_and_docs_resolves():
    assert (ROOT / "docs" / "commands.md").exists(), "docs/ not found next to scripts/"
    assert broken_links(PAGES) == []


def test_a_broken_link_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n[ok](#a-page) [gone](missing.md) [bad](#no-such)\n"
                    "```\n[in code](ignored.md)\n```\n", encoding="utf-8")
    found = broken_links([page], root=tmp_path)
    assert len(found) == 2, found
    assert "missing.md" in found[0] and "no such file" in found[0]
    assert "#no-such" in found[1] and "no such heading" in found[1]


def test_anchors_follow_github():
    assert _anchor("1. The demo") == "1-the-demo"
    assert _anchor("status: memory per node") == "status-memory-per-node"
    assert _anchor("Options, and what happens to a row") == "options-and-what-happens-to-a-row"
    assert _anchor("Why Apache `Pekko`") == "why-apache-pekko"
