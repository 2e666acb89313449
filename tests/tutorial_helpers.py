"""Helpers that the tutorial's tests share.

`perturb` is what every test that compares two paths or two implementations runs first. A freshly
initialised model hides mistakes: every layer norm starts as (gain 1, bias 0), so two of them can
be swapped, dropped or shared and nothing changes; biases that start equal (the norms', or any
zeroed one) can be exchanged the same way. Moving each parameter by its own seeded random amount
makes every parameter different from every other, so a swap shows in the output.
"""
from __future__ import annotations

import torch
from torch import nn


def perturb(module: nn.Module, seed: int = 0, scale: float = 0.2) -> nn.Module:
    """Add `scale` times seeded standard-normal noise to every parameter of `module` (norm
    weights and biases, linear biases, embeddings, everything), in place; returns `module`.

    The noise comes from a generator of its own, so the global random state (which dropout and
    the tests' inputs draw from) is left alone, and the same seed gives the same parameters."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            noise = torch.randn(p.shape, generator=g, dtype=torch.float64)
            p.add_(scale * noise.to(p.dtype))
    return module


def all_distinct(module: nn.Module) -> bool:
    """True when no two parameters of the same shape are equal (the property `perturb` gives)."""
    params = list(module.parameters())
    for i, a in enumerate(params):
        for b in params[i + 1:]:
            if a.shape == b.shape and torch.equal(a, b):
                return False
    return True
