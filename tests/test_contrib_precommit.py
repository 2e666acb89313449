"""`.pre-commit-hooks.yaml`: `pre-commit try-repo` on a fixture project, offline (the hook runs
the installed labml-site, so pre-commit installs nothing): a good staged file passes, a bad one
fails with the check's message, and a file outside the hook's pattern is not checked."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from workbench_fixture import HEADING, HEADING_ZH, SCALE, make_project

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _pre_commit() -> str:
    found = shutil.which("pre-commit", path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have pre-commit: the test extra installs it")
        pytest.skip("no pre-commit (pip install -e '.[test]')")
    return found


def _env(home: Path) -> dict:
    return {
        "PATH": f"{BIN}{os.pathsep}/usr/bin:/bin",  # labml-site from this environment, git from the system
        "HOME": str(home), "PRE_COMMIT_HOME": str(home / "pre-commit-cache"),
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
        # offline: any attempt to reach a package index fails at once instead of being quietly fine
        "PIP_NO_INDEX": "1", "PIP_INDEX_URL": "http://127.0.0.1:9/", "no_proxy": "*",
    }


def _git(cwd: Path, env: dict, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=60)


@pytest.fixture()
def setup(tmp_path):
    env = _env(tmp_path)
    # the hook repository: this checkout's hook file, committed (try-repo clones a repository)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", hooks / ".pre-commit-hooks.yaml")
    _git(hooks, env, "init", "-q", "-b", "main")
    _git(hooks, env, "add", "-A")
    _git(hooks, env, "commit", "-q", "-m", "hooks")
    # a translator's project, with source/ and translations/ as the hook expects
    project = tmp_path / "project"
    project.mkdir()
    make_project(project)
    (project / "src").rename(project / "source")
    (project / "tr").rename(project / "translations")
    (project / "package.json").write_text('{"not": "a translation"}', encoding="utf-8")
    _git(project, env, "init", "-q", "-b", "main")
    _git(project, env, "add", "-A")
    _git(project, env, "commit", "-q", "-m", "base")
    return hooks, project, env


def _stage(project: Path, env: dict, value: str) -> None:
    path = project / "translations/tut/page.zh.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data[HEADING] = HEADING_ZH
    data[SCALE] = value
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    _git(project, env, "add", "translations/tut/page.zh.json")


def _try_repo(hooks: Path, project: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([_pre_commit(), "try-repo", str(hooks), "labml-site-check"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_hook_file_runs_the_installed_check():
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "labml-site-check" and hook["language"] == "system"
    assert hook["entry"].split()[:2] == ["labml-site", "check"]


def test_a_good_staged_file_passes(setup):
    hooks, project, env = setup
    _stage(project, env, "")  # one block translated, one left for later
    done = _try_repo(hooks, project, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "check translations (labml-site)" in done.stdout and "Passed" in done.stdout


def test_a_bad_staged_file_fails_with_the_checks_message(setup):
    hooks, project, env = setup
    _stage(project, env, "<p> 缩放 </p>\n")  # placeholders missing
    done = _try_repo(hooks, project, env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Failed" in done.stdout and "placeholder-missing" in done.stdout
    assert "translations/tut/page.zh.json:" in done.stdout


def test_other_json_files_are_not_checked(setup):
    hooks, project, env = setup
    (project / "package.json").write_text('{"changed": true}', encoding="utf-8")
    _git(project, env, "add", "package.json")
    done = _try_repo(hooks, project, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(no files to check)Skipped" in done.stdout.replace(".", "")
