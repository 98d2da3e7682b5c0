"""One rule for a count and its noun in every view (render/plural.py): a count of one never reads "1 graphs"."""

from hlodiff.render.plural import counted, noun


def test_one_is_singular_and_every_other_count_plural():
    assert [counted(n, "graph") for n in (0, 1, 2)] == ["0 graphs", "1 graph", "2 graphs"]
    assert counted(1, "more cause") == "1 more cause" and counted(3, "more cause") == "3 more causes"


def test_an_irregular_plural_and_a_grouped_count():
    assert counted(1, "family", "families") == "1 family" and counted(4, "family", "families") == "4 families"
    assert counted(1024, "unchanged instruction", grouped=True) == "1,024 unchanged instructions"
    assert counted(1024, "graph") == "1024 graphs"  # the views that never grouped their counts still do not


def test_the_noun_alone_follows_the_count():
    assert (noun(1, "rank"), noun(2, "rank"), noun(2, "copy", "copies")) == ("rank", "ranks", "copies")
