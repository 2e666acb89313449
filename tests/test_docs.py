"""The documentation a newcomer reads: every relative link in the README and docs/ leads somewhere,
and the README's two set-up commands are what they promise (and what CI runs)."""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from conftest import ROOT

DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", ROOT / "translations" / "README.md", *DOCS]

# [text](target) and ![alt](target), the target up to whitespace or ")"; code spans and fences are skipped.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def links(page: Path) -> list[tuple[int, str]]:
    text = FENCE.sub(lambda m: "\n" * m.group().count("\n"), page.read_text(encoding="utf-8"))
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in LINK.finditer(CODE_SPAN.sub("", line)):
            found.append((number, match.group(1)))
    return found


def github_anchors(page: Path) -> set[str]:
    """The ids GitHub gives a Markdown file's headings: lower case, punctuation dropped, spaces to hyphens."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    anchors, seen = set(), {}
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def test_the_docs_exist_and_the_readme_links_to_every_guide():
    names = {p.name for p in DOCS}
    assert {"index.md", "authors.md", "translators.md", "workbench.md", "source-format.md", "math.md", "safety.md",
            "performance.md", "tutorial.md", "architecture.md"} <= names
    readme_targets = {target for _, target in links(ROOT / "README.md")}
    index_targets = {target for _, target in links(ROOT / "docs" / "index.md")}
    assert {f"docs/{n}" for n in names} <= readme_targets, "the README links to every guide"
    assert names - {"index.md"} <= index_targets, "docs/index.md links to every guide"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_an_existing_file_and_heading(page):
    broken = []
    for line, target in links(page):
        parts = urlsplit(target)
        if parts.scheme or parts.netloc or target.startswith("mailto:"):
            continue  # outside links are not the docs' to keep
        path = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        if not path.exists():
            broken.append(f"{page.relative_to(ROOT)}:{line}: {target} (no such file)")
        elif parts.fragment and path.suffix == ".md" and parts.fragment not in github_anchors(path):
            broken.append(f"{page.relative_to(ROOT)}:{line}: {target} (no such heading in {path.name})")
        elif not path.is_relative_to(ROOT):
            broken.append(f"{page.relative_to(ROOT)}:{line}: {target} (outside the repository)")
    assert not broken, "\n".join(broken)


def test_the_link_checker_finds_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# A heading\n", encoding="utf-8")
    page.write_text("[ok](there.md#a-heading), [gone](missing.md), `[code](no.md)`\n\n```\n[fenced](no.md)\n```\n",
                    encoding="utf-8")
    assert links(page) == [(1, "there.md#a-heading"), (1, "missing.md")]
    assert github_anchors(tmp_path / "there.md") == {"a-heading"}


def readme_command(label: str) -> list[list[str]]:
    """The README's command after the bold `label`: its steps (split at `&&`), each as words."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"\*\*{re.escape(label)}\*\*.*?```sh\n(.+?)\n```", readme, re.S)
    assert match, f"README has no `**{label}**` command block"
    return [shlex.split(step) for step in match.group(1).split("&&")]


def normalized(step: list[str]) -> list[str]:
    """`python -m pip install -q X` and `pip install X` are one step; quiet flags don't matter."""
    words = [w for w in step if w not in ("-q", "--quiet", "--silent")]
    return words[2:] if words[:2] == ["python", "-m"] else words


def test_the_build_command_installs_no_torch_and_the_test_command_installs_it_first():
    build = readme_command("Install and build")
    assert build[0][:2] == ["pip", "install"] and build[-1] == ["python", "build.py"]
    assert not any("torch" in word or "[" in word for step in build for word in step), build
    test = readme_command("Install and test")
    assert test[0][:3] == ["pip", "install", "torch==2.13.0"], "torch first, pinned"
    assert any(step[:2] == ["pip", "install"] and "[" in step[-1] and "tutorial" in step[-1] for step in test[1:])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "--index-url https://download.pytorch.org/whl/cpu" in readme, "how to get the CPU wheels on Linux"


def test_ci_runs_the_readmes_test_command():
    """`.ci/run` runs exactly the README's test steps, in order (quietly, in a venv)."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    ci_steps = [normalized(shlex.split(line, comments=True)) for line in script.splitlines()]
    ci_steps = [step for step in ci_steps if step]
    position = 0
    for step in map(normalized, readme_command("Install and test")):
        assert step in ci_steps[position:], f"{shlex.join(step)} is not run by .ci/run (after step {position})"
        position = ci_steps.index(step, position) + 1
