from labml_site.render.localize import plain_text, valid_lists


def test_returns_paragraph_moves_out_of_the_param_list():
    key_html = "<ul><li><code>a</code>  the thing </li>\n<p><em>Returns</em>  the result</p></ul>\n"
    assert valid_lists(key_html) == "<ul><li><code>a</code>  the thing </li>\n</ul><p><em>Returns</em>  the result</p>\n"


def test_list_holding_only_a_returns_paragraph_disappears():
    assert valid_lists("<h3>Load</h3>\n<ul><p><em>Returns</em>  it</p></ul>\n") == "<h3>Load</h3>\n<p><em>Returns</em>  it</p>\n"


def test_other_lists_are_untouched():
    html = "<ul><li>a</li>\n<li>b</li></ul>\n<p>after</p>\n"
    assert valid_lists(html) == html


def test_plain_text_drops_markup_and_entities():
    assert plain_text("A &amp; <b>B</b>") == "A & B"
