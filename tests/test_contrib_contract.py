"""The command line's contract (docs/cli-contract.md): exit codes, and the JSON of `check
--format json` and `stats --json` valid against the schemas shipped in the package; and the first
translator's path (`extract --lang X`, then `check --langs X` exits 0, one line per file for what
is not translated yet)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from workbench_fixture import HEADING, HEADING_ZH, QUERY, SCALE, make_project

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "labml_site" / "schemas"
DOC = ROOT / "docs" / "cli-contract.md"


def _schema(name: str) -> dict:
    schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def _validate(data, name: str) -> None:
    jsonschema.Draft202012Validator(_schema(name)).validate(data)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    env.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, "-m", "labml_site", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


@pytest.fixture()
def project(tmp_path):
    make_project(tmp_path, {HEADING: HEADING_ZH, SCALE: "<p> 缩放 </p>\n"})  # one good, one error
    return tmp_path


def _io(root: Path) -> list[str]:
    return ["--source", str(root / "src"), "--translations", str(root / "tr")]


def test_check_json_is_valid_against_the_findings_schema(project):
    p = cli("check", *_io(project), "--format", "json", cwd=project)
    assert p.returncode == 1  # errors
    data = json.loads(p.stdout)  # stdout is the JSON alone; the summary is on stderr
    _validate(data, "findings.schema.json")
    codes = {f["code"] for f in data}
    assert "placeholder-missing" in codes and "empty-value" in codes  # json lists every entry
    assert {f["severity"] for f in data} == {"error", "warning"}
    assert "errors" in p.stderr and p.stderr.count("\n") == 1


def test_stats_json_is_valid_against_the_stats_schema(project):
    p = cli("stats", *_io(project), "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    _validate(data, "stats.schema.json")
    (row,) = data["pages"]
    assert row["shown"] == row["translated"] + row["repaired"] and row["invalid"] == 1
    assert data["totals"][0]["page"] == "TOTAL"


def test_the_schemas_are_strict_enough_to_fail():
    finding = {"severity": "error", "code": "x", "message": "m", "path": "", "line": 0, "col": 0, "key": ""}
    _validate([finding], "findings.schema.json")
    for bad in ({**finding, "severity": "fatal"}, {**finding, "extra": 1}, {k: v for k, v in finding.items() if k != "key"},
                {**finding, "line": -1}):
        with pytest.raises(jsonschema.ValidationError):
            _validate([bad], "findings.schema.json")
    with pytest.raises(jsonschema.ValidationError):
        _validate({"pages": [], "totals": [{"page": "mha"}]}, "stats.schema.json")


def test_exit_codes(project):
    assert cli("check", *_io(project), cwd=project).returncode == 1  # an error in a file
    (project / "tr/tut/page.zh.json").write_text(json.dumps({HEADING: HEADING_ZH}), encoding="utf-8")
    assert cli("check", *_io(project), cwd=project).returncode == 0  # warnings never fail
    usage = cli("check", *_io(project), "--format", "yaml", cwd=project)
    assert usage.returncode == 2 and usage.stderr.startswith("error: ") and usage.stderr.count("\n") == 1
    missing = cli("check", "--source", str(project / "nope"), cwd=project)
    assert missing.returncode == 2 and missing.stderr.startswith("error: ")


def test_check_github_annotates_errors_only_and_one_summary(project):
    p = cli("check", *_io(project), "--format", "github", cwd=project)
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert lines and all(l.startswith(("::error ", "::notice ")) for l in lines), lines
    assert [l for l in lines if l.startswith("::notice")] == [lines[-1]]
    assert "empty-value" not in p.stdout and "glossary-term" not in p.stdout


def test_the_contract_documents_every_exit_code_format_and_schema():
    text = DOC.read_text(encoding="utf-8")
    for needle in ("| 0 |", "| 1 |", "| 2 |", "| 130 |", "--format text", "--format json", "--format github",
                   "findings.schema.json", "stats.schema.json", "::notice", "pr-check"):
        assert needle in text, needle
    assert "cli-contract.md" in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert "cli-contract.md" in (ROOT / "README.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# The first translator's path


def test_extract_then_check_a_new_language_exits_0_with_one_line_per_file(tmp_path):
    make_project(tmp_path)
    p = cli("extract", *_io(tmp_path), "--lang", "ja", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    p = cli("check", *_io(tmp_path), "--langs", "ja", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    (line,) = p.stdout.splitlines()  # one file: one line, not one per entry
    assert line.endswith("[untranslated]") and "page.ja.json: warning: 5 entries not translated yet" in line
    assert "--verbose" in line
    verbose = cli("check", *_io(tmp_path), "--langs", "ja", "--verbose", cwd=tmp_path)
    assert verbose.returncode == 0
    assert verbose.stdout.count("[empty-value]") == 5  # each entry, with its line
    assert QUERY.strip()[:20] in verbose.stdout


def test_check_names_staged_files_as_pre_commit_passes_them(project):
    good = project / "tr/tut/page.zh.fuzzy.json"  # a sidecar: checked with its main file, never alone
    good.write_text("{}", encoding="utf-8")
    p = cli("check", *_io(project), str(good), cwd=project)
    assert p.returncode == 0 and "checked 0 translation files" in p.stderr
    p = cli("check", *_io(project), str(project / "tr/tut/page.zh.json"), cwd=project)
    assert p.returncode == 1 and "placeholder-missing" in p.stdout
    outside = project / "other.zh.json"
    outside.write_text("{}", encoding="utf-8")
    p = cli("check", *_io(project), str(outside), cwd=project)
    assert p.returncode == 1 and "not-a-translation" in p.stdout
