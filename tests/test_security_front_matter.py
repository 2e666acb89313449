"""Issue 22, front matter is bounded data, and one file can never take the build down.

- YAML aliases are refused (the "billion laughs": nested aliases of 700 bytes expand to 10^9
  values), as are front matter over a size, over a number of values or nested too deeply: each an
  error with the file and line, in bounded time and memory.
- `title:`, `summary:`, `redirect:` and `order:` must be text; `macros:` is a mapping read as
  data and never evaluated.
- Any exception, `MemoryError` or `RecursionError` while analysing one file is that file's
  finding: the other pages build and the file's last good page is kept.
- A worker process that dies is reported (which file it was analysing) and never waited on.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, TOY_PAGE, write_tree
from test_security import run_build
from labml_site.builder.site import BuildConfig, build
from labml_site.read.sections import SourceError, split_front_matter
from labml_site.typeset.page import analyse


def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    lines.append(f"title: *a{levels - 1}")
    return "\n".join(lines)


BOMBS = {
    "aliases": billion_laughs(9),  # ~700 bytes
    "alias-in-summary": "title: T\nx: &x [1, 2]\nsummary: *x",
    "merge-key": "base: &b {title: T}\n<<: *b",
    "deep-flow": "title: T\nx: " + "[" * 5000 + "]" * 5000,
    "deep-block": "title: T\n" + "".join("  " * i + f"k{i}:\n" for i in range(200)) + "  " * 200 + "v",
    "many-values": "title: T\nx: [" + ",".join("1" for _ in range(20000)) + "]",
    "huge": "title: T\nsummary: " + "x" * 300_000,
}


def _page(front_matter: str) -> str:
    return '"""\n---\n' + front_matter + '\n---\n\n# Page\n\nText.\n"""\nx = 1\n'


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_front_matter_bombs_are_errors_in_bounded_time(name):
    started = time.perf_counter()
    page = analyse("p.py", "p.html", _page(BOMBS[name]))
    assert time.perf_counter() - started < 2.0
    errors = [f for f in page.findings if f.severity == "error"]
    assert errors and all(f.path == "p.py" and f.line >= 2 for f in errors), page.findings
    assert "Traceback" not in errors[0].message


_BOMB_IN_A_BOX = """
import resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GB: a bomb raises MemoryError, not the OOM killer
from pathlib import Path
from labml_site.builder.site import BuildConfig, build
started = time.perf_counter()
result = build(BuildConfig(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), langs=("en",), jobs=int(sys.argv[4])))
print(round(time.perf_counter() - started, 2), " ".join(sorted({f.code for f in result.report.findings})))
# This process's own peak (VmHWM starts afresh at exec; ru_maxrss would carry the peak of the
# pytest process that forked it).
print(next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) // 1024)
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_yaml_bomb_in_one_page_leaves_the_build_fast_and_whole(tmp_path, jobs):
    files = {"__init__.py": '"""\n# Home\n"""\n', "bomb.py": _page(billion_laughs(9)), "macros.py": _page("title: M\nmacros: \"" + "(" * 200_00 + "\"")}
    for i in range(4):
        files[f"p{i}.py"] = TOY_PAGE.replace("Scaled scores", f"Page {i}")
    src = write_tree(tmp_path / "src", files)
    (tmp_path / "tr").mkdir()
    out = tmp_path / "site"
    try:
        done = subprocess.run([sys.executable, "-c", _BOMB_IN_A_BOX, str(src), str(tmp_path / "tr"), str(out), str(jobs)],
                              capture_output=True, text=True, timeout=60, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail("the build hung on a YAML bomb")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    seconds, codes = done.stdout.split("\n")[0].split(" ", 1)
    assert float(seconds) < 20
    assert int(done.stdout.split("\n")[1]) < 600  # MB: nothing expanded
    assert "source" in codes.split() and "math" in codes.split()
    for i in range(4):
        assert (out / f"p{i}.html").is_file()
    assert (out / "macros.html").is_file()  # a bad macros: is the page's error, not its end


def test_aliases_are_refused_with_their_line():
    with pytest.raises(SourceError) as caught:
        split_front_matter("---\ntitle: T\nx: &a 1\nsummary: *a\n---\n", "p.md", 1)
    assert caught.value.line == 4 and "alias" in caught.value.message


@pytest.mark.parametrize("key", ["title", "summary", "redirect", "order"])
@pytest.mark.parametrize("value", ["[a, b]", "{a: b}", "\n  - a\n  - b", "\n  a: b"])
def test_text_keys_must_be_text(key, value):
    text = f"---\nother: 1\n{key}: {value}\n---\n"
    with pytest.raises(SourceError) as caught:
        split_front_matter(text, "p.md", 1)
    assert caught.value.line == 3 and f"'{key}:'" in caught.value.message


def test_scalars_are_text_and_unknown_keys_are_harmless():
    meta, rest, _ = split_front_matter("---\ntitle: 12\norder: 1.5\nsummary: true\ntags: [a, b]\n---\nBody\n", "p.md", 1)
    assert meta["title"] == "12" and meta["order"] == "1.5" and meta["summary"] == "True"
    assert rest == "Body\n"


@pytest.mark.parametrize("macros", [
    '"{\'R\': \'\\\\mathbb{R}\'}"',  # a Python literal in a string: never evaluated
    '"' + "(" * 50_000 + '"',  # what made ast.literal_eval raise MemoryError
    "[a, b]",
    "\n  R:\n    nested: x",
    "{" + ", ".join(f"m{i}: x" for i in range(500)) + "}",  # too many
    "{R: " + "x" * 5000 + "}",  # too long
])
def test_bad_macros_are_a_finding_never_evaluated(macros, monkeypatch):
    import ast

    def no_eval(*_):
        raise AssertionError("macros: evaluated")

    monkeypatch.setattr(ast, "literal_eval", no_eval)
    page = analyse("m.py", "m.html", _page(f"title: M\nmacros: {macros}") + '"""$\\R$"""\n')
    found = [f for f in page.findings if f.code == "math" and "macros" in f.message]
    assert len(found) == 1 and found[0].line == 4, page.findings
    assert page.sections  # the page itself builds


def test_good_macros_are_a_mapping():
    page = analyse("m.py", "m.html", '"""\n---\ntitle: M\nmacros:\n  "\\\\RR": "\\\\mathbb{R}"\n---\n\n$x \\in \\RR$\n"""\n')
    assert not [f for f in page.findings if f.severity == "error"], page.findings
    assert "\u211d" in "".join(b.english for s in page.sections for b in s.blocks)


# ---------------------------------------------------------------------------------------------
# One file can never take the build down


def _toy(tmp_path: Path, n: int = 6) -> Path:
    files = {"__init__.py": '"""\n# Home\n"""\n', "victim.py": '"""\n# Victim page\n\nGood text.\n"""\nx = 1\n'}
    for i in range(n):
        files[f"p{i}.py"] = TOY_PAGE.replace("Scaled scores", f"Page {i}")
    src = write_tree(tmp_path / "src", files)
    (tmp_path / "tr").mkdir(exist_ok=True)
    return src


def _build(src: Path, tmp_path: Path, jobs: int):
    return run_build(src, tmp_path / "tr", tmp_path / "site", langs=("en",), jobs=jobs)


@pytest.mark.parametrize("error", [MemoryError, RecursionError, ValueError, KeyError])
@pytest.mark.parametrize("jobs", [1, 2])
def test_an_exception_while_analysing_one_file_is_its_finding(tmp_path, monkeypatch, error, jobs):
    from labml_site.typeset import page as page_module

    src = _toy(tmp_path)
    first = _build(src, tmp_path, jobs)
    assert (first.out / "victim.html").is_file()
    real = page_module.section_blocks

    def explode(section):
        if "Victim" in section.prose or "victim" in section.prose:
            raise error("boom")
        return real(section)

    monkeypatch.setattr(page_module, "section_blocks", explode)
    (src / "victim.py").write_text('"""\n# Victim page\n\nChanged text.\n"""\nx = 2\n', encoding="utf-8")
    result = _build(src, tmp_path, jobs)
    found = [f for f in result.report.findings if f.path == "victim.py" and f.severity == "error"]
    assert found and error.__name__ in found[0].message, result.report.findings
    assert (result.out / "p0.html").is_file() and (result.out / "index.html").is_file()
    kept = (result.out / "victim.html").read_text(encoding="utf-8")
    assert "Good text." in kept  # the last good page
    assert "kept-last-good" in {f.code for f in result.report.findings}


@pytest.mark.own_process
@pytest.mark.parametrize("how", ["sigkill", "exit"])
def test_a_worker_that_dies_is_reported_never_waited_on(tmp_path, monkeypatch, how):
    from labml_site.builder import pipeline

    src = _toy(tmp_path, n=30)
    parent = os.getpid()
    real = pipeline.analyse_file

    def analyse_file(rel, url, source):
        if rel == "victim.py" and os.getpid() != parent:
            if how == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            os._exit(3)
        return real(rel, url, source)

    monkeypatch.setattr(pipeline, "analyse_file", analyse_file)

    def hung(*_):
        raise TimeoutError("the build hung on a dead worker")

    # In this thread (workers are forked only from a process without other threads, so that
    # they inherit the patch), with an alarm instead of a watching thread.
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(120)
    try:
        result = build(BuildConfig(src, tmp_path / "tr", tmp_path / "site", langs=("en",), jobs=2))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert result.stats.workers == 2
    died = [f for f in result.report.findings if f.code == "worker-died"]
    assert died and died[0].path == "victim.py" and died[0].severity == "error", result.report.findings
    for i in range(30):
        assert (result.out / f"p{i}.html").is_file()


def test_cli_build_with_a_bomb_prints_no_traceback(tmp_path):
    src = write_tree(tmp_path / "src", {"__init__.py": '"""\n# Home\n"""\n', "bomb.py": _page(billion_laughs(9))})
    (tmp_path / "tr").mkdir()
    done = subprocess.run([sys.executable, "-m", "labml_site", "build", "--source", str(src), "--translations", str(tmp_path / "tr"),
                           "--out", str(tmp_path / "site"), "--langs", "en"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert "Traceback" not in done.stderr + done.stdout
    assert "bomb.py:" in done.stderr + done.stdout and "alias" in done.stderr + done.stdout


@pytest.mark.own_process
def test_a_render_worker_that_dies_stops_the_build_with_one_line_and_keeps_the_site(tmp_path, monkeypatch):
    from labml_site.builder import produce as engine
    from labml_site.errors import UserError
    from labml_site.builder import theme

    src = _toy(tmp_path, n=120)
    first = build(BuildConfig(src, tmp_path / "tr", tmp_path / "site", langs=("en",), jobs=1, cache=False))
    before = (first.out / "p0.html").read_bytes()
    monkeypatch.setattr(engine, "PARALLEL_MIN_OUTPUTS", 10)
    parent = os.getpid()
    real = theme.Theme.render

    def render(self, name, **context):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, name, **context)

    monkeypatch.setattr(theme.Theme, "render", render)
    (src / "p0.py").write_text(TOY_PAGE.replace("Scaled scores", "Changed"), encoding="utf-8")
    previous = signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("hung")))
    signal.alarm(120)
    try:
        with pytest.raises(UserError) as caught:
            build(BuildConfig(src, tmp_path / "tr", tmp_path / "site", langs=("en",), jobs=2, cache=False))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert "worker process died" in str(caught.value) and caught.value.status == 1
    assert (first.out / "p0.html").read_bytes() == before
