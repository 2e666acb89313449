"""The command line as a user meets it: every mistake is one line naming what is wrong and what to
do, with a non-zero exit status and no traceback; --version, --help, program names; the
translation commands' languages; --locales.

Most tests run the CLI in a subprocess, as `python -m labml_site` or `python build.py`, exactly as
a user would. What each simulates, where the real thing cannot be made on a test machine (the
tests may run as root, for whom chmod does not make a folder read-only):

* a full disk: a file-size limit (RLIMIT_FSIZE) on the build's process, so writes fail with
  EFBIG, as they fail with ENOSPC on a full disk;
* a folder that cannot be written: `/sys`, where the kernel refuses mkdir even to root (skipped
  where it does not), and an EROFS raised from inside the build (in-process, patched);
* an output folder that cannot exist: `--out FILE/site`, a path under a regular file.
"""
from __future__ import annotations

import ast
import errno
import json
import os
import resource
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, write_json, write_tree
from labml_site import __version__
from labml_site.findings import Finding
from labml_site.read.prose import placeholder

PAGE = '''"""
---
title: Tiny
summary: A tiny page.
---

# Tiny

Scores are $QK^\\top$.
"""

# Apply the mask
x = 1
'''
HEADING_KEY = "<h1>Tiny</h1>\n<p>Scores are " + placeholder(0) + ".</p>\n"


def cli(*args: str, cwd: Path, via: str = "module", limit_bytes: int | None = None) -> subprocess.CompletedProcess:
    """Run the command line as a user does: `python -m labml_site …` or `python build.py …`."""
    start = [sys.executable, "-m", "labml_site"] if via == "module" else [sys.executable, str(ROOT / "build.py")]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}

    def limit() -> None:  # a full disk, simulated: every write past `limit_bytes` fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        [*start, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
        preexec_fn=limit if limit_bytes else None,
    )


def one_error_line(p: subprocess.CompletedProcess, *mentions: str) -> str:
    """The run failed with exactly one line, `error: …`, mentioning each of `mentions`."""
    assert p.returncode != 0, p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, p.stderr
    line = lines[0]
    assert line.startswith("error: "), line
    for m in mentions:
        assert m in line, (m, line)
    return line


@pytest.fixture(params=["module", "build.py"])
def via(request) -> str:
    """Each mistake is tried both ways a user runs the builder from a checkout."""
    return request.param


@pytest.fixture
def project(tmp_path) -> Path:
    """src/t/page.py with a zh translation in tr/."""
    write_tree(tmp_path / "src", {"t/page.py": PAGE})
    write_json(tmp_path / "tr/t/page.zh.json", {"Tiny": "小", HEADING_KEY: "<h1>小</h1>\n<p>分数是 " + placeholder(0) + "。</p>\n"})
    return tmp_path


# ---------------------------------------------------------------------------------------------
# Folders


def test_missing_source_folder(project, via):
    p = cli("--source", "nope", "--translations", "tr", "--out", "site", cwd=project, via=via)
    one_error_line(p, "--source nope", "no such folder")
    assert p.returncode == 2
    assert not (project / "site").exists()


def test_source_without_pages(project, via):
    (project / "empty/sub").mkdir(parents=True)
    (project / "empty/sub/notes.txt").write_text("x")
    p = cli("--source", "empty", "--out", "site", "--langs", "en", cwd=project, via=via)
    one_error_line(p, "--source empty", "no .py or .md file")


def test_source_is_a_file(project, via):
    p = cli("--source", "src/t/page.py", "--out", "site", cwd=project, via=via)
    one_error_line(p, "--source src/t/page.py", "is a file")


def test_missing_translations_folder_when_a_language_needs_it(project, via):
    p = cli("--source", "src", "--translations", "trr", "--langs", "en,zh", "--out", "site", cwd=project, via=via)
    one_error_line(p, "--translations trr", "no such folder")
    assert not (project / "site").exists()
    # The base language alone needs no translations.
    assert cli("--source", "src", "--translations", "trr", "--langs", "en", "--out", "site", cwd=project, via=via).returncode == 0


def test_translations_given_as_a_file(project, via):
    p = cli("check", "--source", "src", "--translations", "tr/t/page.zh.json", cwd=project, via=via)
    one_error_line(p, "--translations tr/t/page.zh.json", "is a file")


def test_translations_folder_that_matches_no_page(project, via):
    # A folder of translation files none of which belongs to a page of --source: a wrong folder.
    write_json(project / "other/annotated/mha.zh.json", {"a": "b"})
    for args in (["--out", "site"], ["check"]):
        cmd = [*args, "--source", "src", "--translations", "other"] if args[0] == "check" else ["--source", "src", "--translations", "other", *args]
        p = cli(*cmd, cwd=project, via=via)
        one_error_line(p, "--translations other", "matches no page", "other/t/page.zh.json")
    assert not (project / "site").exists()


def test_templates_without_page_html(project, via):
    (project / "theme").mkdir()
    p = cli("--source", "src", "--translations", "tr", "--templates", "theme", "--out", "site", cwd=project, via=via)
    one_error_line(p, "--templates theme", "page.html")


def test_out_is_a_file_or_under_one(project, via):
    (project / "afile").write_text("x")
    one_error_line(cli("--source", "src", "--translations", "tr", "--out", "afile", cwd=project, via=via), "--out afile", "is a file")
    p = cli("--source", "src", "--translations", "tr", "--out", "afile/site", cwd=project, via=via)
    one_error_line(p, "--out afile/site", "is a file")


def test_out_must_not_contain_the_sources(project, via):
    # A new site replaces --out: building into the project folder would delete the sources.
    p = cli("--source", "src", "--translations", "tr", "--out", ".", cwd=project, via=via)
    one_error_line(p, "--out .", "--source src")
    assert (project / "src/t/page.py").exists()


def test_locales_must_be_a_folder(project, via):
    p = cli("--source", "src", "--translations", "tr", "--locales", "nope", "--out", "site", cwd=project, via=via)
    one_error_line(p, "--locales nope", "no such folder")


# ---------------------------------------------------------------------------------------------
# Disk full, unwritable output


def test_disk_full_is_one_line_with_what_to_do(project, via):
    p = cli("--source", "src", "--translations", "tr", "--out", "site", "--langs", "en,zh", cwd=project, via=via, limit_bytes=20_000)
    line = one_error_line(p, "cannot write", "site", "free space")
    assert p.returncode == 1, line
    assert not list(project.glob(".site-new-*")), "temporary build folder left behind"


def test_unwritable_out_folder(project):
    if not Path("/sys").is_dir():
        pytest.skip("no /sys here")
    try:
        os.mkdir("/sys/labml-site-test")
    except OSError:
        pass
    else:
        os.rmdir("/sys/labml-site-test")
        pytest.skip("/sys is writable here")
    p = cli("--source", "src", "--translations", "tr", "--out", "/sys/labml-site-test/site", cwd=project)
    one_error_line(p, "cannot write /sys/labml-site-test", "--out")


def test_read_only_file_system_is_reported_with_path_and_reason(project, monkeypatch, capsys):
    import labml_site.builder.site as site
    from labml_site.cli.main import main

    def read_only(config, snapshot):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(Path(config.out) / "index.html"))

    monkeypatch.setattr(site, "build_with", read_only)
    monkeypatch.chdir(project)
    assert main(["--source", "src", "--translations", "tr", "--out", "site"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: cannot write site/index.html: Read-only file system;"), err
    assert "--out" in err[0]


# ---------------------------------------------------------------------------------------------
# Languages: tags only (they become paths), base apart


@pytest.mark.parametrize("bad", ["../../evil", "en,zh/../../x", "e", "en_US", "zh,,ru ru"])
def test_bad_langs_are_refused_before_anything_is_written(project, bad, via):
    p = cli("--source", "src", "--translations", "tr", "--out", "site", "--langs", bad, cwd=project, via=via)
    one_error_line(p, "--langs", "not a language tag")
    assert not (project / "site").exists()


def test_bad_lang_for_extract_writes_nothing_outside(project, via):
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    p = cli("extract", "--source", "src", "--translations", "tr", "--lang", "../../evil", cwd=project, via=via)
    one_error_line(p, "--lang", "'../../evil'")
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before
    assert not list(project.parent.glob("*evil*"))


def test_bad_base_lang(project, via):
    p = cli("check", "--source", "src", "--translations", "tr", "--base-lang", "english!", cwd=project, via=via)
    one_error_line(p, "--base-lang", "'english!'")


@pytest.mark.parametrize("tag", ["en", "zh", "pt-BR", "zh-Hant", "sr-Latn-RS"])
def test_good_tags_pass(tag):
    from labml_site.builder.validate import check_lang

    assert check_lang(tag) == tag


def _two_broken_translations(project: Path) -> None:
    bad = "<p>Apply <script>alert(1)</script></p>\n"
    write_json(project / "tr/t/page.zh.json", {"<p>Apply the mask </p>\n": bad})
    write_json(project / "tr/t/page.ru.json", {"<p>Apply the mask </p>\n": bad})


def test_check_langs_checks_every_listed_language(project):
    _two_broken_translations(project)
    for langs in ("zh,ru", "en,zh,ru"):  # the base language in the list is skipped, not taken as base
        p = cli("check", "--source", "src", "--translations", "tr", "--langs", langs, cwd=project)
        assert p.returncode == 1 and "Traceback" not in p.stderr
        assert "t/page.zh.json" in p.stdout and "t/page.ru.json" in p.stdout, p.stdout
        assert "checked 2 translation files" in p.stderr
    # Without --langs: every language that has files.
    p = cli("check", "--source", "src", "--translations", "tr", cwd=project)
    assert "t/page.zh.json" in p.stdout and "t/page.ru.json" in p.stdout


def test_check_langs_ja_as_the_guide_says(project):
    write_json(project / "tr/t/page.ja.json", {"Tiny": "小さな"})
    p = cli("check", "--source", "src", "--translations", "tr", "--langs", "ja", cwd=project)
    assert p.returncode == 0, p.stderr
    assert "checked 1 translation files (ja)" in p.stderr


def test_check_langs_with_only_the_base_is_refused(project):
    p = cli("check", "--source", "src", "--translations", "tr", "--langs", "en", cwd=project)
    one_error_line(p, "--langs en", "base language en", "python -m labml_site check --langs")


def test_stats_and_extract_take_the_languages_to_work_on(project):
    p = cli("stats", "--json", "--source", "src", "--translations", "tr", "--langs", "zh", cwd=project)
    assert p.returncode == 0, p.stderr
    assert {r["lang"] for r in json.loads(p.stdout)["pages"]} == {"zh"}
    p = cli("extract", "--source", "src", "--translations", "tr", "--lang", "ja", cwd=project)
    assert p.returncode == 0, p.stderr
    assert (project / "tr/t/page.ja.json").exists()


def test_build_adds_the_base_language_first(project):
    p = cli("--source", "src", "--translations", "tr", "--out", "site", "--langs", "zh", "-q", cwd=project)
    assert p.returncode == 0, p.stderr
    assert (project / "site/t/page.html").exists()  # en, the base, at the root
    assert "分数是" in (project / "site/zh/t/page.html").read_text(encoding="utf-8")


def test_a_tree_without_translations_builds_its_base_language(tmp_path):
    # The first thing a new user runs: no translations/ folder, no --translations, no --langs.
    write_tree(tmp_path / "src", {"a.py": PAGE})
    p = cli("--source", "src", "--out", "out", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "out/a.html").exists() and not (tmp_path / "out/zh").exists()
    assert "building en only" in p.stderr


# ---------------------------------------------------------------------------------------------
# serve: a busy port


def test_serve_on_a_port_in_use(project, via):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        p = cli("serve", "--source", "src", "--translations", "tr", "--out", "site", "--port", str(port), cwd=project, via=via)
    one_error_line(p, f"port {port} is in use", "--port", "python -m labml_site serve" if via == "module" else "build.py serve")
    assert not (project / "site").exists(), "the port is checked before building"


def test_serve_bad_port(project):
    p = cli("serve", "--source", "src", "--port", "99999", cwd=project)
    one_error_line(p, "--port", "99999")


# ---------------------------------------------------------------------------------------------
# --version, --help, program names


def test_version():
    for via in ("module", "build.py"):
        p = cli("--version", cwd=ROOT, via=via)
        assert p.returncode == 0 and p.stdout.strip() == f"labml-site {__version__}" == "labml-site 0.1.0"


def test_help_describes_every_option_of_every_command():
    from labml_site.cli.main import _parser

    parser = _parser("labml-site")
    sub = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict))
    assert set(sub.choices) == {"build", "serve", "check", "stats", "extract", "translate", "review", "pr-check", "cache"}
    for name, command in sub.choices.items():
        out = cli(name, "--help", cwd=ROOT).stdout
        for action in command._actions:
            for option in action.option_strings:
                assert option in out, (name, option)
            assert action.help and action.help.strip(), (name, action.option_strings)
        # Defaults are stated where there is one to state.
        if name in ("build", "serve"):
            for option in ("--out", "--langs", "--templates", "--locales"):
                help_text = next(a.help for a in command._actions if option in a.option_strings)
                assert "default" in help_text, (name, option)


def test_messages_name_the_command_that_was_run(project):
    p = cli("--no-such-option", cwd=project, via="module")
    one_error_line(p, "--no-such-option", "`python -m labml_site build --help`")
    p = cli("--no-such-option", cwd=project, via="build.py")
    one_error_line(p, "--no-such-option", f"`python {ROOT / 'build.py'} build --help`")
    assert cli("--help", cwd=project, via="build.py").stdout.startswith(f"usage: python {ROOT / 'build.py'}")
    assert cli("--help", cwd=project, via="module").stdout.startswith("usage: python -m labml_site")
    console = Path(sys.executable).parent / "labml-site"
    if console.exists():  # the installed console script
        p = subprocess.run([str(console), "--nope"], cwd=project, capture_output=True, text=True)
        one_error_line(p, "`labml-site build --help`")


def test_program_name_from_argv0():
    from labml_site.cli.main import program_name

    assert program_name("/usr/bin/labml-site") == "labml-site"
    assert program_name("build.py") == "python build.py"
    assert program_name("/x/labml_site/__main__.py") == "python -m labml_site"
    assert program_name("/x/pytest/__main__.py") == "labml-site"


def test_library_messages_do_not_name_one_way_of_running_it():
    """Messages made in the library (cached, shown whatever command ran) say the command neutrally."""
    offenders = []
    for path in (ROOT / "labml_site").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if "build.py" in node.value and "cli" not in path.parts:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders


# ---------------------------------------------------------------------------------------------
# --format github


def test_github_annotations_escape_properties_and_message():
    import io

    from labml_site.cli.main import print_findings

    stream = io.StringIO()
    finding = Finding("error", "code,x:y", "50% done\r\nnext: a, b", path="tr/a,b:c%d.zh.json", line=3, col=4)
    print_findings([finding], "github", stream=stream)
    assert stream.getvalue() == (
        "::error file=tr/a%2Cb%3Ac%25d.zh.json,line=3,col=4,title=code%2Cx%3Ay::50%25 done%0D%0Anext: a, b\n"
    )


# ---------------------------------------------------------------------------------------------
# --locales: UI catalogs from outside the package, part of the cache's keys


def _po(messages: dict[str, str]) -> str:
    body = "".join(f'msgid "{k}"\nmsgstr "{v}"\n\n' for k, v in messages.items())
    return 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n' + body


def test_locales_folder_adds_a_language_and_edits_show_up_on_rebuild(project, capsys):
    from labml_site.cli.main import main

    write_json(project / "tr/t/page.ja.json", {"Tiny": "小さな"})
    args = ["--source", str(project / "src"), "--translations", str(project / "tr"), "--out", str(project / "site"),
            "--langs", "en,ja", "--locales", str(project / "locales")]
    (project / "locales").mkdir()
    assert main(args) == 0
    err = capsys.readouterr().err
    # No catalog yet: the warning says where to put one and to pass --locales, not site-packages.
    warning = next(l for l in err.splitlines() if "ui-catalog-missing" in l)
    assert f"{project / 'locales'}/ja/LC_MESSAGES/messages.po" in warning and "site-packages" not in warning.split(" to ")[-1]

    po = project / "locales/ja/LC_MESSAGES/messages.po"
    po.parent.mkdir(parents=True)
    po.write_text(_po({"View source": "ソースを見る"}), encoding="utf-8")
    assert main(args) == 0
    page = (project / "site/ja/t/page.html").read_text(encoding="utf-8")
    assert "ソースを見る" in page

    # Edited in place (same size, so only its contents differ): the next build shows the edit.
    po.write_text(_po({"View source": "ソースを表示"}), encoding="utf-8")
    assert main(args) == 0
    page = (project / "site/ja/t/page.html").read_text(encoding="utf-8")
    assert "ソースを表示" in page and "ソースを見る" not in page
    assert "ソース" not in (project / "site/t/page.html").read_text(encoding="utf-8")


def test_locales_override_bundled_strings_one_by_one(project):
    po = project / "locales/zh/LC_MESSAGES/messages.po"
    po.parent.mkdir(parents=True)
    po.write_text(_po({"View source": "看源码"}), encoding="utf-8")
    p = cli("--source", "src", "--translations", "tr", "--out", "site", "--langs", "en,zh", "--locales", "locales", "-q", cwd=project)
    assert p.returncode == 0, p.stderr
    page = (project / "site/zh/t/page.html").read_text(encoding="utf-8")
    assert "看源码" in page
    assert "尚未翻译" in page  # a bundled string the override does not touch


def test_library_config_refuses_a_language_that_is_not_a_tag(tmp_path):
    from labml_site.builder.config import BuildConfig
    from labml_site.errors import UserError

    for langs, base in ((("en", "../x"), "en"), (("en",), "en/.."), (("en", "zh ru"), "en")):
        with pytest.raises(UserError, match="not a language tag"):
            BuildConfig(tmp_path / "src", tmp_path / "tr", tmp_path / "site", langs=langs, base_lang=base)


# ---------------------------------------------------------------------------------------------
# The translators' guide: every command it shows works as written


def _variants(command: str) -> list[str]:
    """`check [--langs zh,ru] [--format text|json|github]` → without and with each optional part,
    each alternative of `a|b|c` once."""
    import re

    match = re.search(r"\[([^\]]+)\]", command)
    if match:
        head, tail = command[: match.start()], command[match.end():]
        return [v for part in ("", match.group(1)) for v in _variants(" ".join((head + " " + part + " " + tail).split()))]
    match = re.search(r"(\S+\|\S+)", command)
    if match:
        return [command[: match.start()] + alt + command[match.end():] for alt in match.group(1).split("|")]
    return [command]


@pytest.mark.slow
def test_every_command_of_the_translators_guide_works_as_written(tmp_path):
    import re
    import shlex
    import shutil

    # The translators' guide and the workbench's, which it sends translators to for `translate` and `review`.
    guide = "\n".join((ROOT / "docs" / name).read_text(encoding="utf-8") for name in ("translators.md", "workbench.md"))
    commands = re.findall(r"python build\.py[^`\n]*", guide)
    assert any("check --langs ja" in c for c in commands) and any("--locales" in c for c in commands)
    assert any(c.startswith("python build.py translate") for c in commands) and any(" review " in c for c in commands)
    shutil.copytree(ROOT / "source", tmp_path / "source", ignore=shutil.ignore_patterns("__pycache__", "checkpoints"))
    shutil.copytree(ROOT / "translations", tmp_path / "translations")
    # A checkout, as a translator has one: `review --base origin/main` compares with it.
    for git in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "base"],
                ["update-ref", "refs/remotes/origin/main", "HEAD"]):
        subprocess.run(["git", *git], cwd=tmp_path, check=True, capture_output=True)
    # Step 3 of "Adding a language", done as the guide says, before the build that uses it.
    po = tmp_path / "locales/ja/LC_MESSAGES/messages.po"
    po.parent.mkdir(parents=True)
    shutil.copy(ROOT / "labml_site/locales/zh/LC_MESSAGES/messages.po", po)
    ran = []
    for command in commands:
        for variant in _variants(command.strip()):
            args = shlex.split(variant, comments=True)[2:]
            if args[:1] in (["serve"], ["translate"]):  # servers: they must start and print their address
                _starts_serving(args, tmp_path)
                ran.append(variant)
                continue
            p = cli(*args, cwd=tmp_path, via="build.py")
            assert "Traceback" not in p.stderr, (variant, p.stderr[-2000:])
            assert not p.stderr.startswith("error:"), (variant, p.stderr)
            assert p.returncode in (0, 1), (variant, p.returncode, p.stderr[-2000:])  # 1: findings, not a usage error
            ran.append(variant)
    assert "python build.py check --langs zh,ru --format github" in ran
    assert (tmp_path / "translations/annotated_attention/mha.ja.json").exists()
    assert "ja" in {p.name for p in (tmp_path / "site").iterdir()}


def _starts_serving(args: list[str], cwd: Path) -> None:
    """Run a serving command on a free port until it prints the address it serves, then stop it."""
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen([sys.executable, str(ROOT / "build.py"), *args, "--port", str(port)], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline, seen = time.monotonic() + 90, ""
        while time.monotonic() < deadline and f"127.0.0.1:{port}" not in seen:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                break
            seen += line
        assert f"127.0.0.1:{port}" in seen, (args, seen[-2000:])
        assert "Traceback" not in seen and not seen.startswith("error:"), (args, seen[-2000:])
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_base_language_other_than_english(tmp_path):
    # Sources written in Russian: ru at the root, the English translation under en/.
    write_tree(tmp_path / "src", {"a.py": PAGE})
    (tmp_path / "tr").mkdir()
    p = cli("extract", "--source", "src", "--translations", "tr", "--base-lang", "ru", "--lang", "en", cwd=tmp_path)
    assert p.returncode == 0 and (tmp_path / "tr/a.en.json").exists(), p.stderr
    p = cli("--source", "src", "--translations", "tr", "--out", "site", "--base-lang", "ru", "--langs", "en", "-q", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert '<html lang="ru"' in (tmp_path / "site/a.html").read_text(encoding="utf-8")
    assert '<html lang="en"' in (tmp_path / "site/en/a.html").read_text(encoding="utf-8")
    assert not (tmp_path / "site/ru").exists()


def test_the_program_ends_with_main_s_code_leaving_its_objects_to_the_system(tmp_path):
    """`run` (the console script, `python -m labml_site`, `python build.py`) ends the process with
    main's status; what the command made is frozen out of the exit's collections, and exit
    handlers still run."""
    script = ("import atexit, gc, sys\n"
              "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0, flush=True))\n"
              "sys.argv = ['labml-site', 'cache']\n"
              "from labml_site.cli import run\n"
              "run()\n")
    env = {**os.environ, "LABML_SITE_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0 and "cache:" in out.stdout and out.stdout.rstrip().endswith("frozen True")
    failing = subprocess.run([sys.executable, "-m", "labml_site", "build", "--source", str(tmp_path / "nowhere")],
                             capture_output=True, text=True, timeout=120)
    assert failing.returncode != 0 and "error:" in failing.stderr and "Traceback" not in failing.stderr
