"""Worker processes: which start method is safe, and running a function over many items in
forked children that inherit the parent's memory (the site's pages, already in it)."""
from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Sequence, TypeVar

from ..errors import UserError

T = TypeVar("T")
R = TypeVar("R")


def can_fork() -> bool:
    """fork is cheapest (children inherit the imported modules and the parent's data), but
    forking a process that runs other threads (`serve`) can deadlock a child on a lock one of
    them held."""
    return hasattr(os, "fork") and threading.active_count() == 1


def pool_context():
    return multiprocessing.get_context("fork" if can_fork() else "forkserver")


_TASK: Callable | None = None  # what forked children run (they inherit it; it is never pickled)


def _run(item):
    return _TASK(item)


def fork_map(fn: Callable[[T], R], items: Sequence[T], workers: int, meanwhile: Callable[[], object] | None = None) -> list[R]:
    """`[fn(item) for item in items]` in `workers` forked children (only call when `can_fork()`).
    `fn` may be a closure over anything: children inherit it. Results are sent back pickled, so
    they should be small. `meanwhile` runs here while the children work."""
    global _TASK
    _TASK = fn
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
            results = pool.map(_run, items, chunksize=1)
            if meanwhile is not None:
                meanwhile()
            return list(results)
    except BrokenProcessPool:
        # A child killed (for memory, most often) or crashed: the build stops, with the previous
        # site in place, rather than waiting or printing the executor's traceback.
        raise UserError(
            "a worker process died while producing the site (killed, perhaps for using too much memory); "
            "the previous site is kept: build again, or with --jobs 1 to use one process", status=1,
        ) from None
    finally:
        _TASK = None
