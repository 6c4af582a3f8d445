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
computed is left alone. A card asks through its own `Latest`: a job that has not started when the card asks again
is skipped (a learner dragging a slider queues one pass, not one per state it passed), and a result for an
earlier ask is dropped. Not served (a notebook, a test, a script), `show`
gets the result at once. `compute` may raise ValueError (a configuration the figure cannot be made for): `show`
then gets the exception, to put its one line where the figure would be. Served, any other error (a bug) is logged
and reaches `show` as a ValueError that says so; not served, it is raised.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

import panel as pn

R = TypeVar("R")
K = TypeVar("K")
_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="explorer-figures")  # one at a time: 2 cores, one GIL
_SKIPPED = object()  # what a skipped job returns
SLOW_WAIT_S = 5.0  # a job that waited, or computed, longer is logged (a warning: the server is overloaded)
LOG = logging.getLogger(__name__)
_BUSY: list[tuple[str, float]] = []  # the worker's job now: (what, when it started)


def served_document():
    """This session's Bokeh document where a server serves the page, else None (a notebook, a test, a script)."""
    doc = pn.state.curdoc
    return doc if doc is not None and doc.session_context is not None else None


def closing(doc) -> Callable[[], bool]:
    """A test of whether the page of `doc` has gone: its session destroyed, or, connected now, its websocket closed
    since (Bokeh destroys a closed page's session only after its unused-session lifetime, 15 s and more)."""
    def connections() -> int:
        session = getattr(doc.session_context, "session", None)
        return getattr(session, "connection_count", 0)

    connected = connections() > 0

    def gone() -> bool:
        context = doc.session_context
        return context is None or context.destroyed or (connected and connections() == 0)
    return gone


def _outcome(compute: Callable[[], R]) -> R | ValueError:
    try:
        return compute()
    except ValueError as e:
        return e


def _served_outcome(compute: Callable[[], R]) -> R | ValueError:
    """`_outcome` in the worker: any other error (a bug) is logged with its traceback and comes back as a ValueError
    whose one line says so, for the card to show (a card never shows another state's figures without a word)."""
    try:
        return _outcome(compute)
    except Exception as e:  # noqa: BLE001
        LOG.exception("a page's figures could not be computed (%s)", getattr(compute, "__qualname__", compute))
        return ValueError(f"these figures could not be computed ({type(e).__name__}: {e}); the server's log has the "
                          "details")


def offload(compute: Callable[[], R], show: Callable[[R | ValueError], None],
            stale: Callable[[], bool] = lambda: False, doc=None) -> None:
    """`show(compute())`, `compute` off the event loop where a server serves the page (see the module docstring);
    nothing at all when `stale()` holds as the worker comes to the job. `doc`: the page's document, where the
    caller holds it; else the current one."""
    doc = doc if doc is not None else served_document()
    if doc is None:
        show(_outcome(compute))
        return

    closed, asked = closing(doc), time.monotonic()

    def run() -> R | ValueError | object:
        if closed() or stale():  # a closed page or a later ask: no pass
            return _SKIPPED
        what, start = getattr(compute, "__qualname__", str(compute)), time.monotonic()
        if start - asked > SLOW_WAIT_S:
            LOG.warning("a page's figures waited %.1f s for the worker (%s)", start - asked, what)
        _BUSY[:] = [(what, start)]
        try:
            return _served_outcome(compute)
        finally:
            _BUSY.clear()
            if (took := time.monotonic() - start) > SLOW_WAIT_S:
                LOG.warning("a page's figures took %.1f s to compute (%s)", took, what)

    def done(future: Future) -> None:
        outcome = future.result()
        if outcome is _SKIPPED or closed():  # skipped, or the page was closed meanwhile
            return
        doc.add_next_tick_callback(lambda: show(outcome))

    _POOL.submit(run).add_done_callback(done)


def worker_now() -> str:
    """What the worker computes now, in words (for a log line)."""
    busy = list(_BUSY)
    return f"computing {busy[0][0]} for {time.monotonic() - busy[0][1]:.1f} s" if busy else "idle"


class Latest(Generic[K]):
    """One card's figures for what it last asked: `ask(key, compute, show)` shows `compute()` through `show` unless
    the card asks again first. `key` (what the figures are for: a configuration, a setup) is the last one asked."""

    def __init__(self, key: K | None = None) -> None:
        self.key = key

    def ask(self, key: K, compute: Callable[[], R], show: Callable[[R | ValueError], None]) -> None:
        """Compute for `key` off the event loop (`offload`); skipped, or its result dropped, after a later ask."""
        self.key = key
        offload(compute, lambda outcome: show(outcome) if self.key == key else None, stale=lambda: self.key != key)
