"""The "where attention went next" page: RoPE's scores depend on the offset only, grouped-query
attention is multi-head attention when groups == heads and PyTorch's `enable_gqa` otherwise, and
the online softmax and tiled attention equal the softmax and `attention` over the whole row, also
for scores whose exponentials overflow.

Comparisons run on layers whose parameters were all moved away from their initial values (zero
biases would hide a swapped or dropped bias).

Mutation checks (planted by hand, then reverted; each fails a test below): `sin` and `cos`
swapped in `rotate`; `repeat` for `repeat_interleave`; the output's rescaling left out of
`tiled_attention`; the running sum not rescaled in `online_softmax`; `kv_heads` not divided
out of the key projection's size.
"""
from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch", reason="the tutorial's code needs torch")
import torch.nn.functional as F  # noqa: E402

from annotated_attention.mha import MultiHeadAttention, attention  # noqa: E402
from annotated_attention.positional_encoding import sinusoidal_encoding  # noqa: E402
from annotated_attention.where_next import (GroupedQueryAttention, online_softmax, rope_scores,  # noqa: E402
                                            rotate, tiled_attention)
from tutorial_helpers import perturb  # noqa: E402


# ---- RoPE ----

def test_rope_is_a_rotation_by_position():
    torch.manual_seed(0)
    d = 8
    x = torch.randn(5, d)
    positions = torch.tensor([0, 1, 2, 7, 30])
    out = rotate(x, positions)
    # Position 0 is the identity; rotations keep every pair's length
    torch.testing.assert_close(out[0], x[0])
    torch.testing.assert_close(out.view(5, d // 2, 2).norm(dim=-1), x.view(5, d // 2, 2).norm(dim=-1))
    # Pair i of the vector at position p, rotated by p θ_i, written out
    for row, p in enumerate(positions.tolist()):
        for i in range(d // 2):
            a = p / 10000 ** (2 * i / d)
            x0, x1 = x[row, 2 * i].item(), x[row, 2 * i + 1].item()
            assert out[row, 2 * i].item() == pytest.approx(x0 * math.cos(a) - x1 * math.sin(a), abs=1e-5)
            assert out[row, 2 * i + 1].item() == pytest.approx(x0 * math.sin(a) + x1 * math.cos(a), abs=1e-5)


def test_rope_scores_depend_only_on_the_offset():
    torch.manual_seed(0)
    d = 16
    q, k = torch.randn(1, d), torch.randn(1, d)
    for p, s in ((3, 0), (10, 4), (0, 9), (25, 25)):
        base = rope_scores(q, k, torch.tensor([p]), torch.tensor([s]))
        for shift in (1, 7, 40, 100):
            shifted = rope_scores(q, k, torch.tensor([p + shift]), torch.tensor([s + shift]))
            torch.testing.assert_close(shifted, base, atol=1e-4, rtol=0)
    # ... and does depend on the offset (otherwise RoPE would carry no position at all)
    a = rope_scores(q, k, torch.tensor([5]), torch.tensor([2]))
    b = rope_scores(q, k, torch.tensor([5]), torch.tensor([4]))
    assert (a - b).abs().item() > 1e-3


def test_rope_uses_the_sinusoidal_table():
    pe = sinusoidal_encoding(6, 4)
    # Rotating (1, 0) in each pair gives (cos, sin) of the angle: the table's odd and even columns
    x = torch.tensor([[1.0, 0.0, 1.0, 0.0]]).expand(6, 4)
    out = rotate(x, torch.arange(6))
    torch.testing.assert_close(out[:, 0::2], pe[:, 1::2])
    torch.testing.assert_close(out[:, 1::2], pe[:, 0::2])


# ---- grouped-query attention ----

def copy_mha_into_gqa(mha: MultiHeadAttention, gqa: GroupedQueryAttention) -> None:
    gqa.load_state_dict(mha.state_dict())


@pytest.mark.parametrize("causal", [False, True])
def test_gqa_equals_mha_when_groups_equal_heads(causal):
    torch.manual_seed(0)
    mha = perturb(MultiHeadAttention(16, 4, fused=False), seed=1, scale=0.3).eval()
    gqa = GroupedQueryAttention(16, 4, kv_heads=4).eval()
    copy_mha_into_gqa(mha, gqa)
    x = torch.randn(2, 7, 16)
    torch.testing.assert_close(gqa(x, causal=causal), mha(x, causal=causal))
    torch.testing.assert_close(gqa.attn, mha.attn)


@pytest.mark.parametrize("kv_heads", [1, 2])
@pytest.mark.parametrize("causal", [False, True])
def test_gqa_equals_sdpa_with_enable_gqa(kv_heads, causal):
    torch.manual_seed(0)
    gqa = perturb(GroupedQueryAttention(16, 4, kv_heads=kv_heads), seed=1, scale=0.3).eval()
    x = torch.randn(2, 7, 16)
    q = gqa.split_heads(gqa.query(x))
    k = gqa.key(x).view(2, 7, kv_heads, 4).transpose(1, 2)
    v = gqa.value(x).view(2, 7, kv_heads, 4).transpose(1, 2)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    torch.testing.assert_close(gqa(x, causal=causal), gqa.output(gqa.merge_heads(expected)), atol=1e-5, rtol=1e-5)


def test_gqa_shares_each_kv_head_within_its_group_and_shrinks_the_cache():
    gqa = GroupedQueryAttention(32, 8, kv_heads=2)
    assert gqa.key.out_features == gqa.value.out_features == 2 * 4
    assert gqa.cache_numbers_per_position() * 4 == 2 * 32
    assert MultiHeadAttention(32, 8).key.weight.numel() == 4 * gqa.key.weight.numel()
    with pytest.raises(ValueError, match="must divide heads"):
        GroupedQueryAttention(32, 8, kv_heads=3)


# ---- online softmax and tiles ----

@pytest.mark.parametrize("block", [1, 3, 8, 100])
def test_online_softmax_equals_softmax_over_the_whole_row(block):
    torch.manual_seed(0)
    scores = torch.randn(4, 5, 17) * 3
    torch.testing.assert_close(online_softmax(scores, block), torch.softmax(scores, dim=-1))


def test_online_softmax_is_stable_for_large_scores():
    torch.manual_seed(0)
    scores = torch.randn(3, 50) * 1e4
    # exp overflows in float32 above about 88.72: the softmax as written gives inf / inf = nan
    naive = torch.exp(scores) / torch.exp(scores).sum(dim=-1, keepdim=True)
    assert torch.isnan(naive).any()
    ours = online_softmax(scores, block=7)
    assert torch.isfinite(ours).all()
    expected = torch.softmax(scores.double(), dim=-1).float()
    torch.testing.assert_close(ours, expected)
    # The blocks that raise the maximum come late on purpose: sorted rows
    rising = torch.sort(scores, dim=-1).values
    torch.testing.assert_close(online_softmax(rising, block=7), torch.softmax(rising, dim=-1))


@pytest.mark.parametrize("block", [1, 4, 64])
def test_tiled_attention_equals_attention(block):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 9, 8) for _ in range(3))
    # Keys that grow along the sequence, so that later blocks raise the running maximum
    k = k + torch.linspace(0, 3, 9)[:, None]
    expected, _ = attention(q, k, v)
    torch.testing.assert_close(tiled_attention(q, k, v, block), expected, atol=1e-5, rtol=1e-5)
    # Large scores as well: the tiles never take the exponential of a positive number
    big_q = q * 1e3
    expected, _ = attention(big_q.double(), k.double(), v.double())
    torch.testing.assert_close(tiled_attention(big_q, k, v, block).double(), expected, atol=1e-4, rtol=1e-4)
