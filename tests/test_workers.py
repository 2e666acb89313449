"""Forked workers (builder/workers.py): a worker does not hold on to what its tasks left for the
collector (the pages a render's reference cycles hold), nor walk what it inherited."""
from __future__ import annotations

import gc
import weakref

import pytest

from labml_site.builder import workers


class _Node:
    pass


_LEFT: list[weakref.ref] = []  # (in the child) the cycle the first task made, weakly


def _task(n: int) -> tuple[bool, bool] | None:
    if n == 0:
        node = _Node()
        node.me = node  # a reference cycle: only the collector frees it
        _LEFT.append(weakref.ref(node))
        return None
    return _LEFT[0]() is None, gc.get_freeze_count() > 0


@pytest.mark.own_process
def test_a_worker_collects_what_a_task_left_before_the_next_task():
    assert workers.can_fork()
    gc.disable()  # as the build's raised thresholds do for a while: nothing is collected on its own
    try:
        results = workers.fork_map(_task, [0, 1], workers=1)  # one child runs both, in turn
    finally:
        gc.enable()
    freed, frozen = results[1]
    assert freed  # the first task's cycle was collected before the second task ran
    assert frozen  # and the objects the child inherited are out of its collections
