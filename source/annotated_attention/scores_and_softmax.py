r"""
---
title: The Scores and the Softmax, Shape by Shape
summary: How Q K^T becomes a batch of seq x seq scores, and why the softmax runs over the last axis, with a two-token example you can run.
---

# The Scores and the Softmax, Shape by Shape

A question that many readers ask when they first meet self-attention goes like this:

> The queries $Q$ and the keys $K$ both have the shape `batch × seq_length × embed_size`,
> so $Q K^\top$ has the shape `batch × seq_length × seq_length`.
> How is the softmax computed when every batch element has `seq_length × seq_length` values?

The short answer has two parts.

1. $Q K^\top$ is a **batched** matrix product. For every batch element separately, PyTorch
   multiplies a `seq × d` matrix by a `d × seq` matrix, where `seq` is your `seq_length` and
   `d` is your `embed_size` (with several heads, `d` is the size of one head,
   `embed_size / heads`). The `d` axis is summed away: each of these products gives a
   `seq × seq` matrix, so the result has the shape `batch × seq × seq`. This is what
   [`torch.matmul`](https://pytorch.org/docs/stable/generated/torch.matmul.html) does with
   3-D inputs: it treats the first axis as a batch and multiplies the last two.
2. The softmax runs over the **last** axis only
   ([`softmax(dim=-1)`](https://pytorch.org/docs/stable/generated/torch.nn.functional.softmax.html)).
   Row $i$ of each `seq × seq` matrix holds the scores of query $i$ against every key, and the
   softmax turns that row into a probability distribution over the keys. So there are
   `batch × seq` separate softmaxes, each over `seq` numbers, and every row sums to 1.

The code below shows both parts and then works through a two-token example by hand.
Run it with `python -m annotated_attention.scores_and_softmax`: it prints every step and
checks the numbers with `assert`.

To keep the shapes easy to read, this page has a single head and no learned projections:
$Q$ and $K$ are given directly. In [multi-head attention](mha.html) the same code runs with
one more axis for the heads.
"""

import math

import torch


def scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """
    ## Part 1: the scores are a batched matrix product

    :param q: queries, `[batch, seq_q, d]`
    :param k: keys, `[batch, seq_k, d]`
    :return: the scaled scores, `[batch, seq_q, seq_k]`
    """
    # `k.transpose(-2, -1)` swaps the last two axes: `[batch, seq_k, d]` → `[batch, d, seq_k]`.
    # The batch axis is untouched.
    k_t = k.transpose(-2, -1)
    # `torch.matmul` with 3-D inputs multiplies the last two axes and repeats over the first:
    # for each batch element $b$ it computes `q[b] @ k_t[b]`, a `[seq_q, d]` by `[d, seq_k]`
    # product. Element $(b, i, j)$ is the dot product of query $i$ with key $j$ in sequence $b$.
    s = torch.matmul(q, k_t)
    # Divide by $\sqrt{d}$ so that the scores keep a variance of about 1
    # (see [why we scale](mha.html#scores) and `dot_product_variance` below).
    return s / math.sqrt(q.shape[-1])


def scores_with_a_loop(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """
    ### The same, one batch element at a time

    This slow version spells out what the batched product does. The tests check that both give
    the same result.
    """
    # One `[seq_q, seq_k]` matrix per batch element
    rows = [q[b] @ k[b].T for b in range(q.shape[0])]
    # Stack them into `[batch, seq_q, seq_k]`
    return torch.stack(rows) / math.sqrt(q.shape[-1])


def softmax_over_keys(s: torch.Tensor) -> torch.Tensor:
    r"""
    ## Part 2: the softmax runs over the last axis

    $$p_{bij} = \frac{\exp(s_{bij})}{\sum_{j'} \exp(s_{bij'})}$$

    For fixed $b$ and $i$, the sum runs over the keys $j'$ only. Each row is normalised on its
    own: the numbers in other rows, and in other batch elements, do not enter the sum.

    Why this axis? The output for query $i$ is $\sum_j p_{ij} v_j$, a weighted average of the
    value vectors. A weighted average needs weights that sum to 1 over what is being averaged,
    and that is the keys. A softmax over the queries (`dim=-2`) would make each *column* sum to 1
    instead, and a softmax over the whole `seq × seq` matrix would make the queries compete with
    each other for attention; neither gives each query its own distribution.

    :param s: scores, `[batch, seq_q, seq_k]`
    :return: attention weights of the same shape; each row along the last axis sums to 1
    """
    return torch.softmax(s, dim=-1)


def softmax_by_hand(row: list[float]) -> list[float]:
    r"""
    ### The softmax of one row, written out

    Subtracting the largest score first does not change the result (the factor $\exp(-m)$
    cancels in the fraction), but it keeps $\exp$ from overflowing for large scores.
    """
    m = max(row)
    exps = [math.exp(x - m) for x in row]
    total = sum(exps)
    return [e / total for e in exps]


def softmax_without_the_max(row: list[float]) -> torch.Tensor:
    r"""
    ## Numerical stability: why subtract the max

    The same formula without subtracting the largest score, in float32 like a model's scores.
    $\exp(x)$ overflows to infinity in float32 for $x$ above about 88.72 (the logarithm of
    float32's largest number, about $3.4 \cdot 10^{38}$), and $\infty / \infty$ is NaN:

    * the row $(1000, 998)$ gives NaN here, while `softmax_by_hand` (and `torch.softmax`, which
      also subtracts the max) gives $(0.8808, 0.1192)$: the same as the row $(14, 12)$ of the
      example below, because only the difference between the scores, 2, matters;
    * a masked score of $-\infty$ is harmless: $\exp(-\infty) = 0$, so the row
      $(3, -\infty, 1)$ gives $(0.8808, 0, 0.1192)$;
    * a row of only $-\infty$ has no softmax at all: its max is $-\infty$, and
      $-\infty - (-\infty)$ is NaN, with or without the trick. That is why
      [attention](mha.html#masking) treats such rows separately.

    `main` below asserts each of these numbers.
    """
    exps = torch.tensor(row, dtype=torch.float32).exp()
    return exps / exps.sum()


# ## A two-token example
#
# Take the two-token sequence "Green Tea", with a head size of $d = 4$. The query and key
# vectors below stand for the results of the learned projections; we choose them so that the
# numbers stay small. `GREEN_TEA_Q[i]` is the query of token $i$ and `GREEN_TEA_K[j]` the key of
# token $j$.
TOKENS = ["Green", "Tea"]
GREEN_TEA_Q = [[2.0, 2.0, 2.0, 2.0],
               [0.0, 1.0, 0.0, 1.0]]
GREEN_TEA_K = [[5.0, 3.0, 4.0, 2.0],
               [3.0, 3.0, 3.0, 3.0]]


def two_token_example() -> tuple[torch.Tensor, torch.Tensor]:
    r"""
    For the first token, "Green":

    * $q_1 \cdot k_1 = 2 \cdot (5 + 3 + 4 + 2) = 28$ and $q_1 \cdot k_2 = 2 \cdot 12 = 24$,
    * divided by $\sqrt{d} = 2$, the scaled scores are **14** and **12**,
    * the softmax of the row $(14, 12)$ is

    $$\frac{e^{14}}{e^{14} + e^{12}} = \frac{e^{2}}{e^{2} + 1} \approx 0.8808 \qquad \frac{e^{12}}{e^{14} + e^{12}} = \frac{1}{e^{2} + 1} \approx 0.1192$$

    So "Green" puts about 88% of its attention on itself and 12% on "Tea". Only the
    *difference* between the scores matters: adding the same number to a whole row does not
    change its softmax.

    For the second token, "Tea", the scores are $(3 + 2)/2 = 2.5$ and $(3 + 3)/2 = 3$, which
    gives the weights 0.3775 and 0.6225. Each row is a separate distribution.

    ![The two-token example: attention weights](figures/two_tokens.svg)

    :return: the scaled scores and the attention weights, both `[1, 2, 2]`
        (a batch of one sequence of two tokens)
    """
    # Add a batch axis of size 1: `[1, 2, 4]`
    q = torch.tensor(GREEN_TEA_Q).unsqueeze(0)
    k = torch.tensor(GREEN_TEA_K).unsqueeze(0)
    s = scores(q, k)
    return s, softmax_over_keys(s)


def dot_product_variance(d: int, samples: int = 20000, seed: int = 0) -> tuple[float, float]:
    r"""
    ## The variance argument, measured

    Draw random query and key vectors whose components have mean 0 and variance 1, and measure
    the variance of their dot products before and after dividing by $\sqrt{d}$. The first number
    grows like $d$; the second stays close to 1.

    :return: (variance of $q \cdot k$, variance of $q \cdot k / \sqrt{d}$)
    """
    g = torch.Generator().manual_seed(seed)
    # `[samples, d]` each
    q = torch.randn(samples, d, generator=g, dtype=torch.float64)
    k = torch.randn(samples, d, generator=g, dtype=torch.float64)
    # One dot product per pair: `[samples]`
    dots = (q * k).sum(-1)
    return dots.var().item(), (dots / math.sqrt(d)).var().item()


def main() -> None:
    """
    ## Run it

    `main` prints each step and asserts the numbers claimed on this page, so the text cannot
    drift away from what the code computes.
    """
    # A random batch: `batch=3`, `seq_length=5`, `embed_size=8`.
    g = torch.Generator().manual_seed(0)
    q = torch.randn(3, 5, 8, generator=g)
    k = torch.randn(3, 5, 8, generator=g)
    s = scores(q, k)
    p = softmax_over_keys(s)
    print(f"Q: {list(q.shape)}  K: {list(k.shape)}  scores Q K^T / sqrt(d): {list(s.shape)}")
    assert s.shape == (3, 5, 5)
    # The batched product is the per-element loop.
    assert torch.allclose(s, scores_with_a_loop(q, k), atol=1e-6)
    # Every row of every batch element sums to 1: `batch × seq` = 15 distributions.
    row_sums = p.sum(dim=-1)
    print(f"row sums, shape {list(row_sums.shape)}:\n{row_sums}")
    assert torch.allclose(row_sums, torch.ones(3, 5))

    # The two-token example
    s2, p2 = two_token_example()
    print(f"\n{TOKENS}: scaled scores\n{s2[0]}\nattention weights\n{p2[0]}")
    assert s2[0].tolist() == [[14.0, 12.0], [2.5, 3.0]]
    exact = math.exp(2) / (1 + math.exp(2))
    assert abs(p2[0, 0, 0].item() - exact) < 1e-6 and abs(exact - 0.8808) < 1e-4
    assert abs(p2[0, 0, 1].item() - (1 - exact)) < 1e-6
    assert [round(x, 4) for x in softmax_by_hand([14.0, 12.0])] == [0.8808, 0.1192]
    assert [round(x, 4) for x in p2[0, 1].tolist()] == [0.3775, 0.6225]

    # Numerical stability: float32's exp overflows just above 88.72 = log(3.4e38)
    assert abs(math.log(torch.finfo(torch.float32).max) - 88.72) < 0.005
    assert torch.isfinite(torch.tensor(88.72).exp()) and torch.isinf(torch.tensor(88.73).exp())
    # Python's own `math.exp` works in float64 and raises instead, above about 709.78
    assert math.isfinite(math.exp(709.78))
    try:
        math.exp(709.79)
        raise AssertionError("math.exp(709.79) should overflow")
    except OverflowError:
        pass
    assert math.isnan(softmax_without_the_max([1000.0, 998.0])[0].item())
    for stable in (softmax_by_hand([1000.0, 998.0]), torch.tensor([1000.0, 998.0]).softmax(-1).tolist()):
        assert [round(x, 4) for x in stable] == [0.8808, 0.1192]
    inf = float("inf")
    assert [round(x, 4) for x in softmax_by_hand([3.0, -inf, 1.0])] == [0.8808, 0.0, 0.1192]
    assert all(math.isnan(x) for x in softmax_by_hand([-inf, -inf]))
    assert torch.tensor([-inf, -inf]).softmax(-1).isnan().all()
    print("softmax of (1000, 998): without the max", softmax_without_the_max([1000.0, 998.0]).tolist(),
          "with it", [round(x, 4) for x in softmax_by_hand([1000.0, 998.0])])

    # The variance argument
    for d in (4, 64, 512):
        raw, scaled = dot_product_variance(d)
        print(f"d={d:4d}: Var(q.k) = {raw:7.2f}   Var(q.k / sqrt(d)) = {scaled:.2f}")
        assert abs(raw / d - 1) < 0.1 and abs(scaled - 1) < 0.1
    print("\nall checks passed")


if __name__ == "__main__":
    main()

# ## Exercises
#
# 1. In `softmax_over_keys`, use `dim=-2`. Which assertion of `main` fails first, and which test
#    of `tests/test_attention.py`?
# 2. In `scores`, forget the transpose: `torch.matmul(q, k)`. What error do you get with
#    `seq_length=5` and `embed_size=8`, and why would there be none if both were equal?
# 3. Remove `m = max(row)` from `softmax_by_hand` (use `m = 0`) and run `main`. Why does it stop
#    with an `OverflowError` instead of giving NaN, as `softmax_without_the_max` does?
#
# <details><summary>Expected answers</summary>
#
# 1. The row-sum assertion of `main` fails first (`torch.allclose(row_sums, torch.ones(3, 5))`):
#    now the columns sum to 1. In `tests/test_attention.py`, `test_two_token_example_numbers`
#    fails first.
# 2. `RuntimeError: Expected size for first two dimensions of batch2 tensor to be: [3, 8] but
#    got: [3, 5]`: the last axis of `q` (8) must equal the second-to-last axis of `k` (5). With
#    `seq_length == embed_size` both matrices are square, so $QK$ is computed without an error,
#    and it is wrong; only the comparison with `scores_with_a_loop` shows it.
# 3. `OverflowError: math range error`, at the row $(1000, 998)$. `softmax_by_hand` computes with
#    Python floats, and Python's `math.exp` raises an exception when the result would exceed
#    float64's largest number (for arguments above about 709.78) instead of returning infinity.
#    `torch.exp` returns `inf` (in float32 above 88.72), and $\infty / \infty$ then gives the NaN
#    of `softmax_without_the_max`. Both are the same overflow, reported in two ways; subtracting
#    the max avoids it.
#
# </details>
