"""The command line: parses arguments, calls the library, prints findings. No build logic here."""
from __future__ import annotations

import gc
from typing import NoReturn

from .main import main

__all__ = ["end", "main", "run"]


def end(code: int) -> NoReturn:
    """End the process with `code`. What the command made is left to the system: the objects are
    frozen out of the interpreter's last collections, which would otherwise walk every one of
    them on the way out (~70 ms after a one-file rebuild, a sixth of it); `atexit` handlers,
    buffered output and every object's own cleanup run as on any exit."""
    gc.freeze()
    raise SystemExit(code)


def run() -> NoReturn:
    """The program (`labml-site`, `python -m labml_site`, `python build.py`): `main`, then the
    process ends. (`main` returns instead, for callers that go on.)"""
    end(main())
