"""Shared fixtures: a small source tree in the real format, and a built copy of the real site."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]


# A small page in the source format, shared by the build, cache and search tests.
TOY_PAGE = '''"""
---
title: Scaled scores
summary: How scores are scaled.
---

# Scaled scores

We divide by $\\sqrt{d_k}$ before the softmax.
"""

import math


def scale(scores, d_k):
    """
    Scale `scores` by $\\frac{1}{\\sqrt{d_k}}$.
    """
    # Divide once
    return scores / math.sqrt(d_k)
'''


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def write_json(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The project's own site (source/ + translations/), built once for the session."""
    from labml_site.build.site import BuildConfig, build

    out = tmp_path_factory.mktemp("site") / "site"
    result = build(BuildConfig(ROOT / "source", ROOT / "translations", out))
    errors = [f.format() for f in result.report.errors]
    assert not errors, "\n".join(errors)
    return out


def chromium_available() -> bool:
    return CHROMIUM.exists()


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium through Playwright, one per test module (Playwright's sync API allows only
    one running instance at a time). In CI it must be there: .ci/run installs it."""
    import os

    if not chromium_available():
        if os.environ.get("CI"):
            pytest.fail("CI must have /usr/bin/chromium: .ci/run installs it")
        pytest.skip("no /usr/bin/chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


# tests/katex_coverage.py is a helper the KaTeX coverage test and benchmarks/math_corpus.py share.
sys.path.insert(0, str(Path(__file__).resolve().parent))
