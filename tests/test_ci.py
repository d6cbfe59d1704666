"""The CI definitions: linted by their own tools (actionlint; Groovy's parser
for the Jenkinsfile), shaped as CI admins need them (inputs through the
environment, least permissions, shards by page size, real files uploaded), and
their steps run here as the services run them."""

import os
import json
import subprocess
from pathlib import Path

import pytest
import yaml

from foliofarm import matrix

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / "ci" / "github" / "foliofarm.yml"
JENKINSFILE = ROOT / "ci" / "Jenkinsfile"
LINT = ROOT / "tools" / "lint-ci.sh"


def lint(kind: str, file: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT), kind, *([str(file)] if file else [])], capture_output=True,
                          text=True, check=False, timeout=600)


def test_github_workflow_passes_actionlint():
    p = lint("github")
    assert p.returncode == 0, p.stdout + p.stderr


def test_jenkinsfile_parses_as_groovy():
    p = lint("jenkins")
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_linters_catch_a_broken_definition(tmp_path):
    bad_yml = tmp_path / "bad.yml"
    bad_yml.write_text(WORKFLOW.read_text().replace("runs-on: ubuntu-latest", "runs-on: [ubuntu-latest", 1))
    assert lint("github", bad_yml).returncode != 0
    bad_groovy = tmp_path / "Jenkinsfile"
    bad_groovy.write_text(JENKINSFILE.read_text().replace("sh 'ci/steps.sh unit'", "sh 'ci/steps.sh unit", 1))
    assert lint("jenkins", bad_groovy).returncode != 0


def runs(workflow: dict) -> list[str]:
    return [step["run"] for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]


def test_workflow_shape():
    wf = yaml.safe_load(WORKFLOW.read_text())
    on = wf.get("on", wf.get(True))            # YAML 1.1 reads a bare `on` as true
    assert set(on["workflow_dispatch"]["inputs"]) >= {"kernel", "series", "each_commit", "debian_mirror"}
    assert wf["permissions"] == {"contents": "read"}
    assert "group" in wf["concurrency"]
    # inputs reach the steps through env:, never pasted into a shell line
    assert "inputs." in json.dumps(wf["env"]) and "vars.FOLIOFARM_DEBIAN_MIRROR" in wf["env"]["FOLIOFARM_DEBIAN_MIRROR"]
    for line in runs(wf):
        assert "${{" not in line, line
        assert line.startswith(("ci/steps.sh ", "sudo sysctl -w kernel.apparmor")), line
    page = wf["jobs"]["page"]
    assert page["strategy"]["matrix"]["page"] == list(matrix.page_sizes())      # one kernel per job
    assert page["env"]["PAGE"] == "${{ matrix.page }}"
    cache = next(s for s in page["steps"] if s.get("uses", "").startswith("actions/cache"))
    assert "github.run_id" in cache["with"]["key"] and cache["with"]["restore-keys"]
    uploads = [s["with"]["path"] for j in wf["jobs"].values() for s in j["steps"]
               if s.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads and not any("latest" in u for u in uploads)
    assert wf["jobs"]["report"]["needs"] == "page" and wf["jobs"]["report"]["if"] == "always()"
    # the host the Debian archive lives on is never named here
    assert "debian.org" not in WORKFLOW.read_text() and "debian.org" not in JENKINSFILE.read_text()


def test_jenkinsfile_shape():
    text = JENKINSFILE.read_text()
    assert "axis {" in text and "values '4k', '16k', '64k'" in text
    sh_lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("sh ")]
    assert sh_lines and all(ln.startswith("sh '") for ln in sh_lines), sh_lines   # no interpolation
    assert "KERNEL = \"${params.KERNEL}\"" in text


@pytest.mark.integration
def test_the_workflow_steps_run_here(tmp_path, reads_back):
    """The page and report steps, as the workflow runs them (its own run lines,
    its env), on the 4k and 16k page sizes with a check of the farm's own, the
    thpmaps cross-check and a category of the mm selftests (each kind of
    result the farm writes), then the report over both shards; what it merged
    reads back."""
    wf = yaml.safe_load(WORKFLOW.read_text())
    page_run = next(s["run"] for s in wf["jobs"]["page"]["steps"] if s.get("run", "").startswith("ci/steps.sh"))
    report_run = next(s["run"] for s in wf["jobs"]["report"]["steps"] if "run" in s)
    for page in ("4k", "16k"):
        env = dict(os.environ, PAGE=page, KERNEL="debian:7.3", SERIES="", EACH_COMMIT="",
                   FOLIOFARM_CI_CHECKS="exec-text,thpmaps,mm-selftests", FOLIOFARM_CI_SELFTESTS="mmap",
                   RESULTS=str(tmp_path / "results"),
                   SHARD=str(tmp_path / "shards" / f"results-{page}"), SHARDS=str(tmp_path / "shards"),
                   REPORT=str(tmp_path / "report"))
        p = subprocess.run(page_run, shell=True, cwd=ROOT, env=env, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr[-3000:]
        shard = tmp_path / "shards" / f"results-{page}"
        assert (shard / "results.json").is_file() and not (shard / "results.json").is_symlink()
        assert (shard / "junit.xml").is_file()
    p = subprocess.run(report_run, shell=True, cwd=ROOT, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    for name in ("results.json", "junit.xml", "report.md", "report.txt"):
        assert (tmp_path / "report" / name).is_file(), name
    merged = reads_back(tmp_path / "report")
    assert sorted(c["id"] for c in merged["cells"]) == ["16k-erofs-7.3", "16k-ext4-7.3", "16k-xfs-7.3",
                                                        "4k-erofs-7.3", "4k-ext4-7.3", "4k-xfs-7.3"]
    got = {(cell["id"], c["name"]): c for cell in merged["cells"] for c in cell["checks"]}
    assert all(got[(cell, "thpmaps")].get("rows") for cell in ("4k-xfs-7.3", "16k-ext4-7.3"))
    assert all(got[(cell, "mm-selftests")].get("subtests") for cell in ("4k-xfs-7.3", "16k-ext4-7.3"))
