"""Which SVG labels are translation keys (render/figures.py): not those without a letter, not
those inside `translate="no"` (inherited, as in HTML), and the published figure translates exactly
the keys."""
from labml_site.render.figures import figure_keys, image_alts, svg_labels, themed_svg

SVG = ('<svg xmlns="http://www.w3.org/2000/svg"><title>Weights</title><desc>Rows are queries.</desc>'
       '<!-- <text>commented out</text> --><text>keys</text><text>0.25</text><text>(</text>'
       '<text>+</text><text>−1.5%</text><text>␣</text>'
       '<g translate="no"><text>x</text><text>def f(</text><text translate="yes">step 0</text>'
       '<g><text>nested</text></g></g><text translate="no">self</text><text TRANSLATE = \'no\'>y</text>'
       '<text>after<tspan translate="no">tok</tspan></text><text>masked: weight 0</text></svg>')


def test_only_labels_with_letters_outside_translate_no_are_keys():
    assert svg_labels(SVG) == ["Weights", "Rows are queries.", "keys", "step 0", "after", "masked: weight 0"]


def test_published_figure_translates_the_keys_and_leaves_the_rest():
    out = themed_svg(SVG, lambda label: f"[{label}]")
    for translated in ("[Weights]", "[keys]", "[step 0]", "[after]", "[masked: weight 0]"):
        assert translated in out
    for kept in (">x<", ">def f(<", ">nested<", ">self<", ">y<", ">tok<", ">0.25<", ">(<", ">␣<", "<text>commented out</text>"):
        assert kept in out, kept
    assert "[x]" not in out and "[tok]" not in out and "[commented out]" not in out


def test_alt_texts_without_letters_are_no_keys():
    assert image_alts(['<img alt="1 + 2" src="a.svg">', '<img alt="A map" src="b.svg">']) == ["A map"]
    assert figure_keys(['<img alt="3.5" src="x.svg">'], ["x.svg"], lambda a: svg_labels(SVG))[:2] == ["Weights", "Rows are queries."]
