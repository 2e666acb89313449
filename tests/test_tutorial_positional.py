"""The positional-encoding page: its figure is drawn from `sinusoidal_encoding` and committed as
drawn, and the page's claims hold: the encoding of position p + t is a rotation of that of
position p that depends on t only, the encoding's mean square is 1/2, and the embedding sizes the
page gives for the √d_model discussion.

Mutation checks (planted by hand, then reverted; each fails a test below): the map's rows drawn
from the next feature (cells off by one row); `frequency` with `+ two_i` (the rotation test:
angles grow, and the figure differs); `embedding_and_encoding_sizes` scaling by `d_model` instead
of its square root.
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

torch = pytest.importorskip("torch", reason="the tutorial's code needs torch")

from annotated_attention import figures, positional_encoding as pe_page  # noqa: E402
from annotated_attention.positional_encoding import sinusoidal_encoding  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"


def test_committed_figure_is_what_the_code_draws():
    committed = (figures.FIGURE_DIR / "positional_encoding.svg").read_text(encoding="utf-8")
    assert committed == pe_page.encoding_svg()
    assert figures.render_all()["positional_encoding.svg"] == committed


def test_the_pages_shows_the_figure_with_alt_text_and_caption():
    page = (figures.FIGURE_DIR.parent / "positional_encoding.py").read_text(encoding="utf-8")
    image = re.search(r"!\[([^\]]+)\]\(figures/positional_encoding\.svg\)\n\n\*(.+?)\*\n", page, re.S)
    assert image, "the figure, with an alt text and a caption below it"
    assert "heat map" in image.group(1) and "d_{model} = 32" in image.group(2)


def test_figure_cells_are_the_encodings_values():
    max_len, d_model = 64, 32
    table = sinusoidal_encoding(max_len, d_model)
    root = ET.fromstring(pe_page.encoding_svg(max_len, d_model))
    # The map's cells: rectangles 6 high from y = 44; a rectangle may cover a run of positions.
    drawn = {}
    for rect in root.iter(f"{SVG}rect"):
        if rect.get("height") != "6":
            continue
        f = (int(rect.get("y")) - 44) // 6
        first = (int(rect.get("x")) - 64) // 8
        for p in range(first, first + int(rect.get("width")) // 8):
            drawn[p, f] = rect.get("fill")
    assert len(drawn) == max_len * d_model
    for (p, f), fill in drawn.items():
        assert fill == pe_page.diverging_colour(round(table[p, f].item() * 20) / 20), (p, f)
    # The colour scale's ends and middle
    assert pe_page.diverging_colour(-1) == "#2166ac"
    assert pe_page.diverging_colour(0) == "#f7f7f7"
    assert pe_page.diverging_colour(1) == "#b2182b"
    # The curves are the features the legend names, point by point
    curves = [c for c in root.iter(f"{SVG}polyline")]
    assert len(curves) == len(pe_page.CURVES)
    for curve, (f, _) in zip(curves, pe_page.CURVES):
        ys = [float(xy.split(",")[1]) for xy in curve.get("points").split()]
        # The plot starts 40 below the map (44 + 32 · 6) and is 120 high: y = 276 + 60 (1 - v)
        values = [1 - (y - 276) / 60 for y in ys]
        assert values == pytest.approx(table[:, f].tolist(), abs=0.02)


def test_offset_is_a_rotation_that_depends_on_the_offset_only():
    """PE(p + t) = R(t) PE(p) with R(t) a block-diagonal rotation, the same for every p: the linear
    relation the paper's authors hoped attention would use."""
    d_model, n = 16, 200
    table = sinusoidal_encoding(n, d_model).double()
    frequency = torch.exp(-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model * math.log(10000.0))
    for t in (1, 5, 37):
        rotation = torch.zeros(d_model, d_model, dtype=torch.float64)
        for i, w in enumerate(frequency.tolist()):
            c, s = math.cos(w * t), math.sin(w * t)
            # (sin(a + b), cos(a + b)) = [[cos b, sin b], [-sin b, cos b]] (sin a, cos a)
            rotation[2 * i:2 * i + 2, 2 * i:2 * i + 2] = torch.tensor([[c, s], [-s, c]])
        torch.testing.assert_close(table[:n - t] @ rotation.T, table[t:], atol=1e-5, rtol=0)
        torch.testing.assert_close(rotation @ rotation.T, torch.eye(d_model, dtype=torch.float64))


def test_the_sizes_the_page_gives_for_the_sqrt_d_model_scaling():
    sizes = pe_page.embedding_and_encoding_sizes(d_model=64)
    # Exactly 1/2: each sine/cosine pair has a squared norm of 1
    assert sizes["encoding"] == pytest.approx(0.5, abs=1e-6)
    assert sizes["embedding"] == pytest.approx(1.0, abs=0.05)
    # "about 0.005 for d_model = 64": 1 / (3 · 64) = 0.0052
    assert sizes["tied"] == pytest.approx(1 / (3 * 64), rel=0.05)
    assert round(sizes["tied"], 3) == 0.005
    assert sizes["tied_scaled"] == pytest.approx(1 / 3, rel=0.05)
    # The page's conclusion: unscaled, the position would drown a tied embedding; ours is not tied
    assert sizes["encoding"] / sizes["tied"] > 50
    assert 0.25 < sizes["encoding"] / sizes["embedding"] < 1


def test_sizes_leave_the_callers_random_numbers_alone():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    pe_page.embedding_and_encoding_sizes()
    assert torch.equal(torch.rand(3), expected)


def test_the_model_really_adds_untied_unscaled_embeddings():
    from annotated_attention.transformer import DecoderOnlyTransformer, ModelConfig
    cfg = ModelConfig(vocab_size=20, d_model=16, heads=2, layers=1, d_ff=32, max_len=8, dropout=0.0)
    model = DecoderOnlyTransformer(cfg).eval()
    assert model.embed.weight.data_ptr() != model.head.weight.data_ptr()
    tokens = torch.tensor([[3, 1, 4, 1, 5]])
    expected = model.embed(tokens) + sinusoidal_encoding(8, 16)[:5]
    torch.testing.assert_close(model.pos(model.embed(tokens)), expected)
