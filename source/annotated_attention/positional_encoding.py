r"""
---
title: Sinusoidal Positional Encoding
summary: Why attention needs position information, and the fixed sine and cosine encoding from the original transformer, in PyTorch.
---

# Sinusoidal Positional Encoding

Attention without a mask does not know the order of the tokens. If you shuffle the keys and
the values in the same way, every query gets exactly the same result, because a weighted sum does
not care about the order of its terms. A causal mask does reveal some order: query $i$ sees
exactly $i + 1$ keys, so a model could in principle work out positions by counting. That is an
indirect and weak signal, though, and a language model needs the order all the time, so we add
a vector that depends on the position to each token embedding before the first layer.

The original transformer uses fixed sines and cosines of different frequencies. For position
$p$ and feature pair $i = 0, 1, ..., d_{model}/2 - 1$:

$$PE_{p, 2i} = \sin\Big(\frac{p}{10000^{2i / d_{model}}}\Big)$$

$$PE_{p, 2i+1} = \cos\Big(\frac{p}{10000^{2i / d_{model}}}\Big)$$

The wavelengths grow geometrically from $2\pi$ (feature pair 0) to almost $10000 \cdot 2\pi$
(the last pair), so the first features tell apart nearby positions and the last ones tell apart
distant ones. Because $\sin(a + b)$ and $\cos(a + b)$ are linear combinations of $\sin a$ and
$\cos a$, the encoding of position $p + t$ is a fixed linear function (a rotation in each feature
pair) of the encoding of position $p$. This makes it easy for attention to find "the token $t$
places back".
"""

import math

import torch
from torch import nn


def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
    r"""
    ## The encoding table

    :param max_len: the number of positions
    :param d_model: the number of features; must be even, since features come in sine/cosine pairs
    :return: `[max_len, d_model]`; row $p$ is the encoding of position $p$
    """
    if d_model % 2 != 0:
        raise ValueError(f"d_model must be even for sinusoidal encodings, got {d_model}")
    # Positions $p$ as a column: `[max_len, 1]`
    position = torch.arange(max_len, dtype=torch.float32)[:, None]
    # The frequencies $1 / 10000^{2i/d_{model}}$, one per feature pair: `[d_model / 2]`.
    # We compute them as $\exp(-\frac{2i}{d_{model}} \log 10000)$, which is the same number.
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)
    frequency = torch.exp(-two_i / d_model * math.log(10000.0))
    # The angles $p / 10000^{2i/d_{model}}$ for every position and pair; broadcasting
    # `[max_len, 1]` times `[d_model / 2]` gives `[max_len, d_model / 2]`.
    angle = position * frequency
    pe = torch.zeros(max_len, d_model)
    # Even features get the sines and odd features the cosines.
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe


class PositionalEncoding(nn.Module):
    """
    ## Adding the encoding to the embeddings

    :param d_model: the number of features
    :param max_len: the longest sequence the model will see
    :param dropout: dropout applied to the sum, as in the original paper
    """

    def __init__(self, d_model: int, max_len: int, dropout: float = 0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        # A buffer moves with the module between devices but is not a parameter, so the
        # optimizer leaves it alone. `persistent=False` keeps it out of checkpoints: it can be
        # recomputed at any time.
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        :param x: token embeddings, `[batch, seq, d_model]`
        :return: `[batch, seq, d_model]`
        """
        seq = x.shape[1]
        if seq > self.pe.shape[0]:
            raise ValueError(f"sequence length {seq} is longer than max_len={self.pe.shape[0]}: "
                             f"create the model with a larger max_len")
        # `pe[:seq]` is `[seq, d_model]` and broadcasts over the batch axis. Dropout comes
        # after the sum, so that it acts on what the first layer receives.
        return self.dropout(x + self.pe[:seq].to(x.dtype))

# ## Exercises
#
# Break the encoding and run `python -m pytest tests/test_attention.py
# tests/test_tutorial_subtle_bugs.py` to see which test catches it:
#
# 1. Put the cosines in the even features and the sines in the odd ones.
# 2. Apply dropout to the embeddings before adding the encoding.
# 3. Use `torch.arange(0, d_model)` instead of `torch.arange(0, d_model, 2)` for $2i$.
#
# <details><summary>Expected answers</summary>
#
# 1. `test_positional_encoding_matches_formula` fails: position 0 is then $(1, 0, 1, 0, ...)$
#    instead of $(0, 1, 0, 1, ...)$.
# 2. `test_positional_encoding_dropout_comes_after_adding_the_encoding` fails: the encoding would
#    reach the layers undropped.
# 3. The angles get `d_model` columns instead of `d_model / 2`, so writing them into the even
#    features raises a `RuntimeError` about mismatched sizes, and every test that builds an
#    encoding fails.
#
# </details>
