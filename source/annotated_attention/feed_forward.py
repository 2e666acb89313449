r"""
---
title: Position-wise Feed-Forward Network
summary: The two-layer network that a transformer layer applies to every position on its own, in PyTorch.
---

# Position-wise Feed-Forward Network

[Attention](mha.html) moves information *between* positions. For given weights it is exactly
linear in the values: each output is a weighted average of value vectors, and the only
nonlinearity, the softmax, acts on the scores. The feed-forward network is the part of a
transformer layer that *transforms* each position's vector on its own, through a nonlinearity. It is a small two-layer network, applied to every position with the same weights:

$$\operatorname{FFN}(x) = \max(0, x W_1 + b_1) W_2 + b_2$$

with $W_1 \in \mathbb{R}^{d_{model} \times d_{ff}}$ and $W_2 \in \mathbb{R}^{d_{ff} \times d_{model}}$.
The hidden size $d_{ff}$ is usually four times $d_{model}$ (2048 and 512 in the original paper).

"Position-wise" means that no information crosses between positions here: the output at
position $i$ depends only on the input at position $i$. The tests check this.
"""

import torch
from torch import nn


class FeedForward(nn.Module):
    """
    ## The module

    :param d_model: the size of the token vectors
    :param d_ff: the hidden size
    :param dropout: dropout probability on the hidden activations
    :param activation: the nonlinearity; ReLU as in the original paper, `nn.GELU()` is a common
        alternative
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.1,
                 activation: nn.Module | None = None):
        super().__init__()
        # First layer, $W_1$ and $b_1$: `d_model` → `d_ff`
        self.layer1 = nn.Linear(d_model, d_ff)
        # Second layer, $W_2$ and $b_2$: `d_ff` → `d_model`
        self.layer2 = nn.Linear(d_ff, d_model)
        self.activation = activation if activation is not None else nn.ReLU()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        :param x: `[batch, seq, d_model]` (any number of leading axes works)
        :return: `[batch, seq, d_model]`
        """
        # `nn.Linear` acts on the last axis and repeats over all the others, so one call handles
        # every position of every sequence: `[batch, seq, d_model]` → `[batch, seq, d_ff]`.
        h = self.activation(self.layer1(x))
        # Dropout on the hidden activations, active only in training mode
        h = self.dropout(h)
        # Back to the model size: `[batch, seq, d_ff]` → `[batch, seq, d_model]`
        return self.layer2(h)

# ## Exercises
#
# 1. Move the dropout after `layer2`, then run `python -m pytest tests/test_tutorial_subtle_bugs.py`.
# 2. Replace `nn.ReLU()` by `nn.Identity()`: the network is then a single linear map. Which test
#    of `tests/test_attention.py` still passes, and why?
#
# <details><summary>Expected answers</summary>
#
# 1. `test_feed_forward_dropout_is_on_the_hidden_activations` fails: with everything dropped, the
#    output is 0 instead of the bias of `layer2`.
# 2. Only `test_feed_forward_is_position_wise` fails, at its formula with `relu`. Its first check
#    still holds, because a single linear map is position-wise too, and every other test passes:
#    none of them needs the nonlinearity, which is why the formula is checked.
#
# </details>
