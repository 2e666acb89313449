"""Issue 12, the attacks of a hostile pull request or a bad file, one class per test group. Each
test builds its own fixture under tmp_path, runs the attack and asserts that nothing happened:
no file outside the fixture read into the site or written, nothing blocked, no traceback, and the
build's other pages still built. (The engine's classes, the cache and --out, are tested with the
engine.) Parsing budgets are in test_security_parsing.py, the fault test of extract in
test_security_extract.py."""
from __future__ import annotations

import errno
import http.client
import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from labml_site.builder.serve import make_server
from labml_site.builder.site import BuildConfig, build
from labml_site.read.prose import placeholder
from labml_site.read.safe_files import UnsafeFile, check_no_links, read_regular, remove_file, write_atomic
from labml_site.read.structure import discover, output_collisions
from labml_site.translate.catalog import Catalog, catalog_path, check_file
from labml_site.translate.extract import extract
from labml_site.translate.sanitize import is_protocol_relative, sanitize
from labml_site.typeset.page import analyse, is_outside

from conftest import TOY_PAGE, write_json, write_tree

SECRET = "TOP-SECRET-do-not-publish-4f1c"
INDEX = '"""\n# Toy tutorial\n\nRead [the page](page.html) first.\n"""\n'
TITLE_KEY = "Scaled scores"


def toy(tmp_path: Path) -> tuple[Path, Path]:
    src = write_tree(tmp_path / "src", {"toy/__init__.py": INDEX, "toy/page.py": TOY_PAGE})
    tr = tmp_path / "tr"
    write_json(tr / "toy/page.zh.json", {TITLE_KEY: "缩放分数"})
    return src, tr


def run_build(src: Path, tr: Path, out: Path, timeout: float = 120.0, **options):
    """Build in a thread, so a build that blocks (on a FIFO…) fails the test instead of hanging it.
    `options`: of BuildConfig (default: en and zh, one process)."""
    box: dict = {}
    options = {"langs": ("en", "zh"), "base_lang": "en", "jobs": 1, **options}

    def target():
        try:
            box["result"] = build(BuildConfig(src, tr, out, **options))
        except BaseException as e:  # noqa: BLE001 - reported below
            box["error"] = e

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "the build blocked"
    assert "error" not in box, f"the build raised {box.get('error')!r}"
    return box["result"]


def site_text(out: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in sorted(out.rglob("*")) if p.is_file()
    )


def secret_file(tmp_path: Path, name: str = "secret.txt") -> Path:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    path = outside / name
    path.write_text(f"{SECRET}\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------
# 3. Files are what they claim
# ---------------------------------------------------------------------------------------------


def test_symlinked_sources_and_assets_are_refused_and_never_published(tmp_path):
    src, tr = toy(tmp_path)
    secret = secret_file(tmp_path)
    page = tmp_path / "outside" / "page.py"
    page.write_text(f'"""\n# Leak\n\n{SECRET}\n"""\n', encoding="utf-8")
    os.symlink(secret, src / "toy" / "figure.png")  # an asset linking out of the tree
    os.symlink(page, src / "toy" / "leak.py")  # a page linking out of the tree
    os.symlink(src / "toy" / "page.py", src / "toy" / "inside.py")  # a link inside the tree: refused too
    os.symlink(tmp_path / "outside", src / "linked")  # a folder linking out of the tree
    files = discover(src)
    assert {p.rel for p in files.pages} == {"toy/__init__.py", "toy/page.py"}
    assert files.assets == {}
    refused = {Path(f.path).name: f for f in files.findings}
    assert set(refused) == {"figure.png", "leak.py", "inside.py", "linked"}
    assert all(f.severity == "error" and "symbolic link" in f.message for f in refused.values())
    result = run_build(src, tr, tmp_path / "site")
    assert SECRET not in site_text(result.out)
    assert (result.out / "toy/page.html").is_file() and (result.out / "zh/toy/page.html").is_file()
    assert not (result.out / "linked").exists() and not (result.out / "toy/leak.html").exists()
    assert {"source-refused"} <= {f.code for f in result.report.findings}


def test_fifos_and_sockets_in_the_source_never_block_the_build(tmp_path):
    src, tr = toy(tmp_path)
    os.mkfifo(src / "toy" / "blocking.py")
    os.mkfifo(src / "toy" / "figure.png")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(src / "toy" / "s.sock"))
        files = discover(src)
        kinds = {Path(f.path).name: f.message for f in files.findings}
        assert "FIFO" in kinds["blocking.py"] and "FIFO" in kinds["figure.png"] and "socket" in kinds["s.sock"]
        result = run_build(src, tr, tmp_path / "site", timeout=120)
        assert (result.out / "toy/page.html").is_file()
        assert not (result.out / "toy/blocking.html").exists()
    finally:
        sock.close()


def test_a_huge_source_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from labml_site.read import structure

    src, _ = toy(tmp_path)
    monkeypatch.setattr(structure, "MAX_SOURCE_BYTES", 1000)
    (src / "toy" / "big.py").write_text("x = 1\n" * 1000, encoding="utf-8")
    files = discover(src)
    assert "toy/big.py" not in {p.rel for p in files.pages}
    assert [f.code for f in files.findings] == ["source-too-large"]


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "link-out", "oversize", "folder"])
def test_translation_files_that_are_not_plain_files_are_refused_without_blocking(tmp_path, kind, monkeypatch):
    from labml_site.translate import files

    tr = tmp_path / "tr"
    main = catalog_path(tr, "toy/page", "zh")
    main.parent.mkdir(parents=True)
    if kind == "dev-zero":
        os.symlink("/dev/zero", main)  # reading it would never end
    elif kind == "fifo":
        os.mkfifo(main)  # opening it for reading would block until someone writes
    elif kind == "link-out":
        os.symlink(secret_file(tmp_path), main)
    elif kind == "oversize":
        monkeypatch.setattr(files, "MAX_FILE_BYTES", 100)
        main.write_text(json.dumps({TITLE_KEY: "x" * 200}), encoding="utf-8")
    else:
        main.mkdir()
    started = time.monotonic()
    catalog = Catalog.load(main, "zh", root=tr)
    findings = check_file(main, "zh", {TITLE_KEY}, root=tr)
    assert time.monotonic() - started < 5
    assert catalog.entries == {} and catalog.verdict(TITLE_KEY).state == "untranslated"
    codes = {f.code for f in findings}
    expected = {"oversize": "file-too-large"}.get(kind, "not-a-regular-file")
    assert codes == {expected}, findings
    assert all(f.path == str(main) and f.line == 1 for f in findings)


def test_a_translation_under_a_linked_folder_is_refused(tmp_path):
    tr = tmp_path / "tr"
    tr.mkdir()
    outside = tmp_path / "outside"
    write_json(outside / "page.zh.json", {TITLE_KEY: SECRET})
    os.symlink(outside, tr / "toy")
    main = catalog_path(tr, "toy/page", "zh")
    assert Catalog.load(main, "zh", root=tr).entries == {}
    assert {f.code for f in check_file(main, "zh", root=tr)} == {"not-a-regular-file"}


_BUILD_IN_A_BOX = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # /dev/zero read whole: MemoryError, not the OOM killer
from pathlib import Path
from labml_site.builder.site import BuildConfig, build
result = build(BuildConfig(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), langs=("en", "zh"), base_lang="en", jobs=1))
print(" ".join(sorted({f.code for f in result.report.findings})))
"""


def test_build_with_a_fifo_or_dev_zero_translation_does_not_block(tmp_path):
    import subprocess
    import sys

    src, tr = toy(tmp_path)
    (tr / "toy/page.zh.json").unlink()
    os.symlink("/dev/zero", tr / "toy/page.zh.json")
    os.mkfifo(tr / "toy/__init__.zh.json")
    out = tmp_path / "site"
    try:
        done = subprocess.run(
            [sys.executable, "-c", _BUILD_IN_A_BOX, str(src), str(tr), str(out)],
            capture_output=True, text=True, timeout=40,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the build blocked")
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "not-a-regular-file" in done.stdout
    assert (out / "zh/toy/page.html").is_file() and (out / "zh/toy/index.html").is_file()


@pytest.mark.parametrize("attack", ["main-link", "sidecar-link", "folder-link"])
def test_extract_never_writes_through_a_link(tmp_path, attack):
    tr = tmp_path / "tr"
    victim = secret_file(tmp_path, "victim.json")
    before = victim.read_bytes()
    outside = victim.parent
    main = catalog_path(tr, "toy/page", "zh")
    main.parent.mkdir(parents=True)
    if attack == "main-link":
        os.symlink(victim, main)
    elif attack == "sidecar-link":
        write_json(main, {TITLE_KEY: "缩放分数", "<p>Old English.</p>\n": "<p>旧的。</p>\n"})
        os.symlink(victim, main.with_name("page.zh.stale.json"))
    else:
        main.parent.rmdir()
        os.symlink(outside, main.parent)  # translations/toy -> a folder outside
    listing = sorted(os.listdir(outside))
    result = extract({"toy/page": [TITLE_KEY, "<p>New English.</p>\n"]}, tr, "zh")
    assert victim.read_bytes() == before
    assert sorted(os.listdir(outside)) == listing  # nothing created outside either
    assert result.has_errors and result.pages[0].written == []


def test_safe_files_helpers(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    write_atomic(root / "a" / "b.json", b"{}\n", root)
    assert (root / "a/b.json").read_bytes() == b"{}\n" and oct((root / "a/b.json").stat().st_mode & 0o777) == "0o644"
    assert read_regular(root / "a/b.json", 10) == b"{}\n"
    with pytest.raises(UnsafeFile):
        read_regular(root / "a/b.json", 2)  # larger than the limit
    os.symlink(tmp_path, root / "up")
    for target in (root / "up" / "x.json", tmp_path / "x.json", root / ".." / "x.json"):
        with pytest.raises(UnsafeFile):
            write_atomic(target, b"x", root)
    assert not (tmp_path / "x.json").exists()
    with pytest.raises(UnsafeFile):
        check_no_links(root / "up" / "y", root)
    with pytest.raises(UnsafeFile):
        remove_file(root / "up" / "x.json", root)
    assert not [p for p in root.rglob("*.labml-tmp")]


def test_a_failed_atomic_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from labml_site.read import safe_files

    root = tmp_path / "root"
    root.mkdir()
    target = root / "t.json"
    target.write_bytes(b"old\n")

    def full_disk(*_):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(safe_files.os, "fsync", full_disk)
    with pytest.raises(OSError):
        write_atomic(target, b"new\n" * 1000, root)
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in root.iterdir()) == ["t.json"]


# ---------------------------------------------------------------------------------------------
# 4. Bounded parsing (budgets: test_security_parsing.py)
# ---------------------------------------------------------------------------------------------


def _bomb_files(tr: Path) -> dict[str, bytes]:
    nested = ("{\"" + TITLE_KEY + "\": " + "[" * 1000 + "]" * 1000 + "}").encode()
    huge_number = ("{\n  \"" + TITLE_KEY + "\": " + "9" * 4301 + "\n}\n").encode()
    deep_fuzzy = ("{\"k\": " + "{\"a\": " * 1000 + "1" + "}" * 1000 + "}").encode()
    return {
        "toy/page.zh.json": nested,  # 2 KB
        "toy/__init__.zh.json": huge_number,
        "toy/page.zh.fuzzy.json": deep_fuzzy,
    }


def test_json_bombs_are_findings_with_file_and_line_never_tracebacks(tmp_path):
    src, tr = toy(tmp_path)
    for rel, data in _bomb_files(tr).items():
        (tr / rel).write_bytes(data)
    findings = check_file(tr / "toy/page.zh.json", "zh") + check_file(tr / "toy/__init__.zh.json", "zh")
    syntax = [f for f in findings if f.code == "json-syntax"]
    assert len(syntax) == 3, findings
    assert all(f.path and f.line >= 1 for f in syntax)
    assert any("nested too deeply" in f.message for f in syntax)
    assert any("too many digits" in f.message and f.line == 2 for f in syntax)
    # extract leaves the pages alone and says why; the build skips the files and builds the rest
    result = extract({"toy/page": [TITLE_KEY], "toy/__init__": ["Toy tutorial"]}, tr, "zh")
    assert result.has_errors and all(p.skipped for p in result.pages)
    assert (tr / "toy/page.zh.json").read_bytes() == _bomb_files(tr)["toy/page.zh.json"]
    built = run_build(src, tr, tmp_path / "site")
    assert (built.out / "zh/toy/page.html").is_file() and (built.out / "zh/toy/index.html").is_file()
    assert "json-syntax" in {f.code for f in built.report.findings}


def test_cli_check_stats_extract_report_json_bombs_without_traceback(tmp_path, capsys):
    from labml_site.cli.main import main

    src, tr = toy(tmp_path)
    for rel, data in _bomb_files(tr).items():
        (tr / rel).write_bytes(data)
    common = ["--source", str(src), "--translations", str(tr), "--langs", "en,zh"]
    assert main(["check", *common]) == 1
    assert main(["stats", *common]) in (0, 1)
    assert main(["extract", "--lang", "zh", *common]) == 1
    err = capsys.readouterr()
    assert "Traceback" not in err.out + err.err
    assert "json-syntax" in err.out + err.err


def test_an_oversize_value_is_refused_with_its_line(tmp_path, monkeypatch):
    from labml_site.translate import files

    monkeypatch.setattr(files, "MAX_VALUE_CHARS", 100)
    tr = tmp_path / "tr"
    main = catalog_path(tr, "toy/page", "zh")
    main.parent.mkdir(parents=True)
    main.write_text('{\n  "a": "b",\n  "' + TITLE_KEY + '": "' + "长" * 101 + '"\n}\n', encoding="utf-8")
    findings = [f for f in check_file(main, "zh") if f.code == "value-too-large"]
    assert [(f.line, f.key) for f in findings] == [(3, TITLE_KEY)]
    assert Catalog.load(main, "zh").verdict(TITLE_KEY).state == "invalid"


def test_the_quadratic_placeholder_value_is_cheap_and_still_refused(tmp_path):
    """The crafted value of the issue: a caret and 40 KB of spaces took 24 s to build."""
    from labml_site.translate.checks import check_entry

    key = "<p>Divide <span translate=no>_^_0_^_</span> by two.</p>\n"
    for value in ("<p>^" + " " * 40_000 + "x</p>\n", "<p>^<span" + " " * 40_000 + "</p>\n", "<p>_ ^ 1" + " \t" * 20_000 + "</p>\n"):
        started = time.perf_counter()
        findings = check_entry(key, value)
        assert time.perf_counter() - started < 2.0
        assert any(f.severity == "error" for f in findings)  # the placeholder is missing


def test_pathological_prose_does_not_crash_or_hang_the_build(tmp_path):
    src, tr = toy(tmp_path)
    bodies = {
        "toy/quotes.py": "> " * 3000 + "deep",
        "toy/brackets.py": "[" * 20_000,
        "toy/tag.py": "<a" + " " * 20_000 + "x",
        "toy/images.py": "![a](<" * 3000 + " x)",
        "toy/ticks.py": "`" * 20_000,
        "toy/stars.py": "**a " * 5000,
    }
    for rel, body in bodies.items():
        (src / rel).write_text('"""\n' + body + '\n"""\nx = 1\n', encoding="utf-8")
    started = time.monotonic()
    result = run_build(src, tr, tmp_path / "site", timeout=120)
    assert time.monotonic() - started < 60
    for rel in bodies:
        assert (result.out / rel.replace(".py", ".html")).is_file()
    assert (result.out / "toy/page.html").is_file()


# ---------------------------------------------------------------------------------------------
# 6. Collisions and surprises
# ---------------------------------------------------------------------------------------------


def test_outputs_that_would_collide_are_reported_and_not_overwritten(tmp_path):
    src = write_tree(tmp_path / "src", {
        "__init__.py": INDEX,
        "search.py": f'"""\n# {SECRET} search\n"""\n',
        "404.md": f"# {SECRET} 404\n",
        "translation-status.py": f'"""\n# {SECRET} status\n"""\n',
        "search-index.js": f"var {SECRET};",
        "zh/page.py": f'"""\n# {SECRET} zh\n"""\n',
        "static/style.py": f'"""\n# {SECRET} static\n"""\n',
        "a.py": '"""\n# A from Python\n"""\n',
        "a.md": f"# {SECRET} a from Markdown\n",
        "b.py": '"""\n# B\n"""\n',
        "b.html": SECRET,
    })
    files = discover(src, ["en", "zh"])
    kept = {p.rel for p in files.pages} | set(files.assets)
    assert kept == {"__init__.py", "a.py", "b.py"}
    refused = {Path(f.path).name for f in files.findings if f.code == "output-collision"}
    assert refused == {"search.py", "404.md", "translation-status.py", "search-index.js", "page.py", "style.py", "a.md", "b.html"}
    # the same from the function the engine calls with its languages
    findings, dropped = output_collisions(discover(src), ["en", "zh"], "en")
    assert dropped == {"search.py", "404.md", "translation-status.py", "search-index.js", "zh/page.py", "static/style.py", "a.md", "b.html"}
    assert all(f.severity == "error" and f.path for f in findings)


def test_a_build_never_lets_a_source_overwrite_its_own_outputs(tmp_path):
    src, tr = toy(tmp_path)
    write_tree(src, {
        "search.py": f'"""\n# {SECRET}\n"""\n',
        "404.md": f"# {SECRET}\n",
        "zh/index.py": f'"""\n# {SECRET}\n"""\n',
        "static/x.py": f'"""\n# {SECRET}\n"""\n',
        "toy/page.md": f"# {SECRET}\n",
    })
    result = run_build(src, tr, tmp_path / "site")
    assert SECRET not in site_text(result.out)
    assert (result.out / "search.html").is_file() and (result.out / "zh/toy/page.html").is_file()
    assert "output-collision" in {f.code for f in result.report.findings}


def test_case_only_collisions_are_a_warning(tmp_path):
    src = write_tree(tmp_path / "src", {"Mha.py": '"""\n# A\n"""\n', "mha.md": "# B\n"})
    findings, dropped = output_collisions(discover(src), ["en"], "en")
    assert not dropped and [f.code for f in findings] == ["output-case-collision"] * len(findings) and findings


def test_script_capable_author_html_is_kept_but_warned_with_its_line():
    source = (
        '"""\n# Page\n\nFine <b>bold</b> and <a href="https://example.org">a link</a>.\n\n'
        'Then <img src=x onerror="alert(1)"> and <script>alert(2)</script>\n\n'
        '<iframe src="https://evil.example"></iframe> <svg onload=alert(3)></svg>\n\n'
        '[click](java&#9;script:alert(4)) <object data="x.swf"></object> <embed src="x">\n"""\nx = 1\n'
    )
    page = analyse("p.py", "p.html", source)
    warnings = [f for f in page.findings if f.code == "script-in-source"]
    messages = " ".join(f.message for f in warnings)
    for what in ("onerror", "<script>", "<iframe>", "<svg>", "onload", "<object>", "<embed>"):
        assert what in messages, what
    # a Markdown link is written by the builder: a script target is refused, not published
    refused = [f for f in page.findings if f.code == "refused-link"]
    assert [(f.severity, f.line) for f in refused] == [("error", 10)], page.findings
    assert all(f.severity == "warning" and f.path == "p.py" and f.line >= 2 for f in warnings)
    assert {f.line for f in warnings if "onerror" in f.message} == {6}
    keys = "".join(b.key for s in page.sections for b in s.blocks)
    assert "<script>alert(2)</script>" in keys  # author HTML is the author's: kept as written
    assert "click" in keys and "alert(4)" not in keys
    assert not [f for f in analyse("q.py", "q.html", '"""\n# Q\n\nA <a href="b.html">link</a>, <em>x</em>.\n"""\n').findings]


OUTSIDE_VECTORS = [
    "//evil.example/x.png", "/\\evil.example/x.png", "\\\\evil.example/x.png", "\\/evil.example/x.png",
    "/\t/evil.example/x.png", "/\n/evil.example/x.png", "\t//evil.example/x.png", "\x01//evil.example/x.png",
    "\x01https://evil.example/x.png", "https://evil.example/x.png", "HTTPS://evil.example/x.png",
    "ht\ttps://evil.example/x.png", "data:image/svg+xml,<svg/>", "javascript:alert(1)", "java\nscript:alert(1)",
]


@pytest.mark.parametrize("url", OUTSIDE_VECTORS)
def test_the_outside_request_guard_reads_urls_as_browsers_do(url):
    assert is_outside(url)
    # the URL reaches the prose as written (a docstring, raw or not, is read as written)
    page = analyse("p.py", "p.html", f'r"""\n# P\n\n![a picture]({url})\n"""\n')
    block = page.sections[0].blocks[0]
    html = "".join(block.placeholders) + block.key  # (with a space inside, it is no image at all)
    assert "<img" not in html  # never an image the browser would fetch from elsewhere
    if "script" in url:
        assert "href" not in "".join(block.placeholders)  # nor a link that runs script
    assert not page.assets


@pytest.mark.parametrize("url", ["figures/a.png", "a.png", "../x/y.svg", "%2F%2Fevil.example/x.png", "./a:b.png"])
def test_local_images_stay_images(url):
    assert not is_outside(url)
    page = analyse("p.py", "p.html", f'"""\n# P\n\n![a picture]({url})\n"""\n')
    assert page.sections[0].blocks[0].placeholders[0].startswith("<img ")


@pytest.mark.parametrize("url", ["//evil.example", "/\\evil.example", "\\\\evil.example", "\\/evil.example", "/\t/evil.example", " //evil.example", "/\n\\evil.example"])
def test_translated_links_to_other_hosts_never_survive(url):
    assert is_protocol_relative(url)
    value = f'<p>See <a href="{url.replace(chr(9), "&#9;").replace(chr(10), "&#10;")}">this</a>.</p>'
    assert "evil" not in sanitize(value)
    assert "evil" not in sanitize(value, allowed_urls=[url])


# ---------------------------------------------------------------------------------------------
# serve: real sockets on 127.0.0.1, bounded waits
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def server(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<html><body>home</body></html>", encoding="utf-8")
    srv, state = make_server(tmp_path / "site", 0, max_connections=4, idle_timeout=0.5)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)


def _get(port: int, path: str, host: str | None = "127.0.0.1") -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.putrequest("GET", path, skip_host=True)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "localhost:8000", "127.0.0.1:1", "[::1]:80", "LOCALHOST"])
def test_serve_answers_loopback_hosts(server, host):
    assert _get(server.server_address[1], "/", host)[0] == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "localhost.evil.example", "127.0.0.1.nip.io", "127.0.0.1:80@evil", None, ""])
def test_serve_refuses_other_hosts(server, host):
    status, body = _get(server.server_address[1], "/", host)
    assert status == 421 and b"home" not in body


@pytest.mark.parametrize("query", ["after=x", "after=" + "9" * 5000, "after=1&after=2", "other=1", "after=-1", "a=1&b=2&c=3&d=4"])
def test_serve_answers_bad_queries_with_400(server, query):
    assert _get(server.server_address[1], f"/__labml_site_build?{query}")[0] == 400


def test_serve_limits_connections_and_closes_idle_ones(server):
    port = server.server_address[1]
    idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(4)]
    try:
        time.sleep(0.2)  # the four are being served (reading their request)
        extra = socket.create_connection(("127.0.0.1", port), timeout=5)
        try:
            assert extra.recv(100).startswith(b"HTTP/1.0 503")
        finally:
            extra.close()
        for sock in idle:  # each is closed after the idle timeout, without a request
            sock.settimeout(5)
            deadline = time.monotonic() + 5
            data = b"x"
            while data and time.monotonic() < deadline:
                data = sock.recv(100)
            assert data == b""
        # slots are free again
        for _ in range(20):
            try:
                if _get(port, "/")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            pytest.fail("the server did not recover")
    finally:
        for sock in idle:
            sock.close()
