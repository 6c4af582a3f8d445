"""The experts' grouped matmul: every routed expert's matrix over its share of the dispatched tokens, as one op.

`grouped_mm(x, w, counts)`: x (M, n_in) holds the M = B·T·k dispatched (token, expert) pairs sorted by expert,
w (E, n_in, n_out) every expert's matrix, counts (E,) the rows of each expert (they sum to M); row block e of the
output, counts[e] rows, is that block of x times w[e]. On the CPU it runs as one matmul per expert (`torch.mm` over
the expert's rows: the real routing of a real pass); on the meta device and under fake tensors (`model.symbolic`) its
registered fake gives the output's shape, (M, n_out), whatever the routing, because no row is dropped or padded.
Its backward is an op of its own, `grouped_mm_backward`: grad x (M, n_in) and grad w (E, n_in, n_out).

Counted, as torch counts a matmul (FLOPs, not MACs): 2·M·n_in·n_out forward and twice that backward, whatever the
routing (the shares add up to M). Both formulas are registered in torch's flop registry, so `FlopCounterMode` and
`model.passes` count them; torch has no formula for transformers' grouped_mm (it counts 0), hence the issue's trap.
Autograd keeps x, w and counts for the backward pass (`ctx.save_for_backward`), the same storages on every device.
"""
from __future__ import annotations

import torch
from torch.utils.flop_counter import register_flop_formula

NAMESPACE = "transformer_shapes"


@torch.library.custom_op(f"{NAMESPACE}::grouped_mm", mutates_args=())
def grouped_mm(x: torch.Tensor, w: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """Rows of x, sorted by expert, times their expert's matrix: (M, n_in) -> (M, n_out)."""
    out = x.new_empty(x.shape[0], w.shape[2])
    start = 0
    for e, n in enumerate(counts.tolist()):
        torch.mm(x[start:start + n], w[e], out=out[start:start + n])
        start += n
    return out


@grouped_mm.register_fake
def _(x: torch.Tensor, w: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    return x.new_empty(x.shape[0], w.shape[2])


@torch.library.custom_op(f"{NAMESPACE}::grouped_mm_backward", mutates_args=())
def grouped_mm_backward(grad: torch.Tensor, x: torch.Tensor, w: torch.Tensor,
                        counts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """grad x = grad · w[e]ᵀ over each expert's rows; grad w[e] = x[rows]ᵀ · grad[rows] (0 for an expert without)."""
    grad_x, grad_w = torch.empty_like(x), torch.zeros_like(w)
    start = 0
    for e, n in enumerate(counts.tolist()):
        rows = slice(start, start + n)
        torch.mm(grad[rows], w[e].T, out=grad_x[rows])
        torch.mm(x[rows].T, grad[rows], out=grad_w[e])
        start += n
    return grad_x, grad_w


@grouped_mm_backward.register_fake
def _(grad: torch.Tensor, x: torch.Tensor, w: torch.Tensor, counts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.empty_like(x), torch.empty_like(w)


def _setup(ctx, inputs, output) -> None:  # noqa: ARG001 (torch passes these by name)
    ctx.save_for_backward(*inputs)  # x, w, counts


def _backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None]:
    x, w, counts = ctx.saved_tensors
    grad_x, grad_w = grouped_mm_backward(grad, x, w, counts)
    return grad_x, grad_w, None


grouped_mm.register_autograd(_backward, setup_context=_setup)


@register_flop_formula(torch.ops.transformer_shapes.grouped_mm)
def grouped_mm_flop(x_shape, w_shape, _counts_shape, *args, out_shape=None, **kwargs) -> int:
    """2·M·n_in·n_out: every dispatched row times its expert's (n_in, n_out) matrix, whatever the routing."""
    return 2 * x_shape[0] * x_shape[1] * w_shape[2]


@register_flop_formula(torch.ops.transformer_shapes.grouped_mm_backward)
def grouped_mm_backward_flop(_grad_shape, x_shape, w_shape, _counts_shape, *args, out_shape=None, **kwargs) -> int:
    """4·M·n_in·n_out: grad x and grad w, a matmul of the forward's size each."""
    return 4 * x_shape[0] * x_shape[1] * w_shape[2]
