"""Is this page served (`served_document`)? And heavy figures computed off its event loop, so that no page waits
for another page's card.

A served process answers every page's key presses on one event loop. A card whose figures take long the first time
an architecture is seen (the training plan's step peak and saved-bytes formula, the changes card's passes of every
step from the GPT-2 twin: 1 to 4 s in a fresh process) used to compute them on that loop, and every other page's
key press waited behind it (benchmarks/bench_first_card.py). `offload(compute, show)` runs `compute()` in one
worker thread and hands its result to `show` on the page's own next tick, in its document's lock (Bokeh's
thread-safe way back, `Document.add_next_tick_callback`); the loop stays free in between. The model's passes take
`model.passes`' lock where they share cached modules, and torch's dispatch modes are per thread, so a pass in the
worker and one on the loop do not mix.

A page closed while its figures waited for the worker costs no computing, and one closed while they were
computed is left alone. Not served (a notebook, a test, a script), `show`
gets the result at once. `compute` may raise ValueError (a configuration the figure cannot be made for): `show`
then gets the exception, to put its one line where the figure would be.
"""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

import panel as pn

R = TypeVar("R")
_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="explorer-figures")  # one at a time: 2 cores, one GIL


def served_document():
    """This session's Bokeh document where a server serves the page, else None (a notebook, a test, a script)."""
    doc = pn.state.curdoc
    return doc if doc is not None and doc.session_context is not None else None


def _outcome(compute: Callable[[], R]) -> R | ValueError:
    try:
        return compute()
    except ValueError as e:
        return e


def offload(compute: Callable[[], R], show: Callable[[R | ValueError], None]) -> None:
    """`show(compute())`, `compute` off the event loop where a server serves the page (see the module docstring)."""
    doc = served_document()
    if doc is None:
        show(_outcome(compute))
        return

    def closed() -> bool:
        context = doc.session_context
        return context is None or context.destroyed

    def run() -> R | ValueError | None:
        return None if closed() else _outcome(compute)  # a page closed while its job waited costs no pass

    def done(future: Future) -> None:
        if closed():  # the page was closed meanwhile
            return
        outcome = future.result()
        doc.add_next_tick_callback(lambda: show(outcome))

    _POOL.submit(run).add_done_callback(done)
