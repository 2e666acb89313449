r"""
---
title: Where Attention Went Next
summary: Three later ideas that many current language models use, each as short tested code beside this tutorial's attention, rotary position embeddings, grouped-query attention, and the online softmax behind FlashAttention's tiling, with references to read on.
---

# Where Attention Went Next

The attention of these pages is the one of the original transformer (Vaswani et al., "Attention
Is All You Need", 2017). Many language models built since change three things around it, and
this page shows each in a few lines of code, tested against the pages before:

* **Rotary position embeddings** (RoPE) put the position into the scores themselves, by rotating
  every query and key, instead of adding a vector to the embedding.
* **Grouped-query attention** (GQA) lets several query heads share one key head and one value
  head, which makes the [KV cache](kv_cache.html) several times smaller.
* **The online softmax** computes the softmax, and the weighted sum of the values, one block of
  keys at a time. This is the idea of FlashAttention, one of the fused kernels the fast path of
  [`MultiHeadAttention`](mha.html) can use on a GPU.

None of the three changes what a head computes from its queries, keys and values: RoPE changes
what the queries and keys are, GQA how many keys and values there are, and the online softmax
only the order of the arithmetic.
"""

import math

import torch
from torch import nn

from .mha import MultiHeadAttention, attention, causal_mask
from .positional_encoding import sinusoidal_encoding


def rotate(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    r"""
    ## Rotary position embeddings

    RoPE (Su et al., "RoFormer: Enhanced Transformer with Rotary Position Embedding", 2021,
    arXiv:2104.09864) takes the features of a query or a key in pairs, as the
    [sinusoidal encoding](positional_encoding.html) does, and rotates pair $i$ of the vector at
    position $p$ by the angle $p \theta_i$, with the encoding's frequencies
    $\theta_i = 1 / 10000^{2i/d}$:

    $$\begin{pmatrix} x'_{2i} \\ x'_{2i+1} \end{pmatrix} = \begin{pmatrix} \cos p\theta_i & -\sin p\theta_i \\ \sin p\theta_i & \cos p\theta_i \end{pmatrix} \begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix}$$

    A rotation keeps lengths, and the dot product of two rotated vectors depends only on the
    angle between the rotations: for a query at position $p$ and a key at position $s$,
    $R(p\theta) q \cdot R(s\theta) k = q \cdot R((s - p)\theta) k$. So the score depends on the
    positions only through the offset $s - p$. What the sinusoidal encoding could only hope a
    head would learn, "the token $t$ places back", is here built into every score. Nothing is
    added to the embeddings, and the values are not rotated.

    The sines and cosines are exactly the table of the sinusoidal encoding: its even columns
    hold $\sin p\theta_i$ and its odd columns $\cos p\theta_i$. (Many implementations pair
    feature $i$ with feature $i + d/2$ instead of $2i$ with $2i + 1$; that is the same rotation
    of the features in another order.)

    :param x: queries or keys, `[..., seq, d]`, `d` even
    :param positions: the position of each of the `seq` vectors, `[seq]`
    :return: the rotated vectors, the same shape as `x`
    """
    d = x.shape[-1]
    # `[max position + 1, d]`, then the rows of the positions asked for: `[seq, d / 2]` each
    table = sinusoidal_encoding(int(positions.max()) + 1, d).to(x.dtype)[positions]
    sin, cos = table[:, 0::2], table[:, 1::2]
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def rope_scores(q: torch.Tensor, k: torch.Tensor, q_positions: torch.Tensor,
                k_positions: torch.Tensor) -> torch.Tensor:
    r"""
    ### Scores with RoPE

    The scaled scores $R(p\theta) q \cdot R(s\theta) k / \sqrt{d}$ of every query with every
    key, for queries `[..., seq_q, d]` and keys `[..., seq_k, d]` at the given positions.
    """
    return rotate(q, q_positions) @ rotate(k, k_positions).transpose(-2, -1) / math.sqrt(q.shape[-1])


class GroupedQueryAttention(MultiHeadAttention):
    r"""
    ## Grouped-query attention

    When a model generates text, each layer's [KV cache](kv_cache.html) holds a key and a value
    of $d_k$ features per head and position, $2 \cdot h \cdot d_k = 2 d_{model}$ numbers per
    position and layer, and reading them all back for every new token is a large part of the
    time a GPU spends generating. Multi-query attention (Shazeer, "Fast Transformer Decoding: One Write-Head is All You
    Need", 2019, arXiv:1911.02150) keeps $h$ query heads but only one key head and one value
    head, shared by all of them. Grouped-query attention (Ainslie et al., "GQA: Training
    Generalized Multi-Query Transformer Models from Multi-Head Checkpoints", 2023,
    arXiv:2305.13245) is the step in between: $g$ key/value heads, each shared by a group of
    $h / g$ query heads. The cache is $h / g$ times smaller; $g = h$ is multi-head attention
    again, $g = 1$ multi-query attention.

    This class is `MultiHeadAttention` with smaller key and value projections; everything else,
    the query projection, `attention`, the merging of the heads and $W^O$, is inherited.

    :param d_model: the number of features
    :param heads: the number of query heads $h$
    :param kv_heads: the number of key/value heads $g$; must divide `heads`
    """

    def __init__(self, d_model: int, heads: int, kv_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__(d_model, heads, dropout, bias)
        if heads % kv_heads != 0:
            raise ValueError(f"kv_heads={kv_heads} must divide heads={heads}: each key/value head "
                             f"serves the same number of query heads")
        self.kv_heads = kv_heads
        # $W^K$ and $W^V$ now map `d_model` to `kv_heads * d_k` features, not `d_model`.
        self.key = nn.Linear(d_model, kv_heads * self.d_k, bias=bias)
        self.value = nn.Linear(d_model, kv_heads * self.d_k, bias=bias)

    def forward(self, x: torch.Tensor, causal: bool = False) -> torch.Tensor:
        """
        :param x: `[batch, seq, d_model]` (self-attention)
        :param causal: apply a causal mask
        :return: `[batch, seq, d_model]`
        """
        batch, seq, _ = x.shape
        # Queries as before: `[batch, heads, seq, d_k]`
        q = self.split_heads(self.query(x))
        # Keys and values: `[batch, kv_heads, seq, d_k]`; this is what a KV cache would keep.
        k = self.key(x).view(batch, seq, self.kv_heads, self.d_k).transpose(1, 2)
        v = self.value(x).view(batch, seq, self.kv_heads, self.d_k).transpose(1, 2)
        # Each key/value head serves `heads // kv_heads` neighbouring query heads:
        # `repeat_interleave` makes heads $0, 1, ..., h/g - 1$ use key/value head 0, and so on.
        # `[batch, kv_heads, seq, d_k]` → `[batch, heads, seq, d_k]`. (Fused kernels read the
        # shared heads without copying them: `scaled_dot_product_attention(..., enable_gqa=True)`.)
        group = self.heads // self.kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        mask = causal_mask(seq, device=x.device)[:, None] if causal else None
        out, weights = attention(q, k, v, mask, self.dropout)
        self.attn = weights.detach()
        return self.output(self.merge_heads(out))

    def cache_numbers_per_position(self) -> int:
        """The numbers a KV cache keeps per position in this layer: a key and a value per
        key/value head."""
        return 2 * self.kv_heads * self.d_k


def online_softmax(scores: torch.Tensor, block: int) -> torch.Tensor:
    r"""
    ## The online softmax

    A stable softmax subtracts the largest score of the row before taking exponentials (see
    [the scores page](scores_and_softmax.html)): $\operatorname{softmax}(s)_j = e^{s_j - m} / \ell$
    with $m = \max_j s_j$ and $\ell = \sum_j e^{s_j - m}$. Computed as written, that needs the
    whole row for $m$ before the first exponential. The online softmax (Milakov and Gimelshein,
    "Online normalizer calculation for softmax", 2018, arXiv:1805.02867) reads the row in blocks
    and keeps a running maximum $m$ and a running sum $\ell$. When a block brings a larger
    maximum $m'$, the sum so far was taken relative to the old one, and multiplying it by
    $e^{m - m'}$ puts it relative to the new one:

    $$\ell' = \ell \, e^{m - m'} + \sum_{j \in \text{block}} e^{s_j - m'}$$

    After the last block, $m$ and $\ell$ are the maximum and the sum of the whole row, and no
    exponential has ever been taken of a number above 0, so nothing overflows however large the
    scores are.

    :param scores: `[..., n]`
    :param block: how many scores are read at a time
    :return: the softmax over the last axis, `[..., n]`
    """
    m = torch.full(scores.shape[:-1], -math.inf, dtype=scores.dtype)
    total = torch.zeros(scores.shape[:-1], dtype=scores.dtype)
    for start in range(0, scores.shape[-1], block):
        s = scores[..., start:start + block]
        m_new = torch.maximum(m, s.amax(dim=-1))
        # In the first block $m = -\infty$ and $e^{-\infty} = 0$: the empty sum stays 0.
        total = total * torch.exp(m - m_new) + torch.exp(s - m_new[..., None]).sum(dim=-1)
        m = m_new
    return torch.exp(scores - m[..., None]) / total[..., None]


def tiled_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block: int) -> torch.Tensor:
    r"""
    ## Attention in tiles, as FlashAttention computes it

    FlashAttention (Dao et al., "FlashAttention: Fast and Memory-Efficient Exact Attention with
    IO-Awareness", 2022, arXiv:2205.14135) applies the same rescaling to the output. For each
    block of keys it computes the block's scores, updates $m$ and $\ell$, and adds the block's
    values weighted by $e^{s_j - m'}$ to a running output $o$, which it rescales by
    $e^{m - m'}$ like the sum. At the end $o / \ell$ is the attention output. The
    `[seq_q, seq_k]` matrix of scores never exists at once, only one `[seq_q, block]` tile of it:
    on a GPU a tile fits in the fast memory next to the arithmetic units, so the kernel reads
    the queries, keys and values from the slow main memory tile by tile and never writes the
    scores or the weights there. The result is the same as [`attention`](mha.html#attention) up to rounding; only the
    order of the additions differs. (The real kernels also tile the queries, and apply masks and
    dropout inside each tile; this sketch leaves masks and dropout out.)

    :param q: `[..., seq_q, d_k]`; `k`, `v`: `[..., seq_k, d_k]`
    :param block: how many keys are read at a time
    :return: `[..., seq_q, d_k]`
    """
    scale = 1 / math.sqrt(q.shape[-1])
    m = torch.full(q.shape[:-1], -math.inf, dtype=q.dtype)
    total = torch.zeros(q.shape[:-1], dtype=q.dtype)
    out = torch.zeros_like(q)
    for start in range(0, k.shape[-2], block):
        # One tile of scaled scores: `[..., seq_q, block]`
        s = q @ k[..., start:start + block, :].transpose(-2, -1) * scale
        m_new = torch.maximum(m, s.amax(dim=-1))
        correction = torch.exp(m - m_new)
        p = torch.exp(s - m_new[..., None])
        total = total * correction + p.sum(dim=-1)
        out = out * correction[..., None] + p @ v[..., start:start + block, :]
        m = m_new
    return out / total[..., None]

# ## Reading on
#
# Other ideas that changed attention since, with the papers that introduced them (the site makes
# no outside request, so these are references, not links):
#
# * ALiBi, a position bias added to each score in proportion to the distance, instead of any
#   position embedding: Press, Smith and Lewis, "Train Short, Test Long: Attention with Linear
#   Biases Enables Input Length Extrapolation", 2021, arXiv:2108.12409.
# * FlashAttention-2, with better work partitioning on the GPU: Dao, "FlashAttention-2: Faster
#   Attention with Better Parallelism and Work Partitioning", 2023, arXiv:2307.08691.
# * Sparse and local attention, where each query sees only some of the keys: Child et al.,
#   "Generating Long Sequences with Sparse Transformers", 2019, arXiv:1904.10509; Beltagy,
#   Peters and Cohan, "Longformer: The Long-Document Transformer", 2020, arXiv:2004.05150.
#
# ## Exercises
#
# Break the page and run `python -m pytest tests/test_tutorial_where_next.py` to see which test
# catches it:
#
# 1. Swap `sin` and `cos` in `rotate`.
# 2. Use `repeat` instead of `repeat_interleave` in `GroupedQueryAttention`.
# 3. Leave out the rescaling `out * correction[..., None]` in `tiled_attention`.
#
# <details><summary>Expected answers</summary>
#
# 1. `test_rope_is_a_rotation_by_position` and `test_rope_uses_the_sinusoidal_table` fail:
#    position 0 is no longer left as it is. Yet
#    `test_rope_scores_depend_only_on_the_offset` still passes: the swap rotates by
#    $\pi/2 - p\theta_i$, still a rotation that grows with the position, so the scores still depend
#    on the offset only (with its sign flipped). A property alone is not a specification.
# 2. `test_gqa_equals_sdpa_with_enable_gqa` fails: `repeat` gives query head 1 the key/value head
#    1 instead of 0, so the groups are interleaved instead of neighbouring. With `kv_heads == heads`
#    or `kv_heads == 1` both give the same, which is why that test uses 4 heads in 2 groups.
# 3. `test_tiled_attention_equals_attention` fails whenever a later block raises the maximum:
#    the values added before were weighted for the old maximum. With a single block (`block=64`)
#    it passes, since there is nothing to rescale.
#
# </details>
