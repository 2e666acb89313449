"""Worker processes: which start method is safe, and running a function over many items in
forked children that inherit the parent's memory (the site's pages, already in it) and give back
what each item's work freed."""
from __future__ import annotations

import gc
import os
import threading
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Sequence, TypeVar

from ..errors import UserError

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

T = TypeVar("T")
R = TypeVar("R")


def can_fork() -> bool:
    """fork is cheapest (children inherit the imported modules and the parent's data), but
    forking a process that runs other threads (`serve`) can deadlock a child on a lock one of
    them held."""
    return hasattr(os, "fork") and threading.active_count() == 1


# Process pools are imported where one is made: a rebuild of a few files makes none, and
# concurrent.futures.process and multiprocessing cost every build's start ~5 ms to import.

def process_pool(max_workers: int, start: str | None = None, initializer: Callable[[], None] | None = None) -> "ProcessPoolExecutor":
    """A pool of `max_workers` processes, started by `start` (default: fork where it is safe,
    `can_fork`, else forkserver)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context(start or ("fork" if can_fork() else "forkserver"))
    return ProcessPoolExecutor(max_workers=max_workers, mp_context=context, initializer=initializer)


def broken_pool() -> type[BaseException]:
    """What a pool raises when a worker died (for `except broken_pool():`)."""
    from concurrent.futures.process import BrokenProcessPool

    return BrokenProcessPool


@lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes  # (here: only forked workers trim, and ctypes costs 2 ms to import)

    try:
        return ctypes.CDLL(None).malloc_trim  # glibc
    except (AttributeError, OSError, TypeError):
        return None  # (another C library: nothing to give back this way)


def _start_child() -> None:
    """In a forked child, before its first task: the objects it inherited are frozen out of its
    collections. A collection writes to the header of every object it walks, and each write
    copies the page the object lies on, so walking the parent's heap would copy it."""
    gc.freeze()


def _end_task() -> None:
    """After each task in a forked child: what the task left for the collector is collected, and
    the memory freed goes back to the system. Rendering leaves reference cycles (a template's
    macros and its context, which holds the page rendered), and the build's raised collection
    thresholds (`site._fewer_collections`) would leave them, and the pages they hold, until the
    child ends; with the inherited objects frozen, a collection walks only what the child made
    (~10 ms). glibc keeps freed memory in the process unless trimmed."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


_TASK: Callable | None = None  # what forked children run (they inherit it; it is never pickled)


def _run(item):
    try:
        return _TASK(item)
    finally:
        _end_task()


def fork_map(fn: Callable[[T], R], items: Sequence[T], workers: int, meanwhile: Callable[[], object] | None = None) -> list[R]:
    """`[fn(item) for item in items]` in `workers` forked children (only call when `can_fork()`).
    `fn` may be a closure over anything: children inherit it. Results are sent back pickled, so
    they should be small. `meanwhile` runs here while the children work."""
    global _TASK
    _TASK = fn
    try:
        with process_pool(workers, "fork", _start_child) as pool:
            results = pool.map(_run, items, chunksize=1)
            if meanwhile is not None:
                meanwhile()
            return list(results)
    except broken_pool():
        # A child killed (for memory, most often) or crashed: the build stops, with the previous
        # site in place, rather than waiting or printing the executor's traceback.
        raise UserError(
            "a worker process died while producing the site (killed, perhaps for using too much memory); "
            "the previous site is kept: build again, or with --jobs 1 to use one process", status=1,
        ) from None
    finally:
        _TASK = None
