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

## Mask convention

A mask is a **boolean** tensor in which `True` means *this query may attend to this key*.
Its full shape is `[batch, seq_q, seq_k]`, and any shape that broadcasts to it is accepted:
`[seq_q, seq_k]` for a causal mask shared by the whole batch, or `[batch, 1, seq_k]` for a
padding mask that is the same for every query. Be careful when you compare with other code:
`torch.nn.MultiheadAttention` uses the opposite polarity for boolean masks (`True` = blocked).

If you wonder how $QK^\top$ and the softmax work shape by shape, read
[the scores and the softmax](scores_and_softmax.html) next to this page.
The [transformer page](transformer.html) uses this module to build a small language model.
"""

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
    :return: a boolean tensor of shape `[seq_len, seq_len]`; it broadcasts over the batch
    """
    # `tril` keeps the main diagonal and everything below it, so row $i$ is `True` in
    # columns $0, ..., i$.
    return torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).tril()


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
    :param mask: boolean, broadcastable to `[batch, heads, seq_q, seq_k]`, `True` = may attend
    :param dropout: applied to the attention weights, if given
    :return: the output `[batch, heads, seq_q, d_k]` and the attention weights
        `[batch, heads, seq_q, seq_k]`
    """
    d_k = q.shape[-1]

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
    # So the scores spread out more as heads get wider. Large scores push the softmax towards a
    # one-hot vector, and there its gradient almost vanishes: the derivative
    # $\frac{\partial p_i}{\partial s_j} = p_i (\delta_{ij} - p_j)$ is close to 0 when every
    # $p$ is close to 0 or 1. Dividing by $\sqrt{d_k}$ brings the variance back to 1 whatever
    # the head size, so training starts in the range where the softmax still learns.
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)

    # ### Masking
    #
    # Blocked pairs get the score $-\infty$. Since $\exp(-\infty) = 0$, they receive exactly zero
    # weight after the softmax. `~mask` turns "may attend" into "blocked", and broadcasting
    # stretches a `[batch, 1, seq_q, seq_k]` or `[1, 1, seq_q, seq_k]` mask over the heads.
    # Every query must be allowed at least one key: a row of only $-\infty$ has no softmax
    # (the result is NaN).
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))

    # ### Softmax over the keys
    #
    # $$p_{ij} = \frac{\exp(s_{ij})}{\sum_{j'} \exp(s_{ij'})}$$
    #
    # We normalise over the **last** axis (`dim=-1`), the key axis. Each query then owns one
    # probability distribution over the keys: the weights in a row are non-negative and sum to 1.
    # The output for that query is a weighted average of the values, which is why the weights
    # have to sum to 1 along the key axis and not along the query axis.
    weights = scores.softmax(dim=-1)

    # ### Dropout on the attention weights
    #
    # During training, dropout sets some weights to zero at random (and scales the others up by
    # $1/(1-p)$), so a query cannot rely on a single key. In evaluation mode `nn.Dropout` does
    # nothing. We return the weights from *before* dropout, because those are the distributions
    # the model actually computed.
    dropped = dropout(weights) if dropout is not None else weights

    # ### Weighted sum of the values
    #
    # $$o_i = \sum_j p_{ij} v_j$$
    #
    # `[batch, heads, seq_q, seq_k]` times `[batch, heads, seq_k, d_k]` gives
    # `[batch, heads, seq_q, d_k]`.
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
        # cost about as much as a single head of size $d_{model}$.
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
        :param mask: boolean, `[batch, seq_q, seq_k]` or broadcastable to it, `True` = may attend
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
            # Add the head axis: `[batch, seq_q, seq_k]` → `[batch, 1, seq_q, seq_k]`. A 2-D mask
            # `[seq_q, seq_k]` becomes `[1, seq_q, seq_k]`, which broadcasts in the same way.
            mask = mask.unsqueeze(-3)

        # Project and split into heads: `[batch, seq, d_model]` → `[batch, heads, seq, d_k]`.
        q = self.split_heads(self.query(query))
        k = self.split_heads(self.key(key))
        v = self.split_heads(self.value(value))

        # #### Fast path
        #
        # `torch.nn.functional.scaled_dot_product_attention` computes the same formula with the
        # same `True` = may attend convention for boolean masks. On a GPU it picks a fused kernel
        # (FlashAttention or memory-efficient attention) that never stores the
        # `[seq_q, seq_k]` weight matrix, which saves memory and time on long sequences.
        # The weights and therefore the results are the same as on the explicit path, up to
        # rounding. Only the random dropout pattern differs, so outputs agree in evaluation mode.
        if use_fused:
            dropout_p = self.dropout.p if self.training else 0.0
            if causal and mask is None:
                x = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True)
            else:
                if causal:
                    mask = mask & causal_mask(seq_q, device=query.device)
                x = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
            self.attn = None
        # #### Explicit path
        #
        # The step-by-step computation of the `attention` function above. A `[seq, seq]` causal
        # mask broadcasts against a `[batch, 1, seq_q, seq_k]` mask.
        else:
            if causal:
                tri = causal_mask(seq_q, device=query.device)
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
        A mask must be boolean and broadcastable to `[batch, seq_q, seq_k]`. We refuse float
        masks on purpose: some libraries add float masks to the scores and others treat
        nonzero entries as "blocked", so accepting them invites polarity mistakes.
        """
        expected = f"[batch={batch}, seq_q={seq_q}, seq_k={seq_k}]"
        if mask.dtype != torch.bool:
            raise ValueError(f"mask must be a boolean tensor (True = may attend), got {mask.dtype}")
        full = (batch, seq_q, seq_k)
        if mask.dim() not in (2, 3) or any(
                got not in (1, want) for got, want in zip(reversed(mask.shape), reversed(full))):
            raise ValueError(f"mask must have shape {expected} or broadcast to it "
                             f"(e.g. [seq_q, seq_k] or [batch, 1, seq_k]), got {list(mask.shape)}")
