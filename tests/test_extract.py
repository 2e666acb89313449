"""`extract`: creating and updating translation files, fuzzy suggestions, stale entries, stable
output, and the guarantee that no value a translator wrote is ever dropped."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labml_site.translate.extract import all_values, confirm, dumps, extract, similarity_text
from labml_site.translate.catalog import Catalog, catalog_path, fuzzy_path, stale_path

PAGE = "annotated_attention/mha"
SCORES = "<p>Compute the scores <span translate=no>_^_0_^_</span> for all queries at once.</p>\n"
SCORES_ZH = "<p>一次性为所有查询计算分数<span translate=no>_^_0_^_</span>。</p>\n"
SCORES_EDITED = (
    "<p>Compute the attention scores <span translate=no>_^_0_^_</span> for all queries at once.</p>\n"
)
SOFTMAX = "<p>Softmax along the key axis <span translate=no>_^_0_^_</span></p>\n"
SOFTMAX_ZH = "<p>沿键轴做 Softmax<span translate=no>_^_0_^_</span></p>\n"
TITLE = "Multi-head attention"
TITLE_ZH = "多头注意力"
UNRELATED = "<h2>Training loop</h2>\n<p>We train with Adam and a warm-up schedule.</p>\n"


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def main_file(root: Path, lang: str = "zh") -> Path:
    return catalog_path(root, PAGE, lang)


def test_new_language_gets_every_key_empty(tmp_path):
    result = extract({PAGE: [TITLE, SCORES, SOFTMAX]}, tmp_path, "ja")
    path = main_file(tmp_path, "ja")
    assert read(path) == {TITLE: "", SCORES: "", SOFTMAX: ""}
    assert result.changed_files == [str(path)]
    assert sorted(result.pages[0].added) == sorted([TITLE, SCORES, SOFTMAX])
    assert not fuzzy_path(path).exists() and not stale_path(path).exists()
    catalog = Catalog.load(path, "ja")
    assert {catalog.verdict(k).state for k in (TITLE, SCORES, SOFTMAX)} == {"untranslated"}


def test_output_format_is_stable_utf8_sorted_indent_2(tmp_path):
    path = main_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({TITLE: TITLE_ZH, SCORES: SCORES_ZH}, indent=1), encoding="utf-8")
    extract({PAGE: [TITLE, SCORES, SOFTMAX]}, tmp_path, "zh")
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(
        {SCORES: SCORES_ZH, SOFTMAX: "", TITLE: TITLE_ZH}, ensure_ascii=False, indent=2
    ) + "\n"
    assert "\\u" not in text and TITLE_ZH in text
    assert list(read(path)) == sorted(read(path))


def test_running_twice_changes_nothing(tmp_path):
    extract({PAGE: [TITLE, SCORES]}, tmp_path, "zh")
    path = main_file(tmp_path)
    path.write_text(dumps({TITLE: TITLE_ZH, SCORES: SCORES_ZH}), encoding="utf-8")
    extract({PAGE: [TITLE, SCORES_EDITED, SOFTMAX]}, tmp_path, "zh")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.json")}
    second = extract({PAGE: [TITLE, SCORES_EDITED, SOFTMAX]}, tmp_path, "zh")
    assert second.changed_files == []
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.json")} == before


def test_changed_english_gets_a_fuzzy_suggestion_and_the_old_entry_goes_stale(tmp_path):
    path = main_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(dumps({TITLE: TITLE_ZH, SCORES: SCORES_ZH}), encoding="utf-8")
    result = extract({PAGE: [TITLE, SCORES_EDITED]}, tmp_path, "zh")
    assert read(path) == {TITLE: TITLE_ZH, SCORES_EDITED: ""}
    assert read(fuzzy_path(path)) == {SCORES_EDITED: {"from": SCORES, "suggestion": SCORES_ZH}}
    assert read(stale_path(path)) == {SCORES: [SCORES_ZH]}
    assert result.pages[0].fuzzy == [SCORES_EDITED] and result.pages[0].stale == [SCORES]
    catalog = Catalog.load(path, "zh")
    assert catalog.verdict(SCORES_EDITED).state == "fuzzy"  # suggested, never rendered
    assert catalog.verdict(SCORES_EDITED).html is None


def test_unrelated_new_text_gets_no_suggestion(tmp_path):
    path = main_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(dumps({SCORES: SCORES_ZH}), encoding="utf-8")
    extract({PAGE: [UNRELATED]}, tmp_path, "zh")
    assert read(path) == {UNRELATED: ""}
    assert not fuzzy_path(path).exists()
    assert read(stale_path(path)) == {SCORES: [SCORES_ZH]}


def test_similarity_ignores_tags_and_placeholder_numbers():
    a = "<p>Scale by <span translate=no>_^_3_^_</span> first</p>"
    b = "<h3>Scale by <span translate=no>_^_0_^_</span> first</h3>"
    assert similarity_text(a) == similarity_text(b) == "scale by \u2022 first"


def test_english_that_comes_back_gets_its_translation_back(tmp_path):
    path = main_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(dumps({TITLE: TITLE_ZH, SOFTMAX: SOFTMAX_ZH}), encoding="utf-8")
    extract({PAGE: [TITLE]}, tmp_path, "zh")
    assert read(stale_path(path)) == {SOFTMAX: [SOFTMAX_ZH]}
    result = extract({PAGE: [TITLE, SOFTMAX]}, tmp_path, "zh")
    assert read(path) == {TITLE: TITLE_ZH, SOFTMAX: SOFTMAX_ZH}
    assert result.pages[0].revived == [SOFTMAX]
    assert not stale_path(path).exists()


def test_a_person_confirms_by_writing_the_main_value(tmp_path):
    path = main_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(dumps({SCORES: SCORES_ZH}), encoding="utf-8")
    extract({PAGE: [SCORES_EDITED]}, tmp_path, "zh")
    reviewed = SCORES_ZH.replace("分数", "注意力分数")
    path.write_text(dumps({SCORES_EDITED: reviewed}), encoding="utf-8")
    extract({PAGE: [SCORES_EDITED]}, tmp_path, "zh")
    assert read(path) == {SCORES_EDITED: reviewed}
    assert not fuzzy_path(path).exists()  # the suggestion is done with
    assert read(stale_path(path)) == {SCORES: [SCORES_ZH]}  # the old translation is still kept
    assert Catalog.load(path, "zh").verdict(SCORES_EDITED).state == "translated"


def test_confirm_moves_reviewed_suggestions_into_the_main_file(tmp_path):
    path = main_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(dumps({SCORES: SCORES_ZH, SOFTMAX: SOFTMAX_ZH}), encoding="utf-8")
    softmax_edited = SOFTMAX.replace("key axis", "axis of keys")
    extract({PAGE: [SCORES_EDITED, softmax_edited]}, tmp_path, "zh")
    assert set(read(fuzzy_path(path))) == {SCORES_EDITED, softmax_edited}
    assert confirm(tmp_path, PAGE, "zh", containing="axis of keys") == [softmax_edited]
    assert read(path)[softmax_edited] == SOFTMAX_ZH and read(path)[SCORES_EDITED] == ""
    assert set(read(fuzzy_path(path))) == {SCORES_EDITED}
    assert confirm(tmp_path, PAGE, "zh") == [SCORES_EDITED]
    assert not fuzzy_path(path).exists()
    assert extract({PAGE: [SCORES_EDITED, softmax_edited]}, tmp_path, "zh").changed_files == []


def test_a_suggestion_edited_in_place_is_not_lost(tmp_path):
    path = main_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(dumps({SCORES: SCORES_ZH}), encoding="utf-8")
    extract({PAGE: [SCORES_EDITED]}, tmp_path, "zh")
    edited = SCORES_ZH.replace("一次性", "同时")
    fuzzy_path(path).write_text(
        dumps({SCORES_EDITED: {"from": SCORES, "suggestion": edited}}), encoding="utf-8"
    )
    extract({PAGE: [TITLE]}, tmp_path, "zh")  # the block disappears before anyone confirms
    assert edited in all_values(path) and SCORES_ZH in all_values(path)


def test_older_style_files_are_read_and_rewritten_losslessly(tmp_path):
    path = main_file(tmp_path)
    path.parent.mkdir(parents=True)
    original = {TITLE: TITLE_ZH, SCORES: SCORES_ZH}
    path.write_text(json.dumps(original, indent=1), encoding="ascii")  # \u escapes, indent 1
    result = extract({PAGE: [TITLE, SCORES]}, tmp_path, "zh")
    assert result.findings == [] and read(path) == original
    assert "\\u" not in path.read_text(encoding="utf-8")


def test_bom_is_dropped_values_kept(tmp_path):
    path = main_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xef\xbb\xbf" + dumps({TITLE: TITLE_ZH}).encode())
    extract({PAGE: [TITLE]}, tmp_path, "zh")
    assert not path.read_bytes().startswith(b"\xef\xbb\xbf") and read(path) == {TITLE: TITLE_ZH}


def test_unreadable_files_are_left_alone(tmp_path):
    path = main_file(tmp_path)
    path.parent.mkdir(parents=True)
    cases = [
        '{\n "a": "甲",\n "b": "乙",\n}',  # syntax
        '{"a": "甲", "a": "乙"}',  # duplicate with different values: which one is right?
        '{"a": ["甲"]}',  # not a string
    ]
    for text in cases:
        path.write_text(text, encoding="utf-8")
        result = extract({PAGE: ["b"]}, tmp_path, "zh")
        assert path.read_text(encoding="utf-8") == text
        assert result.pages[0].skipped and result.has_errors
        assert result.findings[-1].code == "extract-skipped"
    path.write_bytes(b'{"a": "\xff"}')
    assert extract({PAGE: ["b"]}, tmp_path, "zh").pages[0].skipped
    assert path.read_bytes() == b'{"a": "\xff"}'


def test_broken_sidecar_blocks_the_page_too(tmp_path):
    path = main_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(dumps({TITLE: TITLE_ZH}), encoding="utf-8")
    stale_path(path).write_text('{"old": {"not": "a list"}}', encoding="utf-8")
    result = extract({PAGE: []}, tmp_path, "zh")
    assert result.pages[0].skipped and read(path) == {TITLE: TITLE_ZH}
    assert "stale-malformed" in [f.code for f in result.findings]


def test_escaped_lone_surrogate_survives_a_rewrite(tmp_path):
    path = main_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('{"t": "a\\udc80b"}', encoding="utf-8")
    extract({PAGE: ["t", TITLE]}, tmp_path, "zh")
    assert read(path) == {"t": "a\udc80b", TITLE: ""}
    assert Catalog.load(path, "zh").verdict("t").state == "invalid"


def test_pages_not_listed_are_not_touched(tmp_path):
    other = catalog_path(tmp_path, "other/page", "zh")
    other.parent.mkdir(parents=True)
    other.write_text('{"x":"y"}', encoding="utf-8")
    extract({PAGE: [TITLE]}, tmp_path, "zh")
    assert other.read_text(encoding="utf-8") == '{"x":"y"}'


def test_page_without_keys_and_without_file_creates_nothing(tmp_path):
    assert extract({PAGE: []}, tmp_path, "zh").changed_files == []
    assert list(tmp_path.rglob("*")) == []


# --------------------------------------------------------------------------------------------
# Property: nothing a translator wrote is ever lost

ENGLISH_POOL = [
    SCORES, SCORES_EDITED, SOFTMAX, SOFTMAX.replace("key axis", "axis of keys"), TITLE,
    UNRELATED, "<p>Dropout</p>\n", "<p>Dropout after softmax</p>\n",
]
translations = st.text(alphabet="注意力分数 abc<>/p_^0", min_size=0, max_size=12)
steps = st.lists(
    st.tuples(
        st.sets(st.sampled_from(ENGLISH_POOL), max_size=len(ENGLISH_POOL)),  # keys the page has
        st.dictionaries(st.sampled_from(ENGLISH_POOL), translations, max_size=4),  # edits
        st.booleans(),  # confirm all suggestions after this run?
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_extract_never_drops_a_value_and_is_idempotent(sequence):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = main_file(root)
        for keys, edits, do_confirm in sequence:
            if edits:  # a translator edits the main file between runs
                current = read(path) if path.exists() else {}
                current.update(edits)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(dumps(current), encoding="utf-8")
            before = set(all_values(path))
            result = extract({PAGE: sorted(keys)}, root, "zh")
            assert not result.has_errors
            after = set(all_values(path))
            assert before <= after, f"lost: {before - after}"
            if path.exists() or keys:
                assert set(read(path)) == set(keys)  # the main file holds exactly the page's keys
            snapshot = {p: p.read_bytes() for p in root.rglob("*.json")}
            assert extract({PAGE: sorted(keys)}, root, "zh").changed_files == []
            assert {p: p.read_bytes() for p in root.rglob("*.json")} == snapshot
            if do_confirm:
                confirm(root, PAGE, "zh")
                assert before <= set(all_values(path))
