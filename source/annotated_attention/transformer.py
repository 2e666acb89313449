r"""
---
title: A Pre-Norm Transformer and a Small Language Model
summary: A pre-norm transformer layer built from multi-head attention and a feed-forward network, and a small decoder-only model that predicts the next token.
---

# A Pre-Norm Transformer and a Small Language Model

This page puts the parts together. A **transformer layer** combines
[multi-head attention](mha.html) (positions exchange information) with a
[feed-forward network](feed_forward.html) (each position is transformed on its own).
A stack of such layers, with [positional encodings](positional_encoding.html) at the bottom and a
projection to the vocabulary at the top, is a **decoder-only** language model: it reads a
sequence of tokens and, at every position, predicts the token that comes next.

The [experiment](experiment.html) trains this model on characters.
"""

from dataclasses import dataclass

import torch
from torch import nn

from .feed_forward import FeedForward
from .mha import MultiHeadAttention
from .positional_encoding import PositionalEncoding


class TransformerLayer(nn.Module):
    r"""
    ## Transformer layer (pre-norm)

    Each of the two sub-layers is wrapped in a residual connection, and the input of each
    sub-layer is normalised first:

    $$x \leftarrow x + \operatorname{MHA}(\operatorname{LN}(x))$$

    $$x \leftarrow x + \operatorname{FFN}(\operatorname{LN}(x))$$

    The original transformer normalised *after* the residual addition (post-norm,
    $\operatorname{LN}(x + \operatorname{MHA}(x))$). In the pre-norm arrangement the residual
    path from the input to the output is a plain sum that no normalisation touches, so gradients
    reach the lower layers undamped. Pre-norm models usually train without a long learning-rate
    warm-up and are less sensitive to the learning rate, which is why most recent models use it.

    :param d_model: the size of the token vectors
    :param heads: the number of attention heads
    :param d_ff: the hidden size of the feed-forward network
    :param dropout: dropout probability (attention weights, feed-forward and residual branches)
    :param fused: use the fused attention kernel
    """

    def __init__(self, d_model: int, heads: int, d_ff: int, dropout: float = 0.1,
                 fused: bool = False):
        super().__init__()
        # Layer normalisation before attention and before the feed-forward network
        self.norm_attn = nn.LayerNorm(d_model)
        self.norm_ff = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, heads, dropout=dropout, fused=fused)
        self.ff = FeedForward(d_model, d_ff, dropout=dropout)
        # Dropout on the output of each sub-layer, before it is added to the residual path
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None,
                causal: bool = False) -> torch.Tensor:
        """
        :param x: `[batch, seq, d_model]`
        :param mask: an attention mask, see [the mask convention](mha.html#mask-convention)
        :param causal: apply a causal mask
        :return: `[batch, seq, d_model]`
        """
        # Self-attention on the normalised input; queries, keys and values all come from `h`.
        h = self.norm_attn(x)
        x = x + self.dropout(self.attn(h, mask=mask, causal=causal))
        # The feed-forward network on the normalised result
        h = self.norm_ff(x)
        x = x + self.dropout(self.ff(h))
        return x


@dataclass
class ModelConfig:
    """
    ## Model configuration

    A plain dataclass, so that it can be saved in a checkpoint as a dictionary and the model can
    be rebuilt from it.
    """
    # The number of distinct tokens
    vocab_size: int
    # The size of the token vectors, $d_{model}$
    d_model: int = 128
    # The number of attention heads
    heads: int = 4
    # The number of transformer layers
    layers: int = 2
    # The hidden size of the feed-forward networks, $d_{ff}$
    d_ff: int = 512
    # The longest sequence the model accepts
    max_len: int = 256
    # Dropout probability
    dropout: float = 0.1
    # Compute attention with the fused kernel (same results, faster)
    fused: bool = True


class DecoderOnlyTransformer(nn.Module):
    """
    ## A decoder-only language model

    tokens → embedding + positional encoding → $N$ transformer layers → final layer norm →
    linear projection to one score (logit) per vocabulary entry.

    Every layer uses a causal mask, so the prediction at position $t$ depends only on the tokens
    at positions $0, ..., t$. One forward pass therefore trains $seq$ predictions at once: the
    target at position $t$ is the token at position $t + 1$.
    """

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        # A learned vector for each token: `[vocab_size, d_model]`
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.pos = PositionalEncoding(config.d_model, config.max_len, config.dropout)
        self.layers = nn.ModuleList(
            TransformerLayer(config.d_model, config.heads, config.d_ff, config.dropout,
                             fused=config.fused)
            for _ in range(config.layers))
        # With pre-norm layers the residual stream is never normalised inside the stack, so we
        # normalise once more before the output projection.
        self.norm = nn.LayerNorm(config.d_model)
        # The output projection to the vocabulary
        self.head = nn.Linear(config.d_model, config.vocab_size)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """
        :param tokens: token ids, `[batch, seq]`
        :return: logits, `[batch, seq, vocab_size]`; position $t$ scores the candidates for the
            token at $t + 1$
        """
        # `[batch, seq]` → `[batch, seq, d_model]`. `nn.Embedding` starts with entries of
        # variance 1, and the features of the positional encoding have a mean square of 1/2
        # (each sine and cosine pair has a squared norm of 1): the same order of magnitude, so
        # we add the two directly.
        # (The original paper multiplies the embeddings by $\sqrt{d_{model}}$ and gives no
        # reason. A common reading: its embedding matrix is shared with the output projection
        # (weight tying), whose initialisation makes entries far smaller than 1, and the factor
        # brings the embeddings back to the size of the encoding. Here the two matrices are not
        # tied and `nn.Embedding` already starts at variance 1, so we use no factor.)
        x = self.pos(self.embed(tokens))
        # The layers, each with a causal mask. Passing `causal=True` instead of a mask tensor lets
        # the fused path pick kernels that skip the blocked half of the score matrix.
        for layer in self.layers:
            x = layer(x, causal=True)
        # `[batch, seq, d_model]` → `[batch, seq, vocab_size]`
        return self.head(self.norm(x))

    def num_parameters(self) -> int:
        """The number of trainable numbers in the model."""
        return sum(p.numel() for p in self.parameters())

# ## Exercises
#
# Break the layer and run `python -m pytest tests/test_tutorial_subtle_bugs.py` to see which
# test catches it:
#
# 1. Move the dropout of a sub-layer onto the residual sum: `x = self.dropout(x + ...)`.
# 2. Normalise after the residual addition (post-norm) instead of before.
# 3. Leave out the final layer norm `self.norm` of the model.
#
# <details><summary>Expected answers</summary>
#
# 1. `test_dropout_sits_on_the_residual_branches_only` fails: dropout then also drops the
#    residual path, which should carry the input unchanged.
# 2. `test_pre_norm_layer_structure` (`tests/test_attention.py`) fails: it compares the layer
#    with the pre-norm formula, with randomised norms.
# 3. `test_model_applies_embedding_encoding_layers_final_norm_and_head_in_order` fails.
#
# </details>
