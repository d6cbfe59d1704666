"""A reproducer asked for on the list (watch/asked.py): the trigger line, the
reproducer attached or inline, its arguments; a request that cannot be run
is refused with the reason; a message without the line asks for nothing, and
no message makes the reader raise."""

from email.message import EmailMessage

from hypothesis import given, settings, strategies as st

from foliofarm.watch.asked import MAX_BYTES, Asked, asked

C = "#include <stdio.h>\nint main(void) { puts(\"resident_pages: 1\"); return 0; }\n"


def reply(body: str, attach: tuple[str, bytes] | None = None) -> bytes:
    m = EmailMessage()
    m["From"] = "Reviewer <rev@example.org>"
    m["Subject"] = "Re: [PATCH 1/1] mm/filemap: something"
    m["Message-ID"] = "<r1@example.org>"
    m["In-Reply-To"] = "<p1@example.org>"
    m.set_content(body)
    if attach:
        m.add_attachment(attach[1], maintype="text", subtype="plain", filename=attach[0])
    return bytes(m)


def test_an_inline_c_reproducer_after_the_line_up_to_the_signature():
    got = asked(reply(f"On 64K this WARNs:\n\n> quoted patch\n\nfoliofarm: repro exec 1024\n{C}\n-- \nRev\n"))
    assert got == Asked("repro.c", C, "exec 1024")


def test_an_inline_shell_reproducer_up_to_the_end_line():
    got = asked(reply("foliofarm: repro\n#!/bin/sh\ncat /sys/kernel/mm/transparent_hugepage/enabled\n"
                      "foliofarm: end\nthanks\n"))
    assert got == Asked("repro.sh", "#!/bin/sh\ncat /sys/kernel/mm/transparent_hugepage/enabled\n", "")


def test_an_attachment_is_the_reproducer_and_keeps_its_name():
    got = asked(reply("foliofarm: repro hugepage\n", ("exec-resident.c", C.encode())))
    assert got == Asked("exec-resident.c", C, "hugepage")


def test_no_line_asks_for_nothing_and_a_quoted_one_neither():
    assert asked(reply("Looks good to me.\n")) is None
    assert asked(reply("> foliofarm: repro\n> int main(void) { return 0; }\n")) is None


def test_what_cannot_be_run_is_refused_with_the_reason():
    assert "no reproducer" in asked(reply("foliofarm: repro\n\n-- \nme\n"))
    assert "over the 64 KB" in asked(reply("foliofarm: repro\n" + "x" * (MAX_BYTES + 10) + "\n"))
    assert "not FILE.c or FILE.sh" in asked(reply("foliofarm: repro\n", ("../../etc/x;rm.c", b"int main;")))
    assert "not text" in asked(reply("foliofarm: repro\n", ("bin.c", b"\xff\xfe\x00\x01")))
    assert "split as a shell would" in asked(reply("foliofarm: repro 'unclosed\nint main;\n"))
    assert "over the 200" in asked(reply("foliofarm: repro " + "a" * 300 + "\nint main;\n"))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.binary(max_size=4096))
def test_no_message_makes_the_reader_raise(raw):
    got = asked(b"From: x@y\nSubject: Re: z\n\nfoliofarm: repro\n" + raw)
    assert got is None or isinstance(got, (Asked, str))
