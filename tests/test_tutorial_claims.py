"""The numbers and comparisons in the tutorial's prose, asserted by running the code they describe,
and the fixes of the tutorial review (issue 28): the KV cache under the same autocast as
`generate`, the caller's mode restored, train mode refused, the last valid batch start drawn, the
bigram baseline, and scripts that write no tracked file unless asked.

Every comparison of two paths here runs on a model whose parameters were all moved away from
their initial values (`perturb`): at initialisation every layer norm is (1, 0) and many biases are
0, so two paths that swap or drop them agree anyway.

Mutation checks (planted by hand, then reverted; each fails a test below): `generate_cached`
without `autocast` (the head's output is float32, not bfloat16); `model.train()` at the end of
`generate` (the mode is not restored); the `model.training` check in `forward_with_cache` removed;
`randint(0, len(data) - seq_len - 1)` (start 1 of a two-window text is never drawn); the empty-row
guard `bool(empty.any())` removed (the causal case keeps 64 MiB more at 512 tokens); the
layer norms of a layer swapped (`norm_attn` ↔ `norm_ff` in `TransformerLayer.forward`: only the
perturbed model tells them apart).
"""
from __future__ import annotations

import contextlib
import json
import math
import re
import subprocess
import sys

import pytest
import torch

from conftest import ROOT
from annotated_attention import experiment, figures, kv_cache, learned, mha
from annotated_attention.data import Vocabulary, bigram_loss, random_batch, split
from annotated_attention.experiment import generate
from annotated_attention.kv_cache import KVCache, forward_with_cache, generate_cached
from annotated_attention.mha import MultiHeadAttention, attention_flops, causal_mask, saved_for_backward
from annotated_attention.transformer import DecoderOnlyTransformer, ModelConfig
from tutorial_helpers import all_distinct, perturb

PAGES = ROOT / "source" / "annotated_attention"
MIB = 1024 * 1024


def small_model(fused: bool = True, dropout: float = 0.1) -> DecoderOnlyTransformer:
    torch.manual_seed(0)
    m = DecoderOnlyTransformer(ModelConfig(vocab_size=13, d_model=32, heads=4, layers=2, d_ff=64,
                                           max_len=24, dropout=dropout, fused=fused)).double()
    return perturb(m).eval()


def test_perturb_moves_every_parameter_and_separates_the_norms():
    torch.manual_seed(0)
    fresh = DecoderOnlyTransformer(ModelConfig(vocab_size=13, d_model=32, heads=4, layers=2, d_ff=64, max_len=24))
    layer = fresh.layers[0]
    assert torch.equal(layer.norm_attn.weight, layer.norm_ff.weight)  # why perturbing is needed
    assert not all_distinct(fresh)
    moved = perturb(fresh)
    assert not torch.equal(moved.layers[0].norm_attn.weight, moved.layers[0].norm_ff.weight)
    assert not torch.equal(moved.layers[0].norm_attn.bias, moved.layers[0].norm_ff.bias)
    assert all_distinct(moved)


# ## Two paths, on perturbed parameters

@pytest.mark.parametrize("causal", [True, False])
def test_explicit_and_fused_paths_agree_on_perturbed_weights(causal):
    a = perturb(MultiHeadAttention(32, 4, dropout=0.3).double()).eval()
    x = torch.randn(3, 9, 32, dtype=torch.double, generator=torch.Generator().manual_seed(1))
    mask = torch.ones(3, 1, 9, dtype=torch.bool)
    mask[1, 0, 6:] = False
    a.fused = True
    fused = a(x, x, x, mask=mask, causal=causal)
    a.fused = False
    explicit = a(x, x, x, mask=mask, causal=causal)
    torch.testing.assert_close(fused, explicit, rtol=0, atol=1e-10)


def test_whole_model_explicit_and_fused_agree_on_perturbed_weights():
    tokens = torch.randint(0, 13, (2, 24), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        torch.testing.assert_close(small_model(True)(tokens), small_model(False)(tokens), rtol=0, atol=1e-10)


@pytest.mark.parametrize("fused", [False, True])
def test_cache_equals_full_recomputation_on_perturbed_weights(fused):
    m = small_model(fused)
    tokens = torch.randint(0, 13, (2, 24), generator=torch.Generator().manual_seed(1))
    cache = KVCache(len(m.layers))
    with torch.no_grad():
        steps = [forward_with_cache(m, tokens[:, t:t + 1], cache) for t in range(24)]
        torch.testing.assert_close(torch.cat(steps, dim=1), m(tokens), rtol=0, atol=1e-10)


# ## Generation: autocast, modes

@contextlib.contextmanager
def cpu_bfloat16(monkeypatch):
    """The GPU branch's autocast, on the CPU: what `autocast(device)` returns on CUDA."""
    def fake(device):
        return torch.autocast(device_type="cpu", dtype=torch.bfloat16)
    monkeypatch.setattr(experiment, "autocast", fake)
    monkeypatch.setattr(kv_cache, "autocast", fake)
    yield


def test_embeddings_are_untied_and_start_at_the_encodings_size():
    """transformer.py: no sqrt(d_model) factor, because the embedding is not tied to the output
    projection and starts with variance 1, the order of the encoding's mean square of 1/2."""
    torch.manual_seed(0)
    model = DecoderOnlyTransformer(ModelConfig(vocab_size=100, d_model=128))
    assert model.embed.weight.data_ptr() != model.head.weight.data_ptr()
    assert model.embed.weight.var().item() == pytest.approx(1.0, abs=0.05)
    tokens = torch.arange(100)[None]
    model.eval()  # no dropout: the positional encoding's output is embedding + encoding, unscaled
    with torch.no_grad():
        torch.testing.assert_close(model.pos(model.embed(tokens)) - model.embed(tokens), model.pos.pe[:100][None])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA's autocast lists differ from the CPU's")
def test_cuda_autocast_keeps_the_explicit_softmax_in_float32_but_not_sdpa():
    """experiment.py's `autocast`: on CUDA the explicit path's softmax and the loss run in float32,
    the fused kernel in bfloat16 as a whole. (On the CPU, autocast leaves softmax in bfloat16.)"""
    q = torch.randn(1, 2, 8, 16, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        scores = q @ q.transpose(-2, -1)
        assert scores.dtype == torch.bfloat16 and scores.softmax(-1).dtype == torch.float32
        assert torch.nn.functional.scaled_dot_product_attention(q, q, q).dtype == torch.bfloat16


def test_cache_runs_under_the_same_autocast_as_generate(monkeypatch):
    m = small_model().float()
    vocab = Vocabulary("abcdefghijklm")
    dtypes = []
    m.head.register_forward_hook(lambda mod, inp, out: dtypes.append(out.dtype))
    with cpu_bfloat16(monkeypatch):
        full = generate(m, vocab, "abc", 12, torch.device("cpu"), seed=0)
        n = len(dtypes)
        cached = generate_cached(m, vocab, "abc", 12, torch.device("cpu"), seed=0)
    assert set(dtypes[:n]) == {torch.bfloat16}
    assert set(dtypes[n:]) == {torch.bfloat16}, "generate_cached must use generate's autocast"
    # Up to bfloat16 rounding: the same sampler on nearly the same probabilities
    same = sum(a == b for a, b in zip(full, cached))
    assert full[:3] == cached[:3] == "abc" and same >= len(full) - 9


@pytest.mark.parametrize("training", [True, False])
def test_generation_gives_the_model_back_in_the_callers_mode(training):
    m = small_model()
    vocab = Vocabulary("abcdefghijklm")
    for fn in (generate, generate_cached):
        m.train(training)
        fn(m, vocab, "ab", 5, torch.device("cpu"))
        assert m.training is training, fn.__name__
    m.train(training)
    experiment.evaluate(m, torch.randint(0, 13, (4, 9)), 2, torch.device("cpu"))
    assert m.training is training


def test_cache_refuses_train_mode():
    m = small_model().train()
    with pytest.raises(ValueError, match=r"model\.eval\(\)"):
        forward_with_cache(m, torch.zeros(1, 3, dtype=torch.long), KVCache(len(m.layers)))


# ## Data

def test_every_valid_batch_start_is_drawn():
    seq_len = 4
    data = torch.arange(seq_len + 2)  # two windows of seq_len + 1: starts 0 and 1
    x, _ = random_batch(data, 200, seq_len, torch.Generator().manual_seed(0))
    assert set(x[:, 0].tolist()) == {0, 1}
    x, y = random_batch(torch.arange(seq_len + 1), 3, seq_len)  # exactly one window
    assert x[:, 0].tolist() == [0, 0, 0] and y[0].tolist() == [1, 2, 3, 4]


def test_random_batch_follows_its_generator():
    """Mutation caught: `randint` without `generator=` (the batch would follow the global state)."""
    data = torch.arange(1000)
    torch.manual_seed(1)
    a, _ = random_batch(data, 8, 16, torch.Generator().manual_seed(5))
    torch.manual_seed(2)
    b, _ = random_batch(data, 8, 16, torch.Generator().manual_seed(5))
    c, _ = random_batch(data, 8, 16, torch.Generator().manual_seed(6))
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_split_is_disjoint_and_complete():
    """Every token goes to exactly one side, and validation is every 10th block. With distinct
    ids, an overlap shows as a shared id. Mutation caught: training on `i % every != 0` (the
    lengths still add up, but the validation blocks are trained on)."""
    ids = torch.arange(25_000)
    train_ids, val_ids = split(ids, block=100, every=10)
    assert not set(train_ids.tolist()) & set(val_ids.tolist())
    assert sorted(train_ids.tolist() + val_ids.tolist()) == ids.tolist()
    assert set(val_ids.tolist()) == {i for i in range(25_000) if (i // 100) % 10 == 9}


def test_bigram_loss_is_the_smoothed_count_estimate():
    train = torch.tensor([0, 1, 0, 1, 0, 2])
    val = torch.tensor([0, 1, 2])
    a, v = 0.5, 3
    # p(1 | 0) = (2 + a) / (3 + 3a); p(2 | 1) = (0 + a) / (2 + 3a)
    expected = -(math.log((2 + a) / (3 + 3 * a)) + math.log(a / (2 + 3 * a))) / 2
    assert bigram_loss(train, val, v, alpha=a) == pytest.approx(expected, abs=1e-12)
    periodic = torch.tensor([0, 1] * 500)
    assert bigram_loss(periodic, periodic, 2, alpha=1e-3) < 1e-2


# ## mha.py: FLOPs and memory

def test_flop_crossover_is_at_twice_d_model():
    d = 256
    for n in (64, 128, 256, 511):
        projections, products = attention_flops(n, d)
        assert projections > products
    assert attention_flops(2 * d, d)[0] == attention_flops(2 * d, d)[1]
    for n in (513, 1024):
        projections, products = attention_flops(n, d)
        assert products > projections
    text = (PAGES / "mha.py").read_text(encoding="utf-8")
    assert "$n = 2 d_{model}$, 512 tokens here" in text and "`d_model` 256" in text


def test_growth_per_doubling_in_the_prose():
    """mha.py's "Time and memory": the FLOP growth per doubling (×2.22 to ×3.00), the range of
    the measured time factors, the memory growth of both paths and the growing ratio, all from
    the bullet list and `attention_flops`."""
    text = (PAGES / "mha.py").read_text(encoding="utf-8")
    prose = " ".join(line.lstrip("# ") for line in text.splitlines())
    rows = re.findall(r"^# \* (\d+) tokens: ([\d.]+)(?: \(×([\d.]+)\))? and ([\d.]+) ms(?: \(×([\d.]+)\))?, "
                      r"([\d.]+) times; ([\d.]+) and ([\d.]+) MiB$", text, re.M)
    assert [int(r[0]) for r in rows] == [64, 128, 256, 512, 1024]
    total = lambda n: sum(attention_flops(n, 256))
    flops = [total(2 * n) / total(n) for n in (64, 128, 256, 512)]
    assert f"{flops[0]:.2f}" == "2.22" and f"{flops[-1]:.2f}" == "3.00"
    assert flops == sorted(flops) and max(flops) < 4
    assert "a doubling costs ×2.22 from 64 to 128 tokens, rising to ×3.00 from 512 to 1024" in prose
    explicit_x = [float(r[2]) for r in rows[1:]]
    fused_x = [float(r[4]) for r in rows[1:]]
    assert f"explicit ×{min(explicit_x):.2f} to ×{max(explicit_x):.2f}, fused ×{min(fused_x):.2f} to ×{max(fused_x):.2f}" in prose
    mem = [float(r[6]) for r in rows]
    mem_fused = [float(r[7]) for r in rows]
    growth = [b / a for a, b in zip(mem, mem[1:])]
    assert growth == sorted(growth) and f"{growth[0]:.1f}" == "2.2" and f"{growth[-1]:.1f}" == "3.5"
    fused_growth = [b / a for a, b in zip(mem_fused, mem_fused[1:])]
    assert f"{min(fused_growth):.1f}" == "1.7" and f"{max(fused_growth):.1f}" == "2.0"
    assert "×2.2 from 64 to 128 tokens, rising to ×3.5 from 512 to 1024" in prose and "×1.7 to ×2.0" in prose
    ratios = [float(r[5]) for r in rows]
    assert ratios == sorted(ratios) and len(set(ratios)) == len(ratios)
    for seq, a, _, b, _, ratio, *_ in rows:  # the printed ratio is the printed (rounded) times'
        assert float(a) / float(b) == pytest.approx(float(ratio), rel=0.01), seq


def test_all_heads_cost_one_big_heads_flops_but_h_times_its_weights_memory():
    """mha.py: with d_k = d_model / h, the h products of width d_k are as many operations as one
    of width d_model; the attention weights are one [seq, seq] matrix per head."""
    n, d, h = 40, 64, 4
    per_head_products = 2 * 2 * n * n * (d // h)  # QK^T and PV of one head, a multiply-add = 2
    assert h * per_head_products == attention_flops(n, d)[1]
    a = MultiHeadAttention(d, h)
    a(torch.randn(2, n, d), causal=True)
    assert a.attn.shape == (2, h, n, n) and a.attn.numel() == h * (2 * n * n)


@pytest.mark.parametrize("bias", [True, False])
def test_fully_masked_query_outputs_the_output_bias(bias):
    """mha.py's mask convention: a query with no visible key has a zero attention output, so the
    module gives W^O's bias, which is zero only with bias=False."""
    a = perturb(MultiHeadAttention(16, 4, bias=bias))
    mask = torch.ones(2, 1, 5, dtype=torch.bool)
    mask[1] = False
    for fused in (False, True):
        out = a(torch.randn(2, 5, 16), mask=mask, fused=fused)
        expected = a.output.bias if bias else torch.zeros(16)
        torch.testing.assert_close(out[1], expected.expand(5, 16).detach())
    assert bias == bool(a.output.bias is not None and a.output.bias.abs().sum() > 0)


def _saved(seq: int, fused: bool, empty_row: bool = False) -> int:
    torch.manual_seed(0)
    a = MultiHeadAttention(256, 8)
    a.fused = fused
    x = torch.randn(8, seq, 256, requires_grad=True)
    mask = None
    if empty_row:  # one sequence of length 0: its queries have no key, which forces the fill
        mask = torch.ones(8, 1, seq, dtype=torch.bool)
        mask[0] = False
    _, saved = saved_for_backward(lambda: a(x, x, x, mask=mask, causal=True))
    return saved


def test_memory_in_the_prose_is_what_autograd_saves():
    """The bullet list of mha.py's "Time and memory" (up to 512 tokens: 1024 takes too long
    here), and the 64 of 149 MiB that zeroing the empty rows used to cost at 512 tokens."""
    text = (PAGES / "mha.py").read_text(encoding="utf-8")
    rows = re.findall(r"^# \* (\d+) tokens: .*; ([\d.]+) and ([\d.]+) MiB$", text, re.M)
    assert len(rows) == 5
    for seq, explicit, fused in rows:
        if int(seq) > 512:
            continue
        assert _saved(int(seq), False) / MIB == pytest.approx(float(explicit), abs=0.051), seq
        assert _saved(int(seq), True) / MIB == pytest.approx(float(fused), abs=0.051), seq
    # (the padding mask joined with the causal one is a `[8, 1, 512, 512]` bool tensor that the
    # causal-only case has not: 2 MiB, apart from the fill)
    with_fill = _saved(512, False, empty_row=True) - 8 * 512 * 512
    assert (with_fill - _saved(512, False)) / MIB == pytest.approx(64, abs=0.5)
    assert with_fill / MIB == pytest.approx(149, abs=0.5)
    assert "64 of 149 MiB at 512 tokens" in text


# ## learned.py: the baseline beside the measured heads

def test_uniform_head_baseline_is_seven_point_seven_five_on_32_characters():
    n = len(learned.ATTENTION_TEXT)
    assert n == 32
    assert learned.head_summary(learned.uniform_weights(n))["distance"] == pytest.approx(7.75)
    committed = learned.load_data()
    assert committed["uniform"]["distance"] == pytest.approx(7.75)
    text = (PAGES / "learned.py").read_text(encoding="utf-8")
    assert "7.75 characters back on our\n32-character line" in text
    table = figures.render_all()["learned_heads.svg"]
    assert ">7.8<" in table or ">7.7<" in table or ">7.75<" in table  # the last row, as printed
    for layer in committed["heads"]:
        for head in layer:
            assert f">{head['distance']:.1f}<" in table and f">{head['entropy']:.2f}<" in table


def test_entropy_and_runs_of_a_known_map():
    sharp = [[1.0 if j == max(0, i - 1) else 0.0 for j in range(6)] for i in range(6)]
    assert learned.head_summary(sharp)["entropy"] == 0
    assert learned.head_summary(sharp)["previous"] == 1
    same_key = [[1.0 if j == 0 else 0.0 for j in range(6)] for _ in range(6)]
    assert learned.longest_shared_run(same_key) == 6
    assert learned.longest_shared_run(sharp) == 2  # queries 0 and 1 both look at key 0


# ## Scripts write no tracked file unless asked

def _tracked_bytes() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in figures.FIGURE_DIR.iterdir()}


def test_figures_script_writes_elsewhere_by_default(tmp_path):
    before = _tracked_bytes()
    subprocess.run([sys.executable, "-m", "annotated_attention.figures"], cwd=tmp_path, check=True,
                   capture_output=True, timeout=300)
    assert _tracked_bytes() == before
    drawn = {p.name: p.read_bytes() for p in (tmp_path / "artifacts" / "figures").iterdir()}
    # ... and what it draws is, byte for byte, what is committed
    assert drawn == {k: v for k, v in before.items() if k.endswith(".svg")}


def test_learned_script_writes_elsewhere_and_the_same_bytes(tmp_path, monkeypatch):
    """The committed numbers, as `main` would get them from a run: `main` writes them and the
    figures into `--out`, byte for byte as committed, and leaves the committed files alone."""
    before = _tracked_bytes()
    committed = learned.load_data()
    monkeypatch.setattr(learned, "run", lambda: json.loads(json.dumps(committed)))
    learned.main(["--out", str(tmp_path)])
    assert _tracked_bytes() == before
    assert (tmp_path / "learned.json").read_bytes() == before["learned.json"]
    for name, data in before.items():
        assert (tmp_path / name).read_bytes() == data, name
