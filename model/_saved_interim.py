"""INTERIM, until `Trace.saved_bytes` lands on main (issue 7): the bytes autograd keeps for one step's backward.

Same definition as issue 7's: `torch.autograd.graph.saved_tensors_hooks` on `GPT(cfg)` (one block, on the meta
device, parameters requiring grad, at `dtype`), the sum of `untyped_storage().nbytes()` over the distinct
storages saved tensors keep alive, the parameters' own storages excluded; block part × L.
`model.training` reads `trace(cfg, dtype).saved_bytes` when it exists and this module only otherwise;
delete this file after merging main.
"""
from __future__ import annotations

import functools

import torch

from .config import Config
from .gpt import GPT

TORCH_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


@functools.lru_cache(maxsize=512)
def saved_bytes(cfg: Config, dtype: str) -> int:
    """Saved-for-backward bytes of one forward pass of all L blocks: outside part + L × one block's part."""
    with torch.device("meta"):
        model = GPT(cfg, depth=1).to(TORCH_DTYPES[dtype])
    params = {p.untyped_storage()._cdata for p in model.parameters()}
    where: dict[int, tuple[str, int]] = {}
    part = ["rest"]

    def pack(t: torch.Tensor) -> torch.Tensor:
        s = t.untyped_storage()
        if s._cdata not in params and s._cdata not in where:
            where[s._cdata] = (part[0], s.nbytes())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        idx = torch.zeros(cfg.B, cfg.T, dtype=torch.long, device="meta")
        x = model.embed_tokens(idx)
        part[0] = "block"
        y = model.blocks[0](x)
        part[0] = "rest"
        model.logits_and_loss(y, idx)
    block = sum(n for p, n in where.values() if p == "block")
    rest = sum(n for p, n in where.values() if p == "rest")
    return rest + cfg.L * block
