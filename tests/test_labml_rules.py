"""Key and page rules of the original labml site, on our own small fixtures."""
from __future__ import annotations

from types import SimpleNamespace

from labml_site.read.sections import parse_source
from labml_site.translate.catalog import resolve_translation_path, translation_path


def test_non_raw_docstring_is_read_as_written():
    # as the original read it: `\\` stays two backslashes (a row break in TeX; typeset/math.py
    # reads `\\{…\\}` outside environments as braces), keys are unchanged (placeholders)
    src = 'def f():\n    """\n    Sum $\\\\{x\\\\}$ and $\\nabla$\n    """\n    return 1\n'
    assert parse_source(src, "a.py").sections[0].prose == "\nSum $\\\\{x\\\\}$ and $\\nabla$"


def test_raw_docstring_keeps_its_backslashes():
    src = 'def f():\n    r"""\n    Sum $\\\\{x\\\\}$\n    """\n    return 1\n'
    assert parse_source(src, "a.py").sections[0].prose == "\nSum $\\\\{x\\\\}$"


def test_translation_path_matches_case_insensitively_when_unique(tmp_path):
    (tmp_path / "RWKV").mkdir()
    (tmp_path / "RWKV" / "__init__.zh.json").write_text("{}", "utf-8")
    page = SimpleNamespace(base="rwkv/__init__")
    path, warning = resolve_translation_path(tmp_path, page, "zh")
    assert path == tmp_path / "RWKV" / "__init__.zh.json"
    assert warning.severity == "warning" and warning.code == "path-case"
    assert translation_path(tmp_path, page, "zh") == path


def test_translation_path_is_not_guessed_between_two_candidates(tmp_path):
    for name in ("RWKV", "Rwkv"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.zh.json").write_text("{}", "utf-8")
    page = SimpleNamespace(base="rwkv/__init__")
    path, warning = resolve_translation_path(tmp_path, page, "zh")
    assert path == tmp_path / "rwkv" / "__init__.zh.json" and warning is None


def test_exact_path_wins(tmp_path):
    (tmp_path / "a.zh.json").write_text("{}", "utf-8")
    path, warning = resolve_translation_path(tmp_path, SimpleNamespace(base="a"), "zh")
    assert path == tmp_path / "a.zh.json" and warning is None


def test_no_emphasis_inside_link_targets():
    from labml_site.read.prose import section_blocks
    src = '"""\n### [Samples](samples/__init__.py)\n\nSee [the *code*](a/__b__.py) and __bold__\n"""\n'
    keys = [b.key for s in parse_source(src, "a.py").sections for b in section_blocks(s)]
    assert keys == ['<h3><a href="samples/__init__.py">Samples</a></h3>\n'
                    '<p>See <a href="a/__b__.py">the <em>code</em></a> and <strong>bold</strong></p>\n']


def test_one_line_docstring_key_ends_with_a_space_like_a_comment_line():
    from labml_site.read.prose import section_blocks
    src = 'def f():\n    """Number of images"""\n    return 1\n\n\n# Set the model\nx = 1\n'
    keys = [b.key for s in parse_source(src, "a.py").sections for b in section_blocks(s)]
    assert keys == ["<p>Number of images </p>\n", "<p>Set the model </p>\n"]
    multi = 'def f():\n    """\n    Create the model\n    """\n    return 1\n'
    assert [b.key for s in parse_source(multi, "a.py").sections for b in section_blocks(s)] == [
        "<p> Create the model</p>\n"]


def _keys(src: str, path: str = "a.py") -> list[str]:
    from labml_site.read.prose import section_blocks
    return [b.key for s in parse_source(src, path).sections for b in section_blocks(s)]


def test_caption_becomes_small_emphasis():
    src = '"""\n---*A caption\nover two lines.*---\n\nNot a---b*c*---d.\n"""\n'
    assert _keys(src) == ["<p> <small><em>A caption over two lines.</em></small></p>\n"
                          "<p>Not a---b<em>c</em>---d.</p>\n"]


def test_small_survives_the_sanitizer_in_a_translation():
    from labml_site.translate.repair import review
    key = "<p><small><em>A caption.</em></small></p>\n"
    assert review(key, "<p><small><em>图注。</em></small></p>\n").html == "<p><small><em>图注。</em></small></p>\n"


def test_environment_ending_a_comment_before_code_is_followed_by_an_empty_paragraph():
    src = "x = 0\n# To calculate\n#\n# \\begin{align}\n# a &= b\n# \\end{align}\ny = 1\n"
    assert _keys(src) == ["<p>To calculate</p>\n<span translate=no>_^_0_^_</span><p> </p>\n"]
    doc = 'def f():\n    """\n    Show\n\n    \\begin{align}\n    a\n    \\end{align}\n    """\n    return 1\n'
    assert _keys(doc) == ["<p> Show</p>\n<span translate=no>_^_0_^_</span>"]


def test_environment_ending_a_comment_before_a_blank_line_is_followed_by_an_empty_paragraph():
    # the comment is a section without code (a blank line, then the next comment): the original
    # still ends its key with the comment's last newline as `<p> </p>`
    src = "x = 0\n# To calculate\n#\n# \\begin{align}\n# a &= b\n# \\end{align}\n\n# $$c$$\ny = 1\n"
    assert _keys(src) == ["<p>To calculate</p>\n<span translate=no>_^_0_^_</span><p> </p>\n",
                          "<p><span translate=no>_^_0_^_</span> </p>\n"]


def test_paragraph_right_after_front_matter_has_no_leading_space():
    src = '"""\n---\ntitle: T\n---\n\n*Work by [A](https://a.org),\nbased on code.*\n\n# T\n"""\n'
    assert _keys(src) == ['<p><em>Work by <a href="https://a.org">A</a>, based on code.</em></p>\n'
                          "<h1>T</h1>\n"]


def test_emphasis_may_close_after_a_space_as_in_python_markdown():
    src = '"""\nReverse. *Note the *$m$ here, and a * b * c.\n"""\n'
    assert _keys(src) == ["<p> Reverse. <em>Note the </em><span translate=no>_^_0_^_</span> here, "
                          "and a * b * c.</p>\n"]


def test_star_items_right_after_a_paragraph_line_read_as_emphasis_as_in_the_original():
    # no blank line before the items: no list; the original's emphasis runs from the first item's
    # `*` to the next `*` (strong emphasis is read first)
    src = '"""\nTwo ways:\n* **A**: first,\nstill first.\n* **B**: second.\n"""\n'
    assert _keys(src) == ["<p> Two ways: <em> <strong>A</strong>: first, still first. </em> "
                          "<strong>B</strong>: second.</p>\n"]
    # a blank line before them: a list; a `* ` inside a line opens nothing
    assert _keys('"""\nTwo ways:\n\n* **A**: first,\n* **B**: second.\n"""\n') == [
        "<p> Two ways:</p>\n<ul><li><strong>A</strong>: first, </li>\n<li><strong>B</strong>: second.</li></ul>\n"]
    assert _keys('"""\nx is a * b\n* c.\n"""\n') == ["<p> x is a * b * c.</p>\n"]


def test_doctest_prompt_lines_are_shown_as_written_not_as_nested_quotes():
    from labml_site.read.prose import section_blocks
    src = ('class C:\n    r"""\n    A loop.\n\n    >>> for step in conf.loop:\n    >>>     ...\n\n'
           '    Arguments: n.\n    """\n    x = 1\n')
    (block,) = [b for s in parse_source(src, "a.py").sections for b in section_blocks(s)]
    # the original shows the `>>>` too (as one paragraph); the lines are kept here
    assert block.key == "<p> A loop.</p>\n<span translate=no>_^_0_^_</span><p>Arguments: n.</p>\n"
    (session,) = block.placeholders
    assert (session.kind, session.lang, session.line) == ("code_block", "pycon", 5)
    assert session.text == ">>> for step in conf.loop:\n>>>     ..."
    # inside a paragraph (no blank line before the prompt) it is text, as in the original
    assert _keys('"""\nText\n>>> x\n"""\n') == ["<p> Text &gt;&gt;&gt; x</p>\n"]
    # and `> ` quotes stay quotes
    assert _keys('"""\n> quoted\n"""\n') == ["<blockquote>\n<p> quoted</p>\n</blockquote>\n"]


def test_doctest_session_is_highlighted_with_its_prompts():
    from labml_site.typeset.page import analyse
    page = analyse("a.py", "a.html", '"""\nUse it:\n\n>>> f(1)\n2\n"""\n')
    (rendered,) = (ph for s in page.sections for b in s.blocks for ph in b.placeholders)
    assert rendered.startswith('<pre class="highlight code-block" data-lang="pycon"><code><span class="gp">&gt;&gt;&gt; </span>')
    assert "\n2</code></pre>" in rendered  # the output line, on its own line


def test_badges_inside_links_stay_inside_the_working_link():
    from labml_site.typeset.page import analyse
    page = analyse("a.py", "a.html", '"""\n# T\n\n[![Open In Colab](https://colab.example/badge.svg)](https://colab.example/nb)\n\n'
                   "![Logo](https://x.example/l.png)\n\n[![Local](fig.png)](https://x.example)\n\"\"\"\n")
    badge, outside, local = (ph for s in page.sections for b in s.blocks for ph in b.placeholders)
    assert badge == '<span class="outside-image">Open In Colab</span>'  # no link inside the link
    # alone: a link to the image, marked as its stand-in
    assert outside == '<a class="outside-image" href="https://x.example/l.png">Logo</a>'
    assert local.startswith('<img src="fig.png"')  # a local image inside a link stays an image


def test_blank_lines_before_a_docstrings_closing_quotes_add_no_trailing_space():
    src = 'def f():\n    """\n    Switch it,\n\n    in the configurations.\n\n    """\n    return 1\n'
    assert _keys(src) == ["<p> Switch it,</p>\n<p>in the configurations.</p>\n"]


def test_two_blank_lines_separate_blocks_like_one():
    src = '"""\n# T\n\n\nFirst we introduce.\n"""\n'
    assert _keys(src) == ["<h1>T</h1>\n<p>First we introduce.</p>\n"]


def test_a_link_target_may_hold_spaces_as_in_python_markdown():
    assert _keys('"""\n* [Feed-forward layers](.. / feed_forward.html)\n"""\n') == [
        '<ul><li><a href=".. / feed_forward.html">Feed-forward layers</a></li></ul>\n']


def test_check_reports_a_translation_found_by_case(tmp_path, capsys):
    from labml_site.cli.main import main
    (tmp_path / "src" / "rwkv").mkdir(parents=True)
    (tmp_path / "src" / "rwkv" / "__init__.py").write_text('"""\n# RWKV\n"""\n', "utf-8")
    (tmp_path / "tr" / "RWKV").mkdir(parents=True)
    (tmp_path / "tr" / "RWKV" / "__init__.zh.json").write_text('{"RWKV": "RWKV 模型"}', "utf-8")
    (tmp_path / "src" / "a.py").write_text('"""\n# A\n"""\n', "utf-8")  # a page whose file matches exactly
    (tmp_path / "tr" / "a.zh.json").write_text('{"A": "甲"}', "utf-8")
    main(["check", "--source", str(tmp_path / "src"), "--translations", str(tmp_path / "tr"), "--langs", "zh"])
    out = capsys.readouterr()
    assert "path-case" in out.out + out.err and "orphan-file" not in out.out + out.err


def test_the_build_reads_a_translation_found_by_case_and_says_so(tmp_path):
    from labml_site.builder.site import BuildConfig, build

    (tmp_path / "src" / "rwkv").mkdir(parents=True)
    (tmp_path / "src" / "rwkv" / "__init__.py").write_text('"""\n# RWKV\n"""\n', "utf-8")
    (tmp_path / "tr" / "RWKV").mkdir(parents=True)
    (tmp_path / "tr" / "RWKV" / "__init__.zh.json").write_text('{"RWKV": "RWKV 模型"}', "utf-8")
    config = BuildConfig(tmp_path / "src", tmp_path / "tr", tmp_path / "site", langs=("en", "zh"))
    result = build(config)
    assert [f.code for f in result.report.findings if f.code == "path-case"] == ["path-case"]
    assert "RWKV 模型" in (tmp_path / "site/zh/rwkv/index.html").read_text("utf-8")
    again = build(config)  # nothing changed: the same report
    assert again.stats.site_unchanged and "path-case" in [f.code for f in again.report.findings]
