"""The long-range tasks: answers are what the task says, seeds reproduce, answers hidden."""

from __future__ import annotations

import pytest
import torch

from engine.data import long_range as lr


@pytest.mark.parametrize("name", list(lr.TASKS))
def test_same_seed_same_batch_other_seed_other_batch(name):
    task = lr.get(name)
    x1, y1 = task.batch(4, seed=7)
    x2, y2 = task.batch(4, seed=7)
    x3, _ = task.batch(4, seed=8)
    assert torch.equal(x1, x2) and torch.equal(y1, y2) and not torch.equal(x1, x3)
    assert x1.shape == y1.shape == (4, task.n)
    assert int(x1.min()) >= 0 and int(x1.max()) < lr.VOCAB


def test_mqar_answers_are_the_values_of_the_asked_keys():
    task = lr.get("mqar-256")
    x, y = task.batch(8, seed=0)
    P = task.pairs
    for row_x, row_y in zip(x, y, strict=True):
        keys, values = row_x[0 : 2 * P : 2], row_x[1 : 2 * P : 2]
        assert len(set(keys.tolist())) == P  # distinct keys
        table = dict(zip(keys.tolist(), values.tolist(), strict=True))
        asked = (row_y != lr.IGNORE).nonzero().flatten()
        assert len(asked) == P and int(asked.min()) >= 2 * P  # every key asked once, later
        for i in asked.tolist():
            assert table[int(row_x[i])] == int(row_y[i])
        # The answers are not in the input after the pairs (a model cannot copy them).
        assert not (set(row_x[2 * P :].tolist()) & set(values.tolist()))


def test_copy_slots_answer_the_first_symbols_in_order():
    task = lr.get("copy-256")
    x, y = task.batch(4, seed=1)
    C = task.pairs
    assert torch.equal(y[:, -C:], x[:, :C])
    assert (x[:, -C:] == lr.SLOT).all() and (x[:, C:-C] == lr.BLANK).all()
    assert (y[:, :-C] == lr.IGNORE).all()


def test_control_asks_for_the_previous_token():
    x, y = lr.get("control-128").batch(4, seed=2)
    asked = y != lr.IGNORE
    assert not asked[:, 0].any() and 0.3 < float(asked.float().mean()) < 0.7
    assert torch.equal(y[:, 1:][asked[:, 1:]], x[:, :-1][asked[:, 1:]])


def test_accuracy_counts_asked_positions_only():
    y = torch.tensor([[lr.IGNORE, 5, 6]])
    logits = torch.zeros(1, 3, 10)
    logits[0, 1, 5] = logits[0, 2, 0] = 1.0
    assert lr.accuracy(logits, y) == 0.5


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="pairs"):
        lr.Task("x", "mqar", 16, 8).batch(1, 0)
    with pytest.raises(ValueError, match="unknown task"):
        lr.get("listops")


def test_evidence_is_where_each_task_reads_its_answer():
    """The position the Quality section rings: a copy slot's symbol, a query's key."""
    copy = torch.tensor([70, 71, 72, lr.BLANK, lr.BLANK, lr.SLOT, lr.SLOT, lr.SLOT])
    assert [lr.evidence("copy", copy, i) for i in (5, 6, 7)] == [0, 1, 2]
    recall = torch.tensor([5, 70, 7, 71, lr.BLANK, 7, 5])
    assert lr.evidence("mqar", recall, 5) == 2 and lr.evidence("mqar", recall, 6) == 0
    assert lr.evidence("control", recall, 3) == 2 and lr.evidence("control", recall, 0) is None
    x, y = lr.get("copy-128").batch(1, seed=3)
    for i in (y[0] != lr.IGNORE).nonzero().flatten().tolist():
        assert x[0, lr.evidence("copy", x[0], i)] == y[0, i]  # the evidence holds the answer
