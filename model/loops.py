"""`repeat(n, body, skip)`: a loop whose iterations repeat one another's shapes, run in full where values matter and
counted n times from one iteration where a recorded meta-device pass only needs its counts.

A chunked scan (Gated DeltaNet's and Kimi delta attention's over T/64 chunks, Mamba's over ⌈√T⌉ steps) runs the
same ops on the same shapes a few hundred times per pass; recording each one is most of a hybrid preset's trace.
On meta tensors values do not exist, so once such a loop is under way each iteration adds exactly what the one before
it added: the same FLOPs, and new storages of the same sizes saved for backward, in the same order. Inside `model.passes.record` (which
installs itself with `recording`) and on plain meta tensors, `repeat` runs iterations 0, 1, 2 and n − 1 and has
the recording count iteration 2's FLOPs and saved storages n − 4 times more in between (`Recording.repeat_since`):
not iteration 1's, which may first save a storage every later iteration shares (the first state needs no gradient,
so a product with it keeps only the other factor: iteration 1 is the first to keep w, whose chunk i each one reads).
The skipped iterations' own bookkeeping (a list each one appends to) runs as `skip(i)`. Everywhere else (real tensors,
the symbolic pass's fake ones, `model.peak`'s probes, no recording) it is the plain loop. Tests check that a pass
recorded this way equals the pass of the plain loop, record for record.
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Protocol

import torch

_LOCAL = threading.local()  # .recording: the Recording of the pass this thread records, or None; .off: plain loops
# (each None until set)


class Recording(Protocol):
    """What a recorded pass lets a loop do: note where an iteration starts, and add its counts again."""

    def mark(self) -> object:
        """The recording's counts now (FLOPs, storages saved so far)."""

    def repeat_since(self, mark: object, times: int) -> None:
        """Count what was added since `mark` (FLOPs, new saved storages) `times` times more, in order."""


@contextlib.contextmanager
def _setting(name: str, value: object) -> Iterator[None]:
    """This thread's `name` set to `value` while the block runs."""
    before = getattr(_LOCAL, name, None)
    setattr(_LOCAL, name, value)
    try:
        yield
    finally:
        setattr(_LOCAL, name, before)


def recording(r: Recording | None) -> contextlib.AbstractContextManager[None]:
    """While a pass records on this thread: `repeat` may count iterations from one of them."""
    return _setting("recording", r)


def every_iteration() -> contextlib.AbstractContextManager[None]:
    """Plain loops on this thread, recorded or not (the reference that tests compare the counted loops with)."""
    return _setting("off", True)


def repeat(n: int, body: Callable[[int], None], probe: torch.Tensor,
           skip: Callable[[int], None] = lambda _i: None) -> None:
    """body(i) for i in range(n), every iteration the same ops on the same shapes (indexing chunk i of equal chunks);
    `probe` one of the loop's tensors. In a recorded pass on plain meta tensors, with n > 4: body(0), body(1),
    body(2), then iteration 2's counts n − 4 times and skip(i) for each skipped i, then body(n − 1) (see the module
    docstring)."""
    r = getattr(_LOCAL, "recording", None)
    if r is None or getattr(_LOCAL, "off", False) or type(probe) is not torch.Tensor or probe.device.type != "meta" \
            or n <= 4:  # (n last: the symbolic pass's fake n is never compared, so it sets no guard)
        for i in range(n):
            body(i)
        return
    body(0)
    body(1)
    mark = r.mark()
    body(2)
    r.repeat_since(mark, n - 4)
    for i in range(3, n - 1):
        skip(i)
    body(n - 1)
