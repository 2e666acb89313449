"""The contribution loop's CI (.github/workflows/): actionlint passes on both workflows, the
translation workflow treats a pull request as untrusted, and its one step, `labml-site pr-check`,
run here on a fixture branch with one good and one bad change, annotates the bad one only and
writes a report of both."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from workbench_fixture import HEADING, HEADING_ZH, SCALE, make_project
from conftest import git

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    found = shutil.which(name, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have {name}: the test extra installs it")
        pytest.skip(f"no {name} (pip install -e '.[test]')")
    return found


def _workflow(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def _on(workflow: dict) -> dict:
    return workflow.get("on", workflow.get(True))  # (YAML 1.1 reads a bare `on` as true)


def test_actionlint_passes_on_both_workflows():
    names = sorted(p.name for p in WORKFLOWS.glob("*.yml"))
    assert names == ["publish.yml", "translations.yml"]
    done = subprocess.run([_tool("actionlint"), "-no-color", *(str(WORKFLOWS / n) for n in names)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_sees_a_mistake(tmp_path):
    """The linter is really run on the files: an unknown expression context fails it."""
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - run: echo ${{ github.event.pull_request.title }}\n      - run: echo ${{ nosuch.thing }}\n")
    done = subprocess.run([_tool("actionlint"), "-no-color", str(bad)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 1 and "nosuch" in done.stdout


def test_the_translation_workflow_treats_the_pull_request_as_untrusted():
    text = (WORKFLOWS / "translations.yml").read_text(encoding="utf-8")
    wf = _workflow("translations.yml")
    assert set(_on(wf)) == {"pull_request"}  # never pull_request_target
    assert "translations/**" in _on(wf)["pull_request"]["paths"]
    assert wf["permissions"] == {"contents": "read"}
    assert "secrets." not in text and "pull_request_target" not in text.split("#")[0]
    (job,) = wf["jobs"].values()
    assert "permissions" not in job  # the workflow's read-only permissions hold for it
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False and checkout["with"]["fetch-depth"] == 0
    runs = [s["run"] for s in job["steps"] if "run" in s]
    assert "python -m pip install ." in runs  # the builder alone: no torch
    assert not any("torch" in r or "[tutorial" in r for r in runs)
    # no expression is pasted into a script: the base ref comes in through the environment
    assert not any("${{" in r for r in runs)
    upload = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == "translation-review.html" and upload["if"] == "${{ !cancelled() }}"


def _pr_check_step() -> list[str]:
    (job,) = _workflow("translations.yml")["jobs"].values()
    (step,) = [s for s in job["steps"] if "pr-check" in s.get("run", "")]
    return shlex.split(step["run"].replace('"origin/$BASE_REF"', "origin/main"))


def test_the_publish_workflow_builds_with_the_site_url_and_deploys_to_pages():
    wf = _workflow("publish.yml")
    assert _on(wf)["push"]["branches"] == ["main"]
    assert wf["permissions"] == {"contents": "read"}
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    (run,) = [s["run"] for s in build["steps"] if "labml-site" in s.get("run", "")]
    assert "--site-url" in run and "--out site" in run
    assert any(s.get("uses", "").startswith("actions/upload-pages-artifact@") for s in build["steps"])
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"} and deploy["needs"] == "build"
    assert deploy["environment"]["name"] == "github-pages"


# ---------------------------------------------------------------------------------------------
# The local equivalent, on a fixture branch

BAD = "<p> 缩放 by 什么 </p>\n"  # both placeholders missing: an error




@pytest.fixture()
def branch(tmp_path):
    """A project whose `main` passes, and a branch `translate` with one good and one bad change."""
    if shutil.which("git") is None:
        pytest.skip("needs git")
    # (the folders the workflow's command uses by default: source/ and translations/)
    make_project(tmp_path)
    (tmp_path / "src").rename(tmp_path / "source")
    (tmp_path / "tr").rename(tmp_path / "translations")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    # as actions/checkout (fetch-depth: 0) leaves a pull request's clone: the base as origin/main
    git(tmp_path, "update-ref", "refs/remotes/origin/main", "main")
    git(tmp_path, "checkout", "-q", "-b", "translate")
    path = tmp_path / "translations/tut/page.zh.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data[HEADING] = HEADING_ZH  # good
    data[SCALE] = BAD  # bad
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    git(tmp_path, "commit", "-q", "-am", "zh: two blocks")
    lines = path.read_text(encoding="utf-8").splitlines()
    bad_line = next(n for n, line in enumerate(lines, 1) if line.lstrip().startswith(json.dumps(SCALE)[:30]))
    return tmp_path, bad_line


def _run(root: Path, argv: list[str]) -> subprocess.CompletedProcess:
    assert argv[0] == "labml-site"
    return subprocess.run([_tool("labml-site"), *argv[1:]], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def test_the_workflows_command_on_a_branch_annotates_the_bad_change_and_reports_both(branch):
    root, bad_line = branch
    argv = _pr_check_step()  # exactly what the workflow runs, with the PR's base
    assert argv[:2] == ["labml-site", "pr-check"] and "--format" in argv and "github" in argv
    done = _run(root, argv)
    assert done.returncode == 1, done.stderr  # an error: the check fails
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::")]
    errors = [a for a in annotations if a.startswith("::error ")]
    assert errors and all(f"file=translations/tut/page.zh.json,line={bad_line}," in a for a in errors), annotations
    assert {a.split("title=")[1].split("::")[0] for a in errors} == {"placeholder-missing"}
    notices = [a for a in annotations if a.startswith("::notice")]
    assert len(notices) == 1 and "since origin/main: 2 errors" in notices[0], notices
    assert len(annotations) == len(errors) + 1  # nothing about the good change, nor the untouched entries
    report = (root / "translation-review.html").read_text(encoding="utf-8")
    assert report.count('<section class="entry"') == 2  # both changes, the good one too
    assert "缩放注意力" in report and "placeholder-missing" in report
    assert '<pre class="diff">' in report


def test_the_same_command_passes_a_good_change(branch):
    root, _ = branch
    path = root / "translations/tut/page.zh.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data[SCALE] = ""  # the bad change taken back: only the good one is left
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    done = _run(root, ["labml-site", "pr-check", "--base", "main", "--format", "github"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "::error" not in done.stdout and done.stdout.count("::notice") == 1
    assert "0 errors" in done.stdout
    assert "缩放注意力" in (root / "translation-review.html").read_text(encoding="utf-8")


def test_contributing_documents_the_local_command():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "labml-site pr-check --base origin/main" in text
    assert "labml-site pr-check --base origin/main" in (ROOT / ".github" / "pull_request_template.md").read_text(encoding="utf-8")
