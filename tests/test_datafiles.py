"""The project's data files are checked when read: a damaged one stops the run
with one line naming the file and the field, never a traceback or a silent
default."""

from pathlib import Path

import pytest

from foliofarm import datafiles
from foliofarm.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
MATRIX = ROOT / "configs" / "kernels" / "matrix.toml"
CHECKS = ROOT / "tests" / "vmtests" / "checks.toml"
EXEC = ROOT / "tests" / "vmtests" / "expectations" / "exec-text.toml"
SPLATS = ROOT / "configs" / "kernels" / "splats.toml"


@pytest.mark.parametrize("path,model", [
    (MATRIX, datafiles.MatrixFile), (CHECKS, datafiles.CHECKS_FILE), (SPLATS, datafiles.SplatsFile),
    *[(p, datafiles.ExpectationsFile) for p in sorted((ROOT / "tests/vmtests/expectations").glob("*.toml"))],
])
def test_the_projects_files_are_valid(path, model):
    assert datafiles.load(path, model)


@pytest.mark.parametrize("path,model,old,new,says", [
    (MATRIX, datafiles.MatrixFile, "bytes = 16384", "bytes = 16000", "page_sizes.16k.bytes"),
    (MATRIX, datafiles.MatrixFile, 'fragment = "4k.config"', "", "page_sizes.4k.fragment: Field required"),
    (MATRIX, datafiles.MatrixFile, 'suite = "sid"', 'suit = "sid"', "debian_kernels.7.2"),
    (MATRIX, datafiles.MatrixFile, "[defaults]", "[defaults", "not readable TOML"),
    (CHECKS, datafiles.CHECKS_FILE, "timeout = 600", 'timeout = "long"', "mmap-miss.timeout"),
    (CHECKS, datafiles.CHECKS_FILE, 'program = "exec-text"', "", "exec-text.program: Field required"),
    (EXEC, datafiles.ExpectationsFile, 'kernel = "6.*"', "", "expect.0.xfail.kernel: Field required"),
    (EXEC, datafiles.ExpectationsFile, "guards =", "guard =", "figures.aligned_pct.guards: Field required"),
    (SPLATS, datafiles.SplatsFile, "kind =", "knd =", "splat.0"),
])
def test_a_damaged_file_names_itself_and_the_field(tmp_path, path, model, old, new, says):
    text = path.read_text()
    assert old in text
    bad = tmp_path / path.name
    bad.write_text(text.replace(old, new, 1))
    with pytest.raises(ConfigError) as exc:
        datafiles.load(bad, model)
    assert str(bad) in str(exc.value) and says in str(exc.value), str(exc.value)
    assert "\n" not in str(exc.value)
