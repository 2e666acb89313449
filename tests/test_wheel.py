"""The builder as a newcomer installs it: the wheel, in a fresh virtual environment without torch,
builds a tree of their own from a folder that is not a checkout, with the theme, the math font and
translations working. (The wheel's dependencies come from the package index, as for any user.)"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow

FOREIGN = '''"""
---
title: Energy
summary: Kinetic energy in one line.
---

# Energy

Energy grows with the square of speed: $E = \\frac{1}{2} m v^2$.

$$p = m v$$
"""


def kinetic(m, v):
    """
    Energy of mass `m` at speed `v`.
    """
    # Energy, halved
    return 0.5 * m * v ** 2
'''


def run(cmd: list[str], cwd: Path, check: bool = True, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check:
        assert p.returncode == 0, f"{cmd}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


def _can_build_wheels_here() -> bool:
    """setuptools ≥ 70.1 builds wheels itself; older ones need the `wheel` package."""
    if importlib.util.find_spec("setuptools") is None:
        return False
    from importlib.metadata import version

    major, minor = (int(x) for x in version("setuptools").split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)]
    if _can_build_wheels_here():
        cmd.insert(5, "--no-build-isolation")  # this environment has the build backend: no download
    run(cmd, cwd=out)
    (path,) = out.glob("labml_site-*.whl")
    return path


def test_wheel_holds_the_whole_theme_and_every_catalog(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in ("theme", "locales", "schemas"):
        files = [p for p in (ROOT / "labml_site" / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        assert files
        missing = [str(p.relative_to(ROOT)) for p in files if p.relative_to(ROOT).as_posix() not in names]
        assert not missing, f"not in the wheel: {missing}"
    assert "labml_site/theme/static/fonts/latinmodern-math.woff2" in names
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    requires = [l for l in zipfile.ZipFile(wheel).read(metadata).decode().splitlines() if l.startswith("Requires-Dist:")]
    plain = [r for r in requires if "extra ==" not in r]
    assert not [r for r in plain if "torch" in r or "numpy" in r], plain
    assert any("torch" in r and 'extra == "tutorial"' in r for r in requires)


def test_fresh_venv_without_torch_builds_a_foreign_tree(wheel, tmp_path):
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    py = bin_dir / "python"
    run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)], cwd=tmp_path)

    # Nothing of the checkout is reachable: an empty folder elsewhere, the installed package only.
    work = tmp_path / "work"
    (work / "foreign/physics").mkdir(parents=True)
    (work / "foreign/physics/energy.py").write_text(FOREIGN, encoding="utf-8")
    (work / "tr").mkdir()
    labml_site = bin_dir / "labml-site"
    where = run([str(py), "-c", "import labml_site; print(labml_site.__file__)"], cwd=work).stdout.strip()
    assert str(venv) in where and str(ROOT) not in where

    # The translator's way: extract the keys, translate them.
    run([str(labml_site), "extract", "--source", "foreign", "--translations", "tr", "--lang", "zh"], cwd=work)
    path = work / "tr/physics/energy.zh.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data and all(v == "" for v in data.values())
    translated = {k: k.replace("Energy", "能量") for k in data if "Energy" in k}
    assert translated
    path.write_text(json.dumps({**data, **translated}, ensure_ascii=False, indent=2), encoding="utf-8")

    p = run([str(labml_site), "--source", "foreign", "--translations", "tr", "--out", "out", "--langs", "en,zh"], cwd=work)
    assert "0 errors" in p.stderr, p.stderr
    out = work / "out"
    en = (out / "physics/energy.html").read_text(encoding="utf-8")
    zh = (out / "zh/physics/energy.html").read_text(encoding="utf-8")
    assert "<math" in en and "<mfrac>" in en and 'display="block"' in en  # MathML, inline and display
    assert "能量" in zh and "<math" in zh
    assert (out / "static/style.css").stat().st_size > 1000
    assert (out / "static/math.css").exists()
    font = out / "static/fonts/latinmodern-math.woff2"
    assert font.read_bytes()[:4] == b"wOF2"
    assert "latinmodern-math.woff2" in (out / "static/math.css").read_text(encoding="utf-8") + (out / "static/style.css").read_text(encoding="utf-8")
    # The UI catalogs came with the package: the Chinese page's interface is in Chinese.
    assert "查看源代码" in zh

    # --templates still replaces the theme.
    installed_theme = Path(where).parent / "theme"
    shutil.copytree(installed_theme, work / "mytheme")
    base = work / "mytheme/base.html"
    html = base.read_text(encoding="utf-8")
    assert "</body>" in html
    base.write_text(html.replace("</body>", "<!-- my own theme --></body>"), encoding="utf-8")
    run([str(labml_site), "--source", "foreign", "--translations", "tr", "--out", "out2", "--langs", "en,zh",
         "--templates", "mytheme", "-q"], cwd=work)
    assert "my own theme" in (work / "out2/physics/energy.html").read_text(encoding="utf-8")

    # No torch (nor numpy) was installed for the builder.
    assert run([str(py), "-m", "pip", "show", "torch"], cwd=work, check=False).returncode != 0
    assert run([str(py), "-m", "pip", "show", "numpy"], cwd=work, check=False).returncode != 0


def test_every_package_of_the_builder_is_in_the_wheel():
    """pyproject lists the packages by name: a new subpackage left off is missing from the wheel
    (render/outputs was, and an installed builder failed on its first import)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "labml_site").rglob("__init__.py")}
    assert found - listed == set()
