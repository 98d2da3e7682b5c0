"""The line of the decision read from the user's source (explain/decision_line.py, dumps/python_source.py,
dumps/python_calls.py): the `if` around a traced line, the requires_grad_/device_put calls; nothing when the file
is not on disk."""

from __future__ import annotations

from hlodiff.dumps.python_source import enclosing_if
from hlodiff.dumps.python_calls import calls_named

SOURCE = '''\
import random


def step(model, x, skip):
    h = model.stem(x)
    if not skip:
        h = h + model.block(h)
    else:
        h = h * 2

    def inner(y):
        return y + 1
    return inner(h)


for i in range(10):
    if i == 3:
        model.backbone.requires_grad_(False)
    for p in model.head.parameters():
        p.requires_grad = True
    w = jax.device_put(w, devices[1])
if flag:
    def callback(y):
        return y + 1
'''


def test_the_if_around_a_line_in_its_own_function(tmp_path):
    src = tmp_path / "train.py"
    src.write_text(SOURCE)
    assert enclosing_if(str(src), 7) == 6  # the body of `if not skip:`
    assert enclosing_if(str(src), 9) == 6  # its else branch: the same decision
    assert enclosing_if(str(src), 6) is None  # the test line itself is not inside the branch
    assert enclosing_if(str(src), 24) is None  # a function defined under an `if`: not the decision of its body
    assert enclosing_if(str(src), 18) == 17


def test_calls_and_attribute_assignments_by_name(tmp_path):
    src = tmp_path / "train.py"
    src.write_text(SOURCE)
    assert calls_named(str(src), ("requires_grad_", "requires_grad")) == [18, 20]
    assert calls_named(str(src), ("device_put",)) == [21]


def test_nothing_when_the_file_is_not_on_disk(tmp_path):
    assert enclosing_if(str(tmp_path / "gone.py"), 7) is None
    assert calls_named(str(tmp_path / "gone.py"), ("device_put",)) == []
