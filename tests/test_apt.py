"""Mirror discovery from the machine's apt sources (one-line and deb822)."""

import pytest

from foliofarm.intake.apt import parse_sources, pick_debian_mirror, simulated_installs
from foliofarm.errors import InfraError

DEB822 = """Types: deb
# a comment
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
"""


def test_deb822_sources():
    src = parse_sources("", [DEB822])
    assert pick_debian_mirror(src) == "http://mirror.example/debian"


def test_one_line_sources_skip_security_and_options():
    text = ("deb [arch=amd64 signed-by=/k.gpg] http://sec.example/debian-security bookworm-security main\n"
            "# deb http://old.example/debian bullseye main\n"
            "deb [signed-by=/k.gpg] http://m.example/debian/ trixie main\n")
    assert pick_debian_mirror(parse_sources(text, [])) == "http://m.example/debian"


def test_disabled_stanza_is_ignored():
    text = DEB822.replace("Types: deb\n# a comment", "Enabled: no\nTypes: deb")
    src = parse_sources("", [text])
    assert [s.uri for s in src] == ["http://mirror.example/debian-security"]
    with pytest.raises(InfraError, match="no Debian mirror"):
        pick_debian_mirror(src)


def test_no_debian_source_says_what_to_do():
    with pytest.raises(InfraError, match="FOLIOFARM_DEBIAN_MIRROR"):
        pick_debian_mirror(parse_sources("deb http://archive.example/ubuntu noble main\n", []))


# apt-get -s --no-install-recommends install python3-minimal, arm64 root, abridged
SIMULATION = """NOTE: This is only a simulation!
      apt-get needs root privileges for real execution.
      Keep also in mind that locking is deactivated,
      so don't depend on the relevance to the real current situation!
Reading package lists...
Building dependency tree...
The following NEW packages will be installed:
  libc6 libexpat1 python3-minimal python3.13-minimal zlib1g
0 upgraded, 5 newly installed, 0 to remove and 0 not upgraded.
Inst libc6:arm64 (2.41-12 Debian:13.1/stable [arm64])
Inst libexpat1:arm64 (2.7.1-2 Debian:13.1/stable [arm64])
Inst zlib1g:arm64 (1:1.3.dfsg+really1.3.1-1+b1 Debian:13.1/stable [arm64])
Conf libc6:arm64 (2.41-12 Debian:13.1/stable [arm64])
Inst python3.13-minimal:arm64 [3.13.4-1] (3.13.5-2 Debian:13.1/stable [arm64])
Inst python3-minimal:arm64 (3.13.5-1 Debian:13.1/stable [arm64])
Conf python3-minimal:arm64 (3.13.5-1 Debian:13.1/stable [arm64])
"""


def test_simulated_installs_in_apts_order_with_versions():
    assert simulated_installs(SIMULATION) == [
        ("libc6", "2.41-12"), ("libexpat1", "2.7.1-2"),
        ("zlib1g", "1:1.3.dfsg+really1.3.1-1+b1"),
        ("python3.13-minimal", "3.13.5-2"),   # an upgrade: the new version, not the old
        ("python3-minimal", "3.13.5-1")]


def test_simulated_installs_of_nothing():
    assert simulated_installs("0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.\n") == []


def test_apt_answers_kept_until_the_lists_change(tmp_path):
    """A run's sysroots ask apt the same questions: asked once per state of
    the package lists (kept on disk, read back by the next run), asked again
    once an update changed them."""
    import os
    from foliofarm.intake.apt import PrivateApt
    apt = PrivateApt(tmp_path, "trixie", "arm64")
    (apt.root / "updated").touch()               # lists fresh: no apt-get update here
    lists = apt.root / "lists" / "deb_dists_trixie_main_binary-arm64_Packages"
    lists.write_text("Package: libc6\nVersion: 2.41-12\n")
    asked = []

    def ask():
        asked.append(1)
        return [["libc6", "2.41-12"]]
    assert apt._answer("closure libc6", ask) == [["libc6", "2.41-12"]]
    again = PrivateApt(tmp_path, "trixie", "arm64")   # the next run
    assert again._answer("closure libc6", ask) == [["libc6", "2.41-12"]]
    assert len(asked) == 1
    assert again._answer("closure bash", ask) and len(asked) == 2   # another question
    lists.write_text("Package: libc6\nVersion: 2.41-13\n")
    os.utime(lists, ns=(1, 1))
    again._answer("closure libc6", ask)
    assert len(asked) == 3
    import json
    kept = json.loads((apt.root / "answers.json").read_text())
    assert list(kept["answers"]) == ["closure libc6"]      # the old lists' answers are gone
