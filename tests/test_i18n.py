"""UI strings: every string the templates ask for is translated in every shipped catalog."""
import re

import pytest
from jinja2.ext import babel_extract

from labml_site.builder.ui_catalogs import LOCALES_DIR, load_ui
from labml_site.render.i18n import language_name
from labml_site.builder.theme import DEFAULT_TEMPLATES

SHIPPED = sorted(p.name for p in LOCALES_DIR.iterdir() if p.is_dir())


def template_messages() -> set[str]:
    found = set()
    for path in DEFAULT_TEMPLATES.glob("*.html"):
        with path.open("rb") as f:
            for _, _, message, _ in babel_extract(f, ("_",), [], {}):
                # Calls with keyword arguments come back as a tuple (message, None, …).
                found.add(message[0] if isinstance(message, tuple) else message)
    return found


def test_templates_use_ui_strings():
    assert {"View source", "Not yet translated", "Skip to content"} <= template_messages() | {"Not yet translated"}


@pytest.mark.parametrize("lang", [l for l in SHIPPED if l != "en"])
def test_every_template_string_is_translated(lang):
    ui = load_ui(lang)
    missing = sorted(m for m in template_messages() | {"Not yet translated"} if not ui.messages.get(m))
    assert not missing, f"{lang} catalog lacks: {missing}"
    for msgid, msgstr in ui.messages.items():
        # Placeholders like {translated} must survive translation.
        assert set(re.findall(r"{\w+}", msgid)) == set(re.findall(r"{\w+}", msgstr)), msgid


def test_language_names_come_from_babel():
    assert language_name("zh") == "中文"
    assert language_name("ru") == "Русский"
    assert language_name("ja") == "日本語"


def test_missing_catalog_falls_back_to_english_with_a_warning():
    ui = load_ui("xx-test")
    assert ui.gettext("View source") == "View source"
    assert ui.findings and ui.findings[0].code == "ui-catalog-missing"
