r"""
---
title: Multi-Head Attention
summary: A line-by-line PyTorch implementation of multi-head attention, with shapes at every step.
---

# Multi-Head Attention

Attention is a way for each position in a sequence to collect information from other positions.
Every position asks a question (its **query**), every position advertises what it contains (its
**key**), and every position offers something to pass on (its **value**). A query is compared with
all keys; the better a key matches, the more of its value flows into the result for that query.

This page implements the version from
[Attention Is All You Need](https://arxiv.org/abs/1706.03762) (Vaswani et al., 2017):

$$\operatorname{Attention}(Q, K, V) = \mathop{softmax}\Bigg(\frac{Q K^\top}{\sqrt{d_k}}\Bigg) V$$

**Multi-head** attention runs $h$ of these in parallel. Each head has its own learned projections,
so each head can look for a different kind of match (for example, one head follows the previous
token and another follows a matching bracket):

$$\operatorname{head}_i = \operatorname{Attention}(Q W^Q_i, K W^K_i, V W^V_i)$$

$$\operatorname{MultiHead}(Q, K, V) = \operatorname{Concat}(\operatorname{head}_1, ..., \operatorname{head}_h) W^O$$

## Shapes used on this page

We write the shape of every tensor next to the code. The names are:

* `batch`: the number of sequences processed together,
* `seq_q`: the number of queries, `seq_k`: the number of keys (and values);
  in self-attention both are the sequence length `seq`,
* `d_model`: the size of each token vector,
* `heads`: the number of heads $h$, and `d_k` $= d_{model} / h$: the size of each head.

Inputs and outputs are **batch-first**, `[batch, seq, d_model]`, the same layout as
`torch.nn.MultiheadAttention(batch_first=True)`.

If you wonder how $QK^\top$ and the softmax work shape by shape, read
[the scores and the softmax](scores_and_softmax.html) next to this page.
The [transformer page](transformer.html) uses this module to build a small language model.
"""

# ## Mask convention
#
# A mask is a **boolean** tensor in which `True` means *this query may attend to this key*.
# It always has **three axes**, `[batch, seq_q, seq_k]`, and an axis of size 1 stands for "the
# same for all". These are the shapes accepted:
#
# * `[batch, seq_q, seq_k]`: a separate mask for every sequence,
# * `[batch, 1, seq_k]`: a padding mask, the same for every query (what `padding_mask` returns),
# * `[1, seq_q, seq_k]`: one mask for the whole batch (what `causal_mask` returns),
# * `[1, 1, seq_k]`, for completeness.
#
# Any other shape raises an error that lists these shapes. A 2-D mask is refused on purpose: other
# code often passes a padding mask as `[batch, seq_k]`, and whenever `batch == seq_q` such a mask
# would broadcast as if it were `[seq_q, seq_k]`, silently giving every *query* the mask of one
# *sequence*. With three axes there is only one way to read a mask.
#
# A query whose row of the mask has no `True` at all (for example a query of a sequence of length
# 0) has nothing to attend to. We define its attention weights and its attention output (the
# weighted sum of the values, before the output projection $W^O$) to be **zero**, on both paths
# below. The module's output for such a query is therefore $W^O$'s bias, which is zero only for
# a module built with `bias=False`. Be careful when you compare with other code: `torch.nn.MultiheadAttention`
# uses the opposite polarity for boolean masks (`True` = blocked).
import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn


def causal_mask(seq_len: int, device: Optional[torch.device] = None) -> torch.Tensor:
    r"""
    ## Causal mask

    In a language model, position $i$ predicts the next token, so it must not see positions after
    $i$. The causal mask allows query $i$ to attend to keys $j \le i$ and blocks the rest.

    ![Attention weights under a causal mask](figures/causal_mask.svg)

    :param seq_len: the sequence length
    :param device: where to create the mask
    :return: a boolean tensor of shape `[1, seq_len, seq_len]`; the axis of size 1 broadcasts
        over the batch
    """
    # `tril` keeps the main diagonal and everything below it, so row $i$ is `True` in
    # columns $0, ..., i$. `[None]` adds the batch axis.
    return torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).tril()[None]


def padding_mask(lengths: torch.Tensor, seq_len: int) -> torch.Tensor:
    """
    ## Padding mask

    Sequences in a batch often have different lengths. We pad the short ones to `seq_len` and
    block the padding positions as keys, so that no query takes information from them.

    ![Attention weights with a padding mask](figures/padding_mask.svg)

    :param lengths: the real length of each sequence, shape `[batch]`
    :param seq_len: the padded length
    :return: a boolean tensor of shape `[batch, 1, seq_len]`; the axis of size 1 broadcasts over
        the queries, because the same keys are padding for every query
    """
    if lengths.dim() != 1:
        raise ValueError(f"lengths must have shape [batch], got {list(lengths.shape)}")
    # Key positions `[seq_len]`
    positions = torch.arange(seq_len, device=lengths.device)
    # Compare every position with every length: `[batch, seq_len]`
    keep = positions[None, :] < lengths[:, None]
    # Add the query axis: `[batch, 1, seq_len]`
    return keep[:, None, :]


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
              mask: Optional[torch.Tensor] = None,
              dropout: Optional[nn.Module] = None) -> tuple[torch.Tensor, torch.Tensor]:
    """
    ## Scaled dot-product attention

    This function does the work for all heads at once. The head axis is just one more batch axis
    here: the matrix products below act on the last two axes and repeat over the others.

    :param q: queries, `[batch, heads, seq_q, d_k]`
    :param k: keys, `[batch, heads, seq_k, d_k]`
    :param v: values, `[batch, heads, seq_k, d_k]`
    :param mask: boolean, `True` = may attend, with four axes, each of its full size or 1:
        `[batch or 1, heads or 1, seq_q or 1, seq_k]`
    :param dropout: applied to the attention weights, if given
    :return: the output `[batch, heads, seq_q, d_k]` and the attention weights
        `[batch, heads, seq_q, seq_k]`
    """
    d_k = q.shape[-1]
    if mask is not None and mask.dim() != 4:
        raise ValueError(f"mask must have four axes [batch, heads, seq_q, seq_k] (1 where it "
                         f"broadcasts), got {list(mask.shape)}")

    # ### Scores
    #
    # The score of query $i$ and key $j$ is the dot product $q_i \cdot k_j$. For all pairs at once
    # this is one matrix product per batch element and head, $Q K^\top$:
    # `[batch, heads, seq_q, d_k]` times `[batch, heads, d_k, seq_k]` gives
    # `[batch, heads, seq_q, seq_k]`.
    #
    # ### Why divide by $\sqrt{d_k}$
    #
    # Suppose the components of $q$ and $k$ are independent, with mean 0 and variance 1.
    # Each product $q_m k_m$ then has mean 0 and variance 1, and the dot product adds $d_k$ of them:
    #
    # $$\operatorname{Var}(q \cdot k) = \operatorname{Var}\Big(\sum_{m=1}^{d_k} q_m k_m\Big) = d_k$$
    #
    # So the scores spread out more as heads get wider. What the softmax sees is the *spread* of
    # a row, not the size of its scores (adding a constant to a row changes nothing). When the
    # scores in a row lie far apart, the softmax approaches a one-hot vector, and there its
    # gradient almost vanishes: the derivative
    # $\frac{\partial p_i}{\partial s_j} = p_i (\delta_{ij} - p_j)$ is close to 0 when every
    # $p$ is close to 0 or 1. Dividing by $\sqrt{d_k}$ makes the variance of the scores
    # independent of the head size: it is 1 under the assumption above, whatever $d_k$.
    #
    # In a real model the assumption does not hold exactly. At initialisation, PyTorch's
    # `nn.Linear` draws its weights from $U(-1/\sqrt{d_{model}}, 1/\sqrt{d_{model}})$, so for
    # inputs of variance 1 (the output of a layer norm) each component of $q$ and $k$ has a
    # variance of about $1/3$, and the scaled scores have a variance of about
    # $\frac{1}{3} \cdot \frac{1}{3} = \frac{1}{9} \approx 0.11$: the weights start close to
    # uniform. `score_variance_at_init` below measures it and the tests assert it. The scaling
    # keeps that starting point the same for every head size, and it keeps the scores in a
    # range where the softmax still learns as the projections grow during training.
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)

    # ### Masking
    #
    # Blocked pairs get the score $-\infty$. Since $\exp(-\infty) = 0$, they receive exactly zero
    # weight after the softmax. `~mask` turns "may attend" into "blocked", and broadcasting
    # stretches a `[batch, 1, seq_q, seq_k]` or `[1, 1, seq_q, seq_k]` mask over the heads.
    #
    # A row of only $-\infty$ has no softmax: it would compute $0 / 0$, which is NaN, and the
    # NaN would spread into the output and the gradients. We find such rows (`empty`,
    # `[batch, heads, seq_q, 1]`), give them the finite score 0 so that the softmax stays
    # defined, and set their weights to zero after it.
    empty = None
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
        empty = ~mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(empty, 0.0)

    # ### Softmax over the keys
    #
    # $$p_{ij} = \frac{\exp(s_{ij})}{\sum_{j'} \exp(s_{ij'})}$$
    #
    # We normalise over the **last** axis (`dim=-1`), the key axis. Each query then owns one
    # probability distribution over the keys: the weights in a row are non-negative and sum to 1.
    # The output for that query is a weighted average of the values, which is why the weights
    # have to sum to 1 along the key axis and not along the query axis. (Rows without any
    # visible key are the exception: their weights are all zero.)
    #
    # `softmax` subtracts the largest score of each row before taking $\exp$, which changes
    # nothing mathematically and keeps $\exp$ from overflowing (see
    # [the worked example](scores_and_softmax.html#softmax_by_hand)).
    #
    # Zeroing the empty rows makes a second `[seq_q, seq_k]` tensor, which autograd keeps for
    # the backward pass next to the softmax's own output (64 of 149 MiB at 512 tokens in the
    # [measurements](#saved_for_backward)), so we do it only when there is such a row: a causal
    # or a padding mask of non-empty sequences has none.
    weights = scores.softmax(dim=-1)
    if empty is not None and bool(empty.any()):
        weights = weights.masked_fill(empty, 0.0)

    # ### Dropout on the attention weights
    #
    # During training, dropout sets some weights to zero at random (and scales the others up by
    # $1/(1-p)$), so a query cannot rely on a single key. In evaluation mode `nn.Dropout` does
    # nothing. We return the weights from *before* dropout: they are the softmax's
    # distributions, each row summing to 1, which is what you want to look at or plot. Note that
    # in training mode the output below is computed from the dropped weights, so it is not
    # `weights @ v`; in evaluation mode the two are the same.
    dropped = dropout(weights) if dropout is not None else weights

    # ### Weighted sum of the values
    #
    # $$o_i = \sum_j p_{ij} v_j$$
    #
    # `[batch, heads, seq_q, seq_k]` times `[batch, heads, seq_k, d_k]` gives
    # `[batch, heads, seq_q, d_k]`. In training mode the $p_{ij}$ here are the weights after
    # dropout.
    return torch.matmul(dropped, v), weights


class MultiHeadAttention(nn.Module):
    """
    ## Multi-head attention module

    :param d_model: the size of the token vectors; it must be divisible by `heads`
    :param heads: the number of heads $h$
    :param dropout: the dropout probability for the attention weights
    :param bias: whether the four projections have a bias
    :param fused: compute attention with PyTorch's fused kernel (see `forward`)
    """

    def __init__(self, d_model: int, heads: int, dropout: float = 0.0, bias: bool = True,
                 fused: bool = False):
        super().__init__()
        if d_model % heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by heads={heads}: "
                             f"each head gets d_model / heads features")
        self.d_model = d_model
        self.heads = heads
        # The size of each head, $d_k = d_{model} / h$. With this choice, all heads together
        # take as many floating-point operations as a single head of size $d_{model}$: the
        # projections are the same $d_{model} \times d_{model}$ matrices, and the $h$ products
        # $QK^\top$ of width $d_k$ add up to one of width $d_{model}$. Not the same memory: each
        # head has its own `[seq_q, seq_k]` matrix of attention weights, so the weights take $h$
        # times the memory of a single head's.
        self.d_k = d_model // heads

        # ### Projections
        #
        # One linear layer computes the queries of all heads together: it maps `d_model` to
        # `heads * d_k = d_model` features, and we cut the result into heads afterwards.
        # This is the same as $h$ separate matrices $W^Q_i$ of size $d_{model} \times d_k$
        # placed side by side, but it runs as one large matrix product.
        self.query = nn.Linear(d_model, d_model, bias=bias)
        # The keys and the values get their own projections, $W^K$ and $W^V$.
        self.key = nn.Linear(d_model, d_model, bias=bias)
        self.value = nn.Linear(d_model, d_model, bias=bias)
        # The output projection $W^O$ mixes the concatenated heads.
        self.output = nn.Linear(d_model, d_model, bias=bias)

        # Dropout on the attention weights
        self.dropout = nn.Dropout(dropout)
        self.fused = fused
        # The attention weights of the last call, `[batch, heads, seq_q, seq_k]`, kept for
        # inspection and plots. The fused path cannot return them, so it leaves `None` here.
        self.attn: Optional[torch.Tensor] = None

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """
        ### Split into heads

        `[batch, seq, d_model]` → `[batch, seq, heads, d_k]` → `[batch, heads, seq, d_k]`.

        `view` only reinterprets the last axis as `heads` blocks of `d_k` features; no data moves.
        The transpose puts the head axis next to the batch axis, so that the matrix products in
        `attention` treat every head as a separate batch element.
        """
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.heads, self.d_k).transpose(1, 2)

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        """
        ### Concatenate the heads

        `[batch, heads, seq, d_k]` → `[batch, seq, heads, d_k]` → `[batch, seq, d_model]`.

        This undoes `split_heads`: the `d_k` features of head 1, then those of head 2, and so on.
        After the transpose the memory is no longer contiguous, so we need `reshape` (which copies
        when it must) instead of `view`.
        """
        batch, _, seq, _ = x.shape
        return x.transpose(1, 2).reshape(batch, seq, self.d_model)

    def forward(self, query: torch.Tensor, key: Optional[torch.Tensor] = None,
                value: Optional[torch.Tensor] = None, mask: Optional[torch.Tensor] = None,
                causal: bool = False, fused: Optional[bool] = None) -> torch.Tensor:
        """
        ### Forward pass

        :param query: `[batch, seq_q, d_model]`
        :param key: `[batch, seq_k, d_model]`; defaults to `query` (self-attention)
        :param value: `[batch, seq_k, d_model]`; defaults to `key`
        :param mask: boolean, `True` = may attend: `[batch, seq_q, seq_k]`, `[batch, 1, seq_k]`,
            `[1, seq_q, seq_k]` or `[1, 1, seq_k]` (see [the mask convention](#mask-convention))
        :param causal: add a causal mask (needs `seq_q == seq_k`); the fused path then can use
            kernels that never build the mask in memory
        :param fused: overrides the `fused` flag given to the constructor for this call
        :return: `[batch, seq_q, d_model]`
        """
        key = query if key is None else key
        value = key if value is None else value
        use_fused = self.fused if fused is None else fused

        # Check the shapes first: a wrong shape caught here gives a clear message instead of a
        # broadcasting error (or, worse, a silently wrong result) deep inside the computation.
        batch, seq_q, seq_k = self._check_inputs(query, key, value)
        if causal and seq_q != seq_k:
            raise ValueError(f"causal=True needs as many queries as keys, got seq_q={seq_q} "
                             f"and seq_k={seq_k}: pass an explicit mask instead")
        if mask is not None:
            self._check_mask(mask, batch, seq_q, seq_k)
            # Add the head axis: `[batch, seq_q, seq_k]` → `[batch, 1, seq_q, seq_k]`, and
            # likewise for the axes of size 1.
            mask = mask.unsqueeze(1)

        # Project and split into heads: `[batch, seq, d_model]` → `[batch, heads, seq, d_k]`.
        q = self.split_heads(self.query(query))
        k = self.split_heads(self.key(key))
        v = self.split_heads(self.value(value))

        # #### Fast path
        #
        # `torch.nn.functional.scaled_dot_product_attention` computes the same formula with the
        # same `True` = may attend convention for boolean masks. It picks a fused kernel when the
        # inputs allow one, on the CPU as well as on a GPU (where it can be FlashAttention or
        # memory-efficient attention). A fused kernel works through the keys in blocks and never
        # stores the whole `[seq_q, seq_k]` weight matrix, which saves memory and time on long
        # sequences (the [measurements](#saved_for_backward) at the end of this page show how much).
        # The weights and therefore the results are the same as on the explicit path, up to
        # rounding. Only the random dropout pattern differs, so outputs agree in evaluation mode.
        if use_fused:
            dropout_p = self.dropout.p if self.training else 0.0
            if causal and mask is None:
                x = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True)
            else:
                if causal:
                    mask = mask & causal_mask(seq_q, device=query.device).unsqueeze(1)
                x = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
                # For a query without any visible key, PyTorch 2.13's kernels return zeros,
                # but older versions returned NaN, so we set such rows to zero ourselves, as on
                # the explicit path.
                if mask is not None:
                    x = x.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
            self.attn = None
        # #### Explicit path
        #
        # The step-by-step computation of the `attention` function above. The causal mask gets
        # a head axis too, `[1, 1, seq, seq]`, and broadcasts against a
        # `[batch, 1, seq_q, seq_k]` mask.
        else:
            if causal:
                tri = causal_mask(seq_q, device=query.device).unsqueeze(1)
                mask = tri if mask is None else mask & tri
            x, weights = attention(q, k, v, mask, self.dropout)
            # `detach` so that keeping the weights does not keep the autograd graph alive.
            self.attn = weights.detach()

        # Concatenate the heads, `[batch, seq_q, d_model]`, and apply the output projection $W^O$.
        return self.output(self.merge_heads(x))

    def _check_inputs(self, query: torch.Tensor, key: torch.Tensor,
                      value: torch.Tensor) -> tuple[int, int, int]:
        """
        ### Shape checks

        The error messages name the expected shape, for example
        `query must have shape [batch, seq, d_model=64], got [2, 5, 32]`.
        """
        d = self.d_model
        if query.dim() != 3 or query.shape[-1] != d:
            raise ValueError(f"query must have shape [batch, seq, d_model={d}], "
                             f"got {list(query.shape)}")
        batch, seq_q = query.shape[0], query.shape[1]
        if key.dim() != 3 or key.shape[0] != batch or key.shape[-1] != d:
            raise ValueError(f"key must have shape [batch={batch}, seq_k, d_model={d}], "
                             f"got {list(key.shape)}")
        seq_k = key.shape[1]
        if tuple(value.shape) != (batch, seq_k, d):
            raise ValueError(f"value must have shape [batch={batch}, seq_k={seq_k}, d_model={d}] "
                             f"(the same as key), got {list(value.shape)}")
        return batch, seq_q, seq_k

    @staticmethod
    def _check_mask(mask: torch.Tensor, batch: int, seq_q: int, seq_k: int) -> None:
        """
        A mask must be boolean and have one of the four shapes of
        [the mask convention](#mask-convention). We refuse float masks on purpose: some
        libraries add float masks to the scores and others treat nonzero entries as "blocked",
        so accepting them invites polarity mistakes. The message lists the accepted shapes with
        this call's sizes, for example
        `mask must have shape [batch=2, seq_q=5, seq_k=5], [2, 1, 5], [1, 5, 5] or [1, 1, 5]`.
        """
        if mask.dtype != torch.bool:
            raise ValueError(f"mask must be a boolean tensor (True = may attend), got {mask.dtype}")
        accepted = [(batch, seq_q, seq_k), (batch, 1, seq_k), (1, seq_q, seq_k), (1, 1, seq_k)]
        if tuple(mask.shape) not in accepted:
            hint = ""
            if mask.dim() == 2:
                hint = (f"; a 2-D mask is ambiguous: use mask[:, None, :] for a [batch, seq_k] "
                        f"padding mask or mask[None] for a [seq_q, seq_k] mask")
            shapes = ", ".join(str(list(s)) for s in accepted[1:-1]) + f" or {list(accepted[-1])}"
            raise ValueError(f"mask must have shape [batch={batch}, seq_q={seq_q}, seq_k={seq_k}], "
                             f"{shapes}, got {list(mask.shape)}{hint}")


@torch.no_grad()
def score_variance_at_init(d_model: int = 128, heads: int = 4, seq: int = 256,
                           seed: int = 0) -> float:
    r"""
    ## The scores of a freshly initialised layer, measured

    The variance of the scaled scores $q \cdot k / \sqrt{d_k}$ of a new `MultiHeadAttention`
    on inputs of variance 1, pooled over all heads and pairs. The tests assert that it is close to
    $1/9$, the value derived [above](#scores), for several head sizes.
    """
    torch.manual_seed(seed)
    mha = MultiHeadAttention(d_model, heads)
    # A generator of its own for the inputs, so that they are independent of the weights
    g = torch.Generator().manual_seed(seed + 1)
    # `[1, seq, d_model]` with components of variance 1, like the output of a layer norm
    x = torch.randn(1, seq, d_model, generator=g)
    q, k = mha.split_heads(mha.query(x)), mha.split_heads(mha.key(x))
    return (torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(mha.d_k)).var().item()

# ## Time and memory
#
# The explicit path stores the `[batch, heads, seq, seq]` weight matrix for the backward pass
# (the softmax's backward needs its output; with dropout in training, a dropped copy and its
# random mask come next to it), so its memory grows with the square of the sequence length, and
# so does its time once the sequence is long enough for the $QK^\top$ products to dominate. `python benchmarks/attention_bench.py` measures one forward and
# one backward pass of causal self-attention (batch 8, `d_model` 256, 8 heads, float32) on the
# CPU, on the 2-core development machine (torch 2.13.0, `--threads 1`, while other jobs kept it
# busy, so the times are rough; they were measured before the empty-row fix above, which
# changes the memory, not the time). For each length: the time of the explicit and of the fused
# path (in brackets, how much longer than at half the length; 4 would be quadratic), how many
# times faster the fused path is, and the memory that autograd keeps for the backward pass
# (measured now; the tests measure it again):
#
# * 64 tokens: 23.5 and 16.8 ms, 1.40 times; 4.5 and 3.5 MiB
# * 128 tokens: 94.5 (×4.03) and 62.2 ms (×3.71), 1.52 times; 10.0 and 6.0 MiB
# * 256 tokens: 268 (×2.84) and 139 ms (×2.24), 1.92 times; 27.1 and 11.1 MiB
# * 512 tokens: 1103 (×4.12) and 269 ms (×1.93), 4.11 times; 85.3 and 21.1 MiB
# * 1024 tokens: 3243 (×2.94) and 469 ms (×1.74), 6.92 times; 298.0 and 41.2 MiB
#
# The fused path wins at every length here, by 1.4 times at 64 tokens and by about 7 times at
# 1024, and its memory grows only linearly: at 1024 tokens it keeps 41 MiB instead of 298 MiB.
# The fused kernel still does $O(n^2)$ work. Counted in floating-point operations
# ([`attention_flops`](#attention_flops)), the four projections cost $8 n d_{model}^2$ and the two
# products $QK^\top$ and $PV$ of all heads together $4 n^2 d_{model}$: below
# $n = 2 d_{model}$, 512 tokens here, the projections are most of the work, and above it the
# $n^2$ products are. So a clean ×4 per doubling cannot appear in the times: in floating-point
# operations a doubling costs ×2.22 from 64 to 128 tokens, rising to ×3.00 from 512 to 1024
# ([`attention_flops`](#attention_flops)). The measured factors scatter around those (explicit
# ×2.84 to ×4.12, fused ×1.74 to ×3.71): besides the operations, the explicit path moves the
# `[seq, seq]` matrices through memory, and other jobs on the machine add noise. What shows the
# $n^2$ cleanly is the explicit path's memory, which does not depend on the load: ×2.2 from 64 to
# 128 tokens, rising to ×3.5 from 512 to 1024 as the $n^2$ part takes over, against ×1.7 to ×2.0
# for the fused path; and the ratio of the two paths' times, which grows with every doubling.
def attention_flops(seq: int, d_model: int) -> tuple[int, int]:
    """
    The floating-point operations of one self-attention forward pass on one sequence of `seq`
    tokens (a multiply and an add count as two): the four `d_model × d_model` projections, and
    the $QK^\top$ and $PV$ products, which for all heads together are as large as for one head
    of size `d_model`.

    :return: (projections, products)
    """
    return 4 * 2 * seq * d_model * d_model, 2 * 2 * seq * seq * d_model

# `saved_for_backward` measures that memory: it counts the bytes of every tensor that autograd
# saves while a function runs (each block of memory once). The tests use it to check the growth:
# doubling the sequence length multiplies the explicit path's memory by 3 to 4 (closer to 4 the longer the
# sequence, as the n² part takes over) and the fused
# path's by about 2.
def saved_for_backward(fn) -> tuple[torch.Tensor, int]:
    """
    :param fn: a function without arguments that runs a forward pass and returns its output
    :return: the output, and the bytes that autograd keeps for the backward pass
    """
    blocks: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        # Several saved tensors can share one block of memory (a view, or the same tensor saved
        # by two operations), so we count blocks, not tensors.
        storage = t.untyped_storage()
        blocks[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return out, sum(blocks.values())

# ## Exercises
#
# Break the code on purpose and run `python -m pytest tests/test_attention.py
# tests/test_tutorial_subtle_bugs.py` to see which test catches it:
#
# 1. Divide the scores by $d_k$ instead of $\sqrt{d_k}$.
# 2. Take the softmax over `dim=-2` instead of `dim=-1`.
# 3. In `merge_heads`, replace `reshape` by `view`, then `transpose(1, 2)` by nothing.
# 4. Return the weights *after* dropout from `attention`.
# 5. Remove the line that sets the weights of `empty` rows to zero.
#
# <details><summary>Expected answers</summary>
#
# 1. The scores are $\sqrt{d_k}$ times too small and the weights too flat: every comparison with
#    `nn.MultiheadAttention` and `scaled_dot_product_attention` in `tests/test_attention.py`
#    fails.
# 2. The columns sum to 1 instead of the rows. The same comparisons fail, and so does
#    `test_causal_model_cannot_see_the_future`: a column's sum runs over the later queries, so a
#    query's weights depend on the tokens after it.
# 3. `view` raises `RuntimeError: view size is not compatible with input tensor's size and
#    stride`, since the transposed tensor is not contiguous. Without the transpose, `view` works
#    but mixes heads and positions: no error, a wrong output, and
#    `test_split_and_merge_heads_are_inverse_and_group_features_by_head` fails with the
#    comparisons.
# 4. In training mode the returned weights no longer sum to 1:
#    `test_dropout_zeroes_weights_inside_attention` and
#    `test_dropout_off_in_eval_and_on_in_train` fail.
# 5. A row with no visible key gets the softmax of zeros, an even spread, so its output is the
#    mean of the values instead of zero: `test_fully_masked_rows_give_zero_on_both_paths` and
#    `test_attention_function_defines_empty_rows_as_zero` (`tests/test_tutorial_subtle_bugs.py`)
#    fail.
#
# </details>
