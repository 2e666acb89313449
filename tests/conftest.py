"""Shared fixtures: a small source tree in the real format, and a built copy of the real site."""
from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# Builds keep their cache in the user's cache folder; the tests' builds (and the builds of the
# commands they run) keep theirs in a folder of this run's own, deleted when the run ends.
if "LABML_SITE_CACHE_DIR" not in os.environ:
    os.environ["LABML_SITE_CACHE_DIR"] = tempfile.mkdtemp(prefix="labml-site-test-cache-")
    atexit.register(shutil.rmtree, os.environ["LABML_SITE_CACHE_DIR"], True)

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]


def git(root: Path, *args: str) -> None:
    """Run git in `root` as a throwaway author (no user config, no network), failing loudly."""
    import subprocess

    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, timeout=60,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(root), "PATH": "/usr/bin:/bin"})


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
    from labml_site.builder.site import BuildConfig, build

    out = tmp_path_factory.mktemp("site") / "site"
    result = build(BuildConfig(ROOT / "source", ROOT / "translations", out, markdown=True))
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


# The tutorial's tests need torch, which only the `tutorial` extra installs (the builder needs
# neither torch nor numpy). Without it, a test module that imports torch or the tutorial's package
# at its top level is reported as skipped, with the reason, instead of failing to import.
_TUTORIAL_IMPORTS = {"torch", "numpy", "annotated_attention", "tutorial_helpers"}


class _NeedsTorch(pytest.Module):
    def collect(self):
        pytest.skip('needs torch, the tutorial\'s extra: pip install torch==2.13.0 && pip install -e ".[tutorial,test]"')


def _imports_the_tutorial(path: Path) -> bool:
    import ast

    for node in ast.parse(path.read_bytes()).body:
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
        if any(name.split(".")[0] in _TUTORIAL_IMPORTS for name in names):
            return True
    return False


def pytest_pyfunc_call(pyfuncitem):
    """A test marked `own_process` needs a process with no other thread (the builder forks its
    workers only from such a process, so that they inherit what the test patched). Earlier tests
    leave threads behind (the browser tests' server and Playwright's loop), so when this process
    has any, the test runs again in a fresh interpreter of its own and passes or fails as it does
    there."""
    import subprocess
    import threading

    if pyfuncitem.get_closest_marker("own_process") is None or threading.active_count() == 1:
        return None
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           pyfuncitem.nodeid], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{pyfuncitem.nodeid}, run in a process of its own:\n{done.stdout[-4000:]}{done.stderr[-2000:]}"
    return True


def pytest_pycollect_makemodule(module_path, parent):
    import importlib.util

    if importlib.util.find_spec("torch") is None and _imports_the_tutorial(Path(module_path)):
        return _NeedsTorch.from_parent(parent, path=module_path)
    return None


# tests/katex_coverage.py is a helper the KaTeX coverage test and benchmarks/math_corpus.py share.
sys.path.insert(0, str(Path(__file__).resolve().parent))
