"""Mirror discovery from the machine's apt sources (one-line and deb822)."""

import pytest

from foliofarm.apt import parse_sources, pick_debian_mirror
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
