"""A tree's state (what its artifacts are keyed by), worked out once per HEAD
and index while a run holds the tree (source.states_kept)."""

from foliofarm.intake import source
from test_series import commit, git, tree  # noqa: F401  (fixture)


def test_state_kept_follows_head_and_index(tree, monkeypatch):  # noqa: F811
    asked = []
    real = source.git.out

    def out(t, *args, **kw):
        if "status" in args:
            asked.append(args)
        return real(t, *args, **kw)
    monkeypatch.setattr(source.git, "out", out)
    outside = tree.state()
    with source.states_kept():
        assert tree.state() == outside
        assert tree.state() == outside
        assert len(asked) == 2                   # once outside, once in the scope
        commit(tree, "int b;", "int b2;", "mm: rename b")   # git moves HEAD
        moved = tree.state()
        assert moved != outside and len(asked) == 3
        f = tree.tree / "mm" / "filemap.c"
        f.write_text(f.read_text() + "int d;\n")
        git(tree.tree, "add", "mm/filemap.c")    # git rewrites the index
        staged = tree.state()
        assert staged != moved and staged.startswith(moved.split("-")[0] + "-")
    f.write_text(f.read_text() + "int e;\n")     # no git: seen only outside the scope
    assert tree.state() not in (staged, moved)
