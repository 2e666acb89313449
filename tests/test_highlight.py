import io
import tokenize

import pytest

from labml_site.typeset.highlight import highlight_block, highlight_inline, highlight_python_lines, render_code, stylesheet


def with_tokens(src: str) -> list[str]:
    return highlight_python_lines(src, list(tokenize.generate_tokens(io.StringIO(src).readline)))


# Pygments alone, and the tokenize-based path that pages use.
BOTH_PATHS = pytest.mark.parametrize("lines_of", [highlight_python_lines, with_tokens], ids=["pygments", "tokens"])


@BOTH_PATHS
def test_one_html_line_per_source_line_even_across_multiline_strings(lines_of):
    src = 'x = """a\n# not a comment\n"""\ny = 1  # trailing\n'
    lines = lines_of(src)
    assert len(lines) == src.count("\n") + 1
    # The middle line is still string-coloured: the file was lexed as a whole.
    assert 'class="s2"' in lines[1] and "# not a comment" in lines[1]
    assert 'class="c1"' in lines[3]


@BOTH_PATHS
def test_html_is_escaped(lines_of):
    lines = lines_of("a = b < c & d\n")
    assert "&lt;" in lines[0] and "&amp;" in lines[0] and "<c" not in lines[0]


def test_render_code_keeps_real_line_numbers():
    html = render_code(["a", "b"], 41)
    assert 'data-line="41"' in html and 'data-line="42"' in html


def test_inline_and_block_code():
    assert highlight_inline("torch.matmul(q, k)").startswith('<code class="highlight">')
    assert 'class="nb"' in highlight_block("print(1)", "python")
    # Unknown languages are shown plainly, escaped.
    assert highlight_block("<x>", "no-such-lang") == '<pre class="highlight code-block"><code>&lt;x&gt;</code></pre>'


def test_stylesheet_has_both_themes():
    css = stylesheet()
    assert ".highlight .k" in css and "prefers-color-scheme: dark" in css


def test_characters_python_lacks_are_not_flagged_as_errors():
    # Prose quotes shapes like `batch × seq`; the lexer's "error" token must not show as one.
    assert 'class="err"' not in highlight_inline("batch × seq")
    assert "×" in highlight_inline("batch × seq")
