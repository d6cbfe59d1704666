"""Mail as the list encodes it (base64, quoted-printable, 8bit, undeclared
charsets, CRLF, >From lines, folded headers, multipart with the patch inline or
attached), and threads as b4 or a list archive gives them: each one read and
applied for real with git am on a tiny tree."""

import base64
import quopri
from pathlib import Path

import pytest

from foliofarm.intake import apply, series
from foliofarm.errors import UsageError

from test_series import git, tree  # noqa: F401  (the tiny git tree fixture)

DIFF = ("---\n mm/filemap.c | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\n"
        "diff --git a/mm/filemap.c b/mm/filemap.c\n--- a/mm/filemap.c\n+++ b/mm/filemap.c\n"
        "@@ -1,3 +1,3 @@\n int a;\n-int b;\n+int {new};\n int c;\n")


def body(new: str = "b2", words: str = "Rename b.") -> str:
    return f"{words}\n\nSigned-off-by: A U Thor <a@example.org>\n" + DIFF.format(new=new)


def headers(subject: str, extra: str = "", msgid: str = "<1@x>") -> str:
    return (f"From: A U Thor <a@example.org>\nDate: Sun, 22 Nov 2026 10:00:00 +0000\n"
            f"Subject: {subject}\nMessage-ID: {msgid}\n{extra}")


def plain(subject: str, text: str, msgid: str = "<1@x>", reply_to: str = "") -> str:
    extra = f"In-Reply-To: {reply_to}\n" if reply_to else ""
    return ("From x Mon Sep 17 00:00:00 2001\n" + headers(subject, extra, msgid)
            + "MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n\n" + text)


def applies(tree, path: Path, want_line: str = "int b2;") -> series.Series:  # noqa: F811
    ser = series.load(str(path))
    with apply.applied(tree, ser) as ap:
        assert len(ap.commits) == len(ser.patches)
        assert want_line in (tree.tree / "mm" / "filemap.c").read_text()
        log = git(tree.tree, "log", "-1", "--format=%s%n%b")
    return ser, log


def write(tmp_path: Path, data: bytes | str, name: str = "p.mbox") -> Path:
    f = tmp_path / name
    f.write_bytes(data if isinstance(data, bytes) else data.encode())
    return f


def test_base64_body(tree, tmp_path):  # noqa: F811
    enc = base64.encodebytes(body().encode()).decode()
    mail = ("From x Mon Sep 17 00:00:00 2001\n" + headers("[PATCH] mm: rename b")
            + "MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n"
              "Content-Transfer-Encoding: base64\n\n" + enc)
    ser, log = applies(tree, write(tmp_path, mail))
    assert [p.subject for p in ser.patches] == ["mm: rename b"]
    assert ser.patches[0].files == ("mm/filemap.c",)
    assert log.startswith("mm: rename b")


def test_quoted_printable_body_with_soft_breaks(tree, tmp_path):  # noqa: F811
    text = body(words="A line long enough that quoted-printable must fold it, " * 3 + "= sign.")
    enc = quopri.encodestring(text.encode()).decode()
    assert "=\n" in enc and "=3D" in enc
    mail = ("From x Mon Sep 17 00:00:00 2001\n" + headers("[PATCH] mm: rename b")
            + "MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n"
              "Content-Transfer-Encoding: quoted-printable\n\n" + enc)
    ser, log = applies(tree, write(tmp_path, mail))
    assert "= sign." in log


def test_8bit_utf8_body_and_encoded_subject(tree, tmp_path):  # noqa: F811
    mail = ("From x Mon Sep 17 00:00:00 2001\n"
            + headers("=?UTF-8?q?=5BPATCH=5D_mm=3A_r=C3=A9name_b?=")
            + "MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n"
              "Content-Transfer-Encoding: 8bit\n\n" + body(words="Rénommé, naïve."))
    ser, log = applies(tree, write(tmp_path, mail))
    assert ser.patches[0].subject == "mm: réname b"
    assert "Rénommé" in log


def test_raw_8bit_subject_without_charset(tree, tmp_path):  # noqa: F811
    """Older mailers send Latin-1 bytes in headers and declare nothing."""
    mail = (b"From x Mon Sep 17 00:00:00 2001\nFrom: J\xf6rg <j@example.org>\n"
            b"Date: Sun, 22 Nov 2026 10:00:00 +0000\nSubject: [PATCH] mm: r\xe9name b\n"
            b"Content-Type: text/plain; charset=ISO-8859-1\nContent-Transfer-Encoding: 8bit\n\n"
            + body(words="R\u00e9nomm\u00e9.").encode("latin-1"))
    ser, log = applies(tree, write(tmp_path, mail))
    assert ser.patches[0].subject == "mm: réname b"
    assert "Rénommé" in log


def test_crlf_line_ends(tree, tmp_path):  # noqa: F811
    mail = plain("[PATCH] mm: rename b", body()).replace("\n", "\r\n")
    ser, _ = applies(tree, write(tmp_path, mail))
    assert ser.patches[0].subject == "mm: rename b"


def test_escaped_from_line_and_folded_subject(tree, tmp_path):  # noqa: F811
    text = body(words="Rename b.\n\n>From here on b is b2.")
    mail = (f"From x Mon Sep 17 00:00:00 2001\nFrom: A U Thor <a@example.org>\n"
            f"Subject: [PATCH] mm: rename b, a subject long enough\n that the mailer\n\tfolded it\n"
            f"Date: Sun, 22 Nov 2026 10:00:00 +0000\n\n{text}")
    ser, log = applies(tree, write(tmp_path, mail))
    assert ser.patches[0].subject == "mm: rename b, a subject long enough that the mailer folded it"
    assert "From here on b is b2." in log


@pytest.mark.parametrize("disposition", ["inline", "attachment"])
def test_multipart_with_the_patch_as_a_text_part(tree, tmp_path, disposition):  # noqa: F811
    diff = DIFF.format(new="b2").split("\n", 3)[3]     # the diff alone, in its own part
    mail = ("From x Mon Sep 17 00:00:00 2001\n" + headers("[PATCH] mm: rename b")
            + 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="XX"\n\n'
              "--XX\nContent-Type: text/plain; charset=UTF-8\n\nRename b.\n\n"
              "Signed-off-by: A U Thor <a@example.org>\n"
              f"--XX\nContent-Type: text/x-patch; charset=UTF-8\n"
              f"Content-Disposition: {disposition}; filename=\"0001.patch\"\n"
              "Content-Transfer-Encoding: base64\n\n"
            + base64.encodebytes(diff.encode()).decode() + "--XX--\n")
    ser, log = applies(tree, write(tmp_path, mail))
    assert ser.patches[0].files == ("mm/filemap.c",)


def thread(tmp_path: Path) -> Path:
    """A list thread: v1 (cover, 2 patches, a review reply), then v2 (cover with
    base-commit, 2 patches sent out of order, a reply to 1/2)."""
    msgs = [
        plain("[PATCH 0/2] mm: renames", "Two renames.\n", "<c1@x>"),
        plain("[PATCH 1/2] mm: rename b", body("b1"), "<p11@x>", "<c1@x>"),
        plain("[PATCH 2/2] mm: rename c", body("b1").replace("int b;", "int c;").replace("-int b1", "-int c1"), "<p12@x>", "<c1@x>"),
        plain("Re: [PATCH 1/2] mm: rename b", "> -int b;\n> +int b1;\n\nCall it b2.\n", "<r1@x>", "<p11@x>"),
        plain("[PATCH v2 0/2] mm: renames", "Two renames, v2.\n\nbase-commit: 0123456789abcdef0123456789abcdef01234567\n", "<c2@x>"),
        plain("[PATCH v2 2/2] mm: touch c", body("c2", "Touch c.").replace(" int a;\n-int b;\n+int c2;\n int c;", " int a;\n int b2;\n-int c;\n+int c2;").replace("@@ -1,3 +1,3 @@", "@@ -1,3 +1,3 @@"), "<p22@x>", "<c2@x>"),
        plain("[PATCH v2 1/2] mm: rename b", body("b2"), "<p21@x>", "<c2@x>"),
        plain("Re: [PATCH v2 1/2] mm: rename b", "Reviewed-by: R <r@x>\n", "<r2@x>", "<p21@x>"),
    ]
    return write(tmp_path, "\n".join(msgs), "thread.mbox")


def test_a_thread_gives_its_latest_version_in_order(tree, tmp_path):  # noqa: F811
    ser = series.load(str(thread(tmp_path)))
    assert [p.subject for p in ser.patches] == ["mm: rename b", "mm: touch c"]
    assert ser.cover == "mm: renames"
    assert ser.base_commit == "0123456789abcdef0123456789abcdef01234567"
    assert any("2 replies left out" in n for n in ser.notes)
    assert any("v2 taken" in n for n in ser.notes)
    with apply.applied(tree, ser):
        assert (tree.tree / "mm" / "filemap.c").read_text() == "int a;\nint b2;\nint c2;\n"


def test_b4_am_output_keeps_the_cover_and_its_base_commit(tree, tmp_path):  # noqa: F811
    d = tmp_path / "b4"
    d.mkdir()
    write(d, plain("[PATCH v2 1/1] mm: rename b", body()), "v2_20261122_a_mm_renames.mbx")
    write(d, plain("[PATCH v2 0/1] mm: renames", "base-commit: 89abcdef0123\n"), "v2_20261122_a_mm_renames.cover")
    for spec in (d / "v2_20261122_a_mm_renames.mbx", d):
        ser = series.load(str(spec))
        assert ser.base_commit == "89abcdef0123" and ser.cover == "mm: renames"
        assert [p.subject for p in ser.patches] == ["mm: rename b"]


@pytest.mark.parametrize("msgs,says", [
    ([("[PATCH 1/3] a", True), ("[PATCH 3/3] c", True)], "patch 2/3 missing"),
    ([("[PATCH 1/2] a", True), ("[PATCH 1/2] b", True)], "two v1 patches are 1/2"),
    ([("[PATCH 1/2] a", True), ("[PATCH] b", True)], "has no [PATCH n/N] position"),
    ([("Re: [PATCH] a", False)], "only replies"),
    ([("[PATCH 0/1] cover", False)], "holds no patch"),
])
def test_threads_that_cannot_make_a_series_say_why(tmp_path, msgs, says):
    text = "\n".join(plain(s, body() if diff else "words\n", f"<{k}@x>") for k, (s, diff) in enumerate(msgs))
    with pytest.raises(UsageError, match=says.replace("[", r"\[")):
        series.load(str(write(tmp_path, text)))
