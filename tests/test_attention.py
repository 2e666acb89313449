"""Correctness of the attention tutorial: our modules against PyTorch's own implementations."""
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from annotated_attention import scores_and_softmax as sas
from annotated_attention.feed_forward import FeedForward
from annotated_attention.mha import MultiHeadAttention, attention, causal_mask, padding_mask
from annotated_attention.positional_encoding import PositionalEncoding, sinusoidal_encoding
from annotated_attention.transformer import DecoderOnlyTransformer, ModelConfig, TransformerLayer
from tutorial_helpers import perturb

D_MODEL, HEADS, BATCH, SEQ = 16, 4, 3, 5
LENGTHS = [5, 3, 1]  # one full sequence, two padded ones; every query keeps at least one key


def make_pair(dtype=torch.float64, bias=True, dropout=0.0, seed=0):
    """Our module and nn.MultiheadAttention with the same weights, every one of them moved away
    from its initial value (`perturb`): no two biases equal, so a mix-up of W^Q, W^K, W^V or
    their biases cannot hide behind a fresh initialisation."""
    torch.manual_seed(0)
    ours = perturb(MultiHeadAttention(D_MODEL, HEADS, dropout=dropout, bias=bias).to(dtype), seed)
    ref = nn.MultiheadAttention(D_MODEL, HEADS, dropout=dropout, bias=bias, batch_first=True).to(dtype)
    with torch.no_grad():
        # nn.MultiheadAttention stacks W^Q, W^K, W^V in one [3 * d_model, d_model] matrix.
        ref.in_proj_weight.copy_(torch.cat([ours.query.weight, ours.key.weight, ours.value.weight]))
        ref.out_proj.weight.copy_(ours.output.weight)
        if bias:
            ref.in_proj_bias.copy_(torch.cat([ours.query.bias, ours.key.bias, ours.value.bias]))
            ref.out_proj.bias.copy_(ours.output.bias)
    return ours, ref


def inputs(dtype=torch.float64, seq_q=SEQ, seq_k=SEQ):
    g = torch.Generator().manual_seed(1)
    q = torch.randn(BATCH, seq_q, D_MODEL, generator=g, dtype=dtype, requires_grad=True)
    k = torch.randn(BATCH, seq_k, D_MODEL, generator=g, dtype=dtype, requires_grad=True)
    v = torch.randn(BATCH, seq_k, D_MODEL, generator=g, dtype=dtype, requires_grad=True)
    return q, k, v


def our_grads(mha: MultiHeadAttention) -> dict[str, torch.Tensor]:
    return {"in_w": torch.cat([mha.query.weight.grad, mha.key.weight.grad, mha.value.weight.grad]),
            "in_b": torch.cat([mha.query.bias.grad, mha.key.bias.grad, mha.value.bias.grad]),
            "out_w": mha.output.weight.grad, "out_b": mha.output.bias.grad}


def ref_grads(ref: nn.MultiheadAttention) -> dict[str, torch.Tensor]:
    return {"in_w": ref.in_proj_weight.grad, "in_b": ref.in_proj_bias.grad,
            "out_w": ref.out_proj.weight.grad, "out_b": ref.out_proj.bias.grad}


def run_backward(out: torch.Tensor, tensors):
    """Backpropagate a fixed random projection of the output (not just its sum)."""
    g = torch.Generator().manual_seed(2)
    weight = torch.randn(out.shape, generator=g, dtype=out.dtype)
    (out * weight).sum().backward()
    grads = [t.grad.clone() for t in tensors]
    for t in tensors:
        t.grad = None
    return grads


MASKS = ["none", "causal", "padding", "causal+padding"]


def our_mask(kind: str):
    lengths = torch.tensor(LENGTHS)
    if kind == "none":
        return None
    if kind == "causal":
        return causal_mask(SEQ)
    if kind == "padding":
        return padding_mask(lengths, SEQ)
    return causal_mask(SEQ) & padding_mask(lengths, SEQ)


@pytest.mark.parametrize("kind", MASKS)
def test_matches_nn_multihead_attention(kind):
    ours, ref = make_pair()
    q, k, v = inputs()
    mask = our_mask(kind)
    out = ours(q, k, v, mask=mask)
    # nn.MultiheadAttention's boolean masks mean the opposite: True = NOT allowed.
    ref_kwargs = {}
    if kind in ("causal", "causal+padding"):
        # nn.MultiheadAttention wants [seq_q, seq_k], True = blocked: key j is after query i
        ref_kwargs["attn_mask"] = torch.ones(SEQ, SEQ, dtype=torch.bool).triu(1)
    if kind in ("padding", "causal+padding"):
        # written out, not taken from `padding_mask`: key j of sequence b is padding when j >= length
        ref_kwargs["key_padding_mask"] = torch.tensor([[j >= n for j in range(SEQ)] for n in LENGTHS])
    ref_out, ref_weights = ref(q, k, v, need_weights=True, average_attn_weights=False, **ref_kwargs)

    torch.testing.assert_close(out, ref_out, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(ours.attn, ref_weights, rtol=1e-10, atol=1e-10)
    grads_ours = run_backward(out, [q, k, v])
    wg_ours = our_grads(ours)
    grads_ref = run_backward(ref_out, [q, k, v])
    wg_ref = ref_grads(ref)
    for a, b in zip(grads_ours, grads_ref):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)
    for name in wg_ours:
        torch.testing.assert_close(wg_ours[name], wg_ref[name], rtol=1e-10, atol=1e-10, msg=name)


def test_cross_attention_with_different_lengths_matches_nn_multihead_attention():
    ours, ref = make_pair()
    q, k, v = inputs(seq_q=2, seq_k=7)
    out = ours(q, k, v)
    ref_out, _ = ref(q, k, v)
    assert out.shape == (BATCH, 2, D_MODEL)
    torch.testing.assert_close(out, ref_out, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kind", MASKS)
def test_attention_function_matches_scaled_dot_product_attention(kind):
    """Our explicit `attention` against F.scaled_dot_product_attention, values and gradients."""
    g = torch.Generator().manual_seed(3)
    shape = (BATCH, HEADS, SEQ, D_MODEL // HEADS)
    q, k, v = (torch.randn(shape, generator=g, dtype=torch.float64, requires_grad=True)
               for _ in range(3))
    mask = our_mask(kind)
    mask4 = None if mask is None else mask.unsqueeze(-3)  # add the head axis
    out, weights = attention(q, k, v, mask4)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask4)
    torch.testing.assert_close(out, ref, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(weights.sum(-1), torch.ones(shape[:-1], dtype=torch.float64))
    for a, b in zip(run_backward(out, [q, k, v]), run_backward(ref, [q, k, v])):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kind", MASKS)
@pytest.mark.parametrize("causal_flag", [False, True])
def test_fused_path_equals_explicit_path(kind, causal_flag):
    ours, _ = make_pair(dtype=torch.float32)
    q, k, v = inputs(dtype=torch.float32)
    mask = our_mask(kind)
    outs, grads = [], []
    for fused in (False, True):
        out = ours(q, k, v, mask=mask, causal=causal_flag, fused=fused)
        outs.append(out)
        grads.append(run_backward(out, [q, k, v]) + list(our_grads(ours).values()))
        ours.zero_grad(set_to_none=True)
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-5)
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    # The fused kernel does not expose the weights.
    assert ours.attn is None


def test_causal_flag_equals_causal_mask():
    ours, _ = make_pair()
    q, _, _ = inputs()
    torch.testing.assert_close(ours(q, causal=True), ours(q, mask=causal_mask(SEQ)))
    with pytest.raises(ValueError, match="causal=True needs as many queries as keys"):
        ours(q, q[:, :2], q[:, :2], causal=True)


def test_dropout_off_in_eval_and_on_in_train():
    ours, _ = make_pair(dtype=torch.float32, dropout=0.5)
    plain, _ = make_pair(dtype=torch.float32, dropout=0.0)
    q, k, v = inputs(dtype=torch.float32)
    with torch.no_grad():
        ours.eval()
        first = ours(q, k, v)
        assert torch.equal(first, ours(q, k, v)), "eval mode must be deterministic"
        torch.testing.assert_close(first, plain.eval()(q, k, v))
        torch.testing.assert_close(ours(q, k, v, fused=True), first, rtol=1e-5, atol=1e-6)
        ours.train()
        torch.manual_seed(0)
        a = ours(q, k, v)
        b = ours(q, k, v)
        assert not torch.allclose(a, first, atol=1e-3), "train mode must apply dropout"
        assert not torch.allclose(a, b, atol=1e-3), "dropout must draw new masks each call"
        # The kept weights are the pre-dropout distributions: rows still sum to 1.
        torch.testing.assert_close(ours.attn.sum(-1), torch.ones(BATCH, HEADS, SEQ))
        assert not torch.allclose(ours(q, k, v, fused=True), first, atol=1e-3)


def test_dropout_zeroes_weights_inside_attention():
    """With p=0.5 in train mode, about half of the weights are dropped and the rest doubled."""
    torch.manual_seed(0)
    w = torch.full((1, 1, 64, 64), 1 / 64)
    v = torch.eye(64)[None, None]  # output row = the (dropped) weight row itself
    q = torch.zeros(1, 1, 64, 8)
    out, weights = attention(q, q, v, dropout=nn.Dropout(0.5))
    torch.testing.assert_close(weights, w)
    kept = out != 0
    assert 0.4 < kept.float().mean().item() < 0.6
    torch.testing.assert_close(out[kept], torch.full_like(out[kept], 2 / 64))


@pytest.mark.parametrize("args, message", [
    (([2, 5, 32],), r"query must have shape \[batch, seq, d_model=16\], got \[2, 5, 32\]"),
    (([2, 5],), r"query must have shape \[batch, seq, d_model=16\], got \[2, 5\]"),
    (([2, 5, 16], [3, 5, 16]), r"key must have shape \[batch=2, seq_k, d_model=16\], got \[3, 5, 16\]"),
    (([2, 5, 16], [2, 4, 16], [2, 3, 16]),
     r"value must have shape \[batch=2, seq_k=4, d_model=16\] \(the same as key\), got \[2, 3, 16\]"),
])
def test_wrong_shapes_raise_value_error_naming_the_expected_shape(args, message):
    mha = MultiHeadAttention(16, 4)
    tensors = [torch.zeros(shape) for shape in args]
    with pytest.raises(ValueError, match=message):
        mha(*tensors)


EXPECTED_SHAPES = r"mask must have shape \[batch=2, seq_q=5, seq_k=5\], \[2, 1, 5\], \[1, 5, 5\] or \[1, 1, 5\], "


@pytest.mark.parametrize("mask, message", [
    (torch.ones(5, 4, dtype=torch.bool), EXPECTED_SHAPES + r"got \[5, 4\]; a 2-D mask is ambiguous"),
    # [seq_q, seq_k] without the batch axis is refused too: it could be a [batch, seq_k] mask.
    (torch.ones(5, 5, dtype=torch.bool), EXPECTED_SHAPES + r"got \[5, 5\]; a 2-D mask is ambiguous: "
                                         r"use mask\[:, None, :\] .* or mask\[None\]"),
    (torch.ones(5, dtype=torch.bool), EXPECTED_SHAPES + r"got \[5\]$"),
    (torch.ones(3, 1, 5, dtype=torch.bool), EXPECTED_SHAPES + r"got \[3, 1, 5\]"),
    (torch.ones(2, 5, 1, dtype=torch.bool), EXPECTED_SHAPES + r"got \[2, 5, 1\]"),
    (torch.ones(2, 1, 1, 5, dtype=torch.bool), EXPECTED_SHAPES + r"got \[2, 1, 1, 5\]"),
    (torch.ones(5, 5), r"mask must be a boolean tensor \(True = may attend\), got torch.float32"),
])
def test_bad_masks_raise_value_error(mask, message):
    mha = MultiHeadAttention(16, 4)
    with pytest.raises(ValueError, match=message):
        mha(torch.zeros(2, 5, 16), mask=mask)


def test_indivisible_heads_raise():
    with pytest.raises(ValueError, match="d_model=10 must be divisible by heads=4"):
        MultiHeadAttention(10, 4)


def test_mask_helpers():
    assert causal_mask(3).tolist() == [[[True, False, False], [True, True, False], [True, True, True]]]
    pad = padding_mask(torch.tensor([2, 0, 3]), 3)
    assert pad.shape == (3, 1, 3)
    assert pad[:, 0].tolist() == [[True, True, False], [False, False, False], [True, True, True]]
    # Broadcasting the two gives the full [batch, seq_q, seq_k] mask.
    assert (causal_mask(3) & pad).shape == (3, 3, 3)


def test_masked_keys_get_exactly_zero_weight():
    mha = MultiHeadAttention(16, 4)
    mask = causal_mask(SEQ) & padding_mask(torch.tensor(LENGTHS), SEQ)
    mha(torch.randn(BATCH, SEQ, 16), mask=mask)
    weights = mha.attn  # [batch, heads, seq_q, seq_k]
    assert torch.all(weights[~mask.unsqueeze(1).expand_as(weights)] == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(BATCH, HEADS, SEQ))


def test_split_and_merge_heads_are_inverse_and_group_features_by_head():
    mha = MultiHeadAttention(16, 4)
    x = torch.arange(2 * 3 * 16, dtype=torch.float32).view(2, 3, 16)
    heads = mha.split_heads(x)
    assert heads.shape == (2, 4, 3, 4)
    # Head h sees features h*d_k ... (h+1)*d_k - 1 of every position.
    assert torch.equal(heads[1, 2, 0], x[1, 0, 8:12])
    assert torch.equal(mha.merge_heads(heads), x)


# ---- the scores and softmax page ----

def test_two_token_example_numbers():
    s, p = sas.two_token_example()
    assert s.shape == p.shape == (1, 2, 2)
    assert s[0, 0].tolist() == [14.0, 12.0]
    assert p[0, 0, 0].item() == pytest.approx(math.exp(2) / (1 + math.exp(2)), abs=1e-6)
    assert p[0, 0, 0].item() == pytest.approx(0.8808, abs=5e-5)
    assert p[0, 0, 1].item() == pytest.approx(0.1192, abs=5e-5)
    torch.testing.assert_close(p.sum(-1), torch.ones(1, 2))
    assert sas.softmax_by_hand([14.0, 12.0]) == pytest.approx([0.8808, 0.1192], abs=5e-5)


def test_batched_scores_shape_and_loop_equivalence():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(4, 6, 8, generator=g), torch.randn(4, 6, 8, generator=g)
    s = sas.scores(q, k)
    assert s.shape == (4, 6, 6)  # batch × seq × seq
    torch.testing.assert_close(s, sas.scores_with_a_loop(q, k))
    p = sas.softmax_over_keys(s)
    torch.testing.assert_close(p.sum(-1), torch.ones(4, 6))  # each row is a distribution
    # Rows are independent: changing one key's score in row 0 leaves the other rows unchanged.
    s2 = s.clone()
    s2[:, 0, 3] += 5
    p2 = sas.softmax_over_keys(s2)
    torch.testing.assert_close(p2[:, 1:], p[:, 1:])
    assert not torch.allclose(p2[:, 0], p[:, 0])


def test_softmax_over_keys_is_stable_for_large_scores():
    """Scores in the thousands (a float32 `exp` overflows above 88.72): only the differences
    matter, so (1000, 998) gives the weights of (14, 12). Mutation caught: `exp(s) / sum`
    without subtracting the max (inf / inf = NaN)."""
    s = torch.tensor([[[1000.0, 998.0], [-3000.0, -3002.0]]])
    torch.testing.assert_close(sas.softmax_over_keys(s), torch.tensor([[[0.8808, 0.1192]] * 2]), atol=5e-5, rtol=0)


def test_attention_is_stable_for_large_scores():
    """Queries 100 times larger than usual: scores of several hundred, on which a softmax
    without the max subtraction gives NaN in float32. Mutation caught: the same in `attention`."""
    g = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(2, 2, 6, 8, generator=g) for _ in range(3))
    q = q * 100
    assert (q @ k.transpose(-2, -1)).abs().max() / math.sqrt(8) > 200
    out, weights = attention(q, k, v, causal_mask(6).unsqueeze(1))
    assert torch.isfinite(out).all()
    ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
    torch.testing.assert_close(out.double(), ref, atol=1e-4, rtol=1e-4)


def test_scaling_keeps_score_variance_near_one():
    raw, scaled = sas.dot_product_variance(256, samples=4000)
    assert 200 < raw < 310
    assert 0.8 < scaled < 1.2


def test_scores_page_main_runs_its_assertions(capsys):
    sas.main()
    assert "all checks passed" in capsys.readouterr().out


# ---- positional encoding, feed-forward, transformer ----

def test_positional_encoding_matches_formula():
    d, n = 8, 20
    pe = sinusoidal_encoding(n, d)
    for p in (0, 1, 7, 19):
        for i in range(d // 2):
            angle = p / 10000 ** (2 * i / d)
            assert pe[p, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-5)
            assert pe[p, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-5)
    with pytest.raises(ValueError, match="must be even"):
        sinusoidal_encoding(4, 7)
    module = PositionalEncoding(d, n, dropout=0.0)
    x = torch.zeros(2, 5, d)
    torch.testing.assert_close(module(x), pe[:5].expand(2, 5, d))
    with pytest.raises(ValueError, match="longer than max_len=20"):
        module(torch.zeros(1, 21, d))


def test_feed_forward_is_position_wise():
    torch.manual_seed(0)
    ff = perturb(FeedForward(8, 32, dropout=0.0))
    x = torch.randn(2, 6, 8)
    full = ff(x)
    assert full.shape == (2, 6, 8)
    # Position 3 alone gives the same output as position 3 inside the sequence.
    torch.testing.assert_close(ff(x[:, 3:4]), full[:, 3:4])
    expected = torch.relu(x @ ff.layer1.weight.T + ff.layer1.bias) @ ff.layer2.weight.T + ff.layer2.bias
    torch.testing.assert_close(full, expected)


def test_pre_norm_layer_structure():
    """Mutation caught: `norm_attn` used before the feed-forward network too (only with the
    parameters perturbed: fresh norms are identical)."""
    torch.manual_seed(0)
    layer = perturb(TransformerLayer(16, 4, 32, dropout=0.0)).eval()
    x = torch.randn(2, 5, 16)
    h = x + layer.attn(layer.norm_attn(x), causal=True)
    expected = h + layer.ff(layer.norm_ff(h))
    torch.testing.assert_close(layer(x, causal=True), expected)


@pytest.mark.parametrize("fused", [False, True])
def test_causal_model_cannot_see_the_future(fused):
    torch.manual_seed(0)
    model = DecoderOnlyTransformer(ModelConfig(vocab_size=11, d_model=16, heads=4, layers=2,
                                               d_ff=32, max_len=12, dropout=0.0, fused=fused))
    perturb(model).eval()
    tokens = torch.randint(0, 11, (2, 10))
    logits = model(tokens)
    assert logits.shape == (2, 10, 11)
    for t in (0, 4, 8):
        changed = tokens.clone()
        changed[:, t + 1] = (changed[:, t + 1] + 1) % 11
        new = model(changed)
        # Everything up to t is unchanged; position t + 1 does see its new input.
        torch.testing.assert_close(new[:, : t + 1], logits[:, : t + 1], rtol=0, atol=1e-6)
        assert not torch.allclose(new[:, t + 1], logits[:, t + 1], atol=1e-4)


@pytest.mark.parametrize("fused", [False, True])
def test_model_runs_under_bfloat16_autocast(fused):
    """The mixed-precision path used on GPUs, exercised with CPU autocast."""
    torch.manual_seed(0)
    model = DecoderOnlyTransformer(ModelConfig(vocab_size=11, d_model=16, heads=4, layers=2,
                                               d_ff=32, max_len=12, dropout=0.0, fused=fused))
    perturb(model).eval()
    tokens = torch.randint(0, 11, (2, 10))
    reference = model(tokens)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(tokens)
    assert logits.dtype == torch.bfloat16
    torch.testing.assert_close(logits.float(), reference, rtol=0.05, atol=0.1)


def test_importing_the_package_is_cheap():
    """The index page imports nothing, so `import annotated_attention` does not load PyTorch."""
    import subprocess
    import sys
    code = "import sys, annotated_attention; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
