"""Tests aimed at subtle bugs a learner could make in the layers and the training loop.

Each test names, in its docstring, the small bugs ("mutations") that were planted by hand in the
tutorial's code to see the test fail, and then reverted. A mutation that no test caught would be
a hole in these tests; every mutation listed here made at least one test of the tutorial fail
(`tests/test_attention.py`, `tests/test_experiment.py`, this file), when run one at a time.
"""
import math
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from annotated_attention import experiment
from annotated_attention.data import Vocabulary, load_text, random_batch, split
from annotated_attention.experiment import TrainConfig, generate, learning_rate, make_optimizer, train
from annotated_attention.feed_forward import FeedForward
from annotated_attention.mha import MultiHeadAttention, attention, causal_mask, padding_mask, score_variance_at_init
from annotated_attention.positional_encoding import PositionalEncoding, sinusoidal_encoding
from annotated_attention.transformer import DecoderOnlyTransformer, ModelConfig, TransformerLayer
from tutorial_helpers import perturb


# ---- masks: rows without any visible key, and the mask shapes ----

def sdpa_like_older_pytorch(*args, attn_mask=None, **kwargs):
    """F.scaled_dot_product_attention as older PyTorch versions behave: NaN for a query that
    sees no key (PyTorch 2.13 returns zeros, which would hide a missing fix-up on the fused path)."""
    out = SDPA(*args, attn_mask=attn_mask, **kwargs)
    if attn_mask is not None:
        out = out.masked_fill(~attn_mask.any(-1, keepdim=True), float("nan"))
    return out


SDPA = F.scaled_dot_product_attention


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
@pytest.mark.parametrize("causal", [False, True])
def test_fully_masked_rows_give_zero_on_both_paths(causal, monkeypatch):
    """A query that may attend to no key gets zero weights and a zero output, explicit = fused.

    Mutations caught: removing `scores.masked_fill(empty, 0.0)` (the softmax makes NaN, which
    the next line hides in the values but anomaly detection sees in the backward pass); removing
    `weights.masked_fill(empty, 0.0)` (uniform weights, not zero); removing the
    `x.masked_fill(...)` after the fused kernel (caught with the kernel behaving as in older
    PyTorch versions, which returned NaN there).
    """
    monkeypatch.setattr(F, "scaled_dot_product_attention", sdpa_like_older_pytorch)
    torch.manual_seed(0)
    mha = perturb(MultiHeadAttention(16, 4).double())
    x = torch.randn(3, 4, 16, dtype=torch.float64, requires_grad=True)
    # Sequence 1 has length 0: none of its queries sees a key. In sequence 2, query 0 sees none.
    mask = padding_mask(torch.tensor([4, 0, 4]), 4).expand(3, 4, 4).clone()
    mask[2, 0] = False
    outs, grads = [], []
    for fused in (False, True):
        with torch.autograd.detect_anomaly():  # raises if the backward pass meets a NaN
            out = mha(x, mask=mask, causal=causal, fused=fused)
            assert torch.isfinite(out).all()
            outs.append(out)
            (g,) = torch.autograd.grad((out * torch.linspace(-1, 1, out.numel()).view_as(out)).sum(), x)
        assert torch.isfinite(g).all()
        grads.append(g)
        if not fused:
            assert torch.equal(mha.attn[1], torch.zeros_like(mha.attn[1]))
            assert torch.equal(mha.attn[2, :, 0], torch.zeros_like(mha.attn[2, :, 0]))
            torch.testing.assert_close(mha.attn[0].sum(-1), torch.ones(4, 4, dtype=torch.float64))
    torch.testing.assert_close(outs[0], outs[1])
    torch.testing.assert_close(grads[0], grads[1])
    # Zero attention output: what is left is the output projection's bias.
    bias = mha.output.bias.expand(4, 16)
    torch.testing.assert_close(outs[0][1], bias)
    torch.testing.assert_close(outs[0][2, 0], bias[0])


def test_attention_function_defines_empty_rows_as_zero():
    q = torch.randn(1, 2, 3, 4)
    mask = torch.tensor([[True, True, False], [False, False, False], [True, False, False]])
    out, weights = attention(q, q, q, mask[None, None])
    assert torch.equal(weights[:, :, 1], torch.zeros(1, 2, 3))
    assert torch.equal(out[:, :, 1], torch.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="mask must have four axes"):
        attention(q, q, q, mask)


def test_batch_seq_k_padding_mask_is_refused_even_when_batch_equals_seq_q():
    """The bug of issue 17: a [batch, seq_k] mask read as [seq_q, seq_k] when batch == seq_q.

    Mutation caught: accepting 2-D masks again (`if mask.dim() == 2: mask = mask[None]`).
    """
    mha = perturb(MultiHeadAttention(16, 4))
    x = torch.randn(5, 5, 16)  # batch == seq_q == 5
    lengths = torch.tensor([5, 4, 3, 2, 1])
    keep = torch.arange(5)[None, :] < lengths[:, None]  # [batch, seq_k], the other convention
    with pytest.raises(ValueError, match=r"a 2-D mask is ambiguous: use mask\[:, None, :\]"):
        mha(x, mask=keep)
    # The hint gives the right answer: the same as padding_mask.
    torch.testing.assert_close(mha(x, mask=keep[:, None, :]), mha(x, mask=padding_mask(lengths, 5)))


@pytest.mark.parametrize("d_model, heads", [(128, 4), (128, 8), (256, 4), (512, 8)])
def test_scaled_scores_start_with_variance_one_ninth(d_model, heads):
    """The number on the multi-head attention page: about 1/9, whatever the head size."""
    assert score_variance_at_init(d_model, heads) == pytest.approx(1 / 9, abs=0.015)


# ---- dropout placement ----

def test_dropout_sits_on_the_residual_branches_only():
    """With p = 1 in train mode both branches are dropped entirely, so a layer is the identity.

    Mutations caught: `x = self.dropout(x + self.attn(...))` (dropout on the residual sum: the
    output is 0); dropping the branch dropout of either sub-layer (`x = x + self.attn(...)` or
    `x = x + self.ff(h)`: the output is x plus that branch); dropout on the layer's input
    (`h = self.norm_attn(self.dropout(x))` is harmless here, but `x = self.dropout(x)` zeroes x).
    """
    torch.manual_seed(0)
    x = torch.randn(2, 5, 16)
    for fused in (False, True):
        layer = TransformerLayer(16, 4, 32, dropout=1.0, fused=fused).train()
        assert torch.equal(layer(x, causal=True), x)
    # With p = 0.5 the branches are random but the residual path is not: eval mode undoes it all.
    layer = perturb(TransformerLayer(16, 4, 32, dropout=0.5)).train()
    assert not torch.allclose(layer(x, causal=True), layer(x, causal=True))
    layer.eval()
    h = x + layer.attn(layer.norm_attn(x), causal=True)
    torch.testing.assert_close(layer(x, causal=True), h + layer.ff(layer.norm_ff(h)))


def test_feed_forward_dropout_is_on_the_hidden_activations():
    """p = 1: the hidden layer is dropped, so the output is the second layer's bias.

    Mutations caught: dropout after `layer2` (output 0, not the bias); dropout before the
    activation is equivalent and passes; no dropout (the output depends on x).
    """
    ff = FeedForward(8, 32, dropout=1.0).train()
    out = ff(torch.randn(2, 3, 8))
    torch.testing.assert_close(out, ff.layer2.bias.expand(2, 3, 8))


def test_positional_encoding_dropout_comes_after_adding_the_encoding():
    """With zero embeddings the output is dropout(PE): zeros and PE / (1 - p), never PE itself.

    Mutation caught: `self.dropout(x) + self.pe[:seq]` (the encoding passes undropped).
    """
    torch.manual_seed(0)
    pe = PositionalEncoding(32, 64, dropout=0.5).train()
    out = pe(torch.zeros(4, 64, 32))
    table = sinusoidal_encoding(64, 32).expand(4, 64, 32)
    nonzero = table.abs() > 1e-3
    dropped = (out == 0) & nonzero
    assert 0.4 < dropped.float().sum().item() / nonzero.sum().item() < 0.6
    kept = (out != 0)
    torch.testing.assert_close(out[kept], 2 * table[kept])


def test_model_applies_embedding_encoding_layers_final_norm_and_head_in_order():
    """The decoder-only model, recomputed by hand from its parts (eval mode).

    Mutations caught: dropping the final layer norm; `causal=False` in the layer loop (also
    caught by the no-future test); the positional encoding skipped; the layers applied to the
    embedding each time instead of to the running `x`.
    """
    torch.manual_seed(0)
    model = DecoderOnlyTransformer(ModelConfig(vocab_size=11, d_model=16, heads=4, layers=2, d_ff=32,
                                               max_len=12, dropout=0.0, fused=False))
    perturb(model).eval()  # fresh layer norms are all alike, which would hide a mix-up
    tokens = torch.randint(0, 11, (2, 10))
    x = model.embed(tokens) + sinusoidal_encoding(12, 16)[:10]
    for layer in model.layers:
        x = layer(x, mask=causal_mask(10))
    torch.testing.assert_close(model(tokens), model.head(model.norm(x)))


# ---- generation ----

class CopyLastInput(nn.Module):
    """A stand-in model: at position t it predicts the input token at t, with near certainty.

    A correct `generate` therefore repeats the prompt's last character. It records the length of
    every context it was given.
    """

    def __init__(self, vocab_size: int, max_len: int):
        super().__init__()
        self.config = ModelConfig(vocab_size=vocab_size, max_len=max_len)
        self.vocab_size = vocab_size
        self.seen: list[int] = []

    def forward(self, tokens):
        self.seen.append(tokens.shape[1])
        return F.one_hot(tokens, self.vocab_size).float() * 100.0


def test_generate_samples_from_the_last_position_and_crops_the_context():
    """Mutations caught: `logits[:, 0, :]` (samples from the first position: "abaaaa");
    `logits[:, -2, :]`; no cropping to `max_len` (contexts grow past it); cropping the start
    instead of the end (`ids[:, :max_len]`: the copy would stop following the last character).
    """
    vocab = Vocabulary("abc")
    model = CopyLastInput(3, max_len=4)
    text = generate(model, vocab, "ab", 6, torch.device("cpu"))
    assert text == "ab" + "b" * 6
    assert model.seen == [2, 3, 4, 4, 4, 4]
    text = generate(model, vocab, "bca", 3, torch.device("cpu"))
    assert text == "bcaaaa"


class FixedLogits(nn.Module):
    """A stand-in model that predicts the same logits (0, 1) for two characters everywhere."""

    def __init__(self):
        super().__init__()
        self.config = ModelConfig(vocab_size=2, max_len=8)

    def forward(self, tokens):
        return torch.tensor([0.0, 1.0]).expand(*tokens.shape, 2)


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0])
def test_generate_samples_from_softmax_of_logits_over_temperature(temperature):
    """The frequency of "b" in 3000 samples is softmax((0, 1) / T)[1], within 3 %.

    Mutations caught: `logits * temperature` (0.5 gives 0.62 instead of 0.88); softmax over
    `dim=0` (every probability 1, so both characters equally often); greedy `argmax` (only "b").
    """
    text = generate(FixedLogits(), Vocabulary("ab"), "a", 3000, torch.device("cpu"),
                    temperature=temperature)
    expected = torch.tensor([0.0, 1.0 / temperature]).softmax(-1)[1].item()
    assert text[1:].count("b") / 3000 == pytest.approx(expected, abs=0.03)


def test_generate_runs_in_eval_mode_and_restores_train_mode():
    """Mutation caught: no `model.eval()` in `generate` (dropout makes two runs differ)."""
    torch.manual_seed(0)
    model = DecoderOnlyTransformer(ModelConfig(vocab_size=3, d_model=16, heads=2, layers=1, d_ff=32,
                                               max_len=16, dropout=0.5))
    vocab = Vocabulary("abc")
    first = generate(model, vocab, "ab", 12, torch.device("cpu"), seed=1)
    assert model.training
    assert generate(model, vocab, "ab", 12, torch.device("cpu"), seed=1) == first


def test_generate_depends_on_its_seed_only():
    """The same seed gives the same text whatever the global random state; other seeds give other
    texts. Mutation caught: `manual_seed(0)` instead of `manual_seed(seed)` in `generate`."""
    vocab = Vocabulary("ab")
    texts = []
    for seed in range(4):
        torch.manual_seed(100 + seed)  # the global state must not matter
        texts.append(generate(FixedLogits(), vocab, "a", 40, torch.device("cpu"), temperature=2.0, seed=seed))
    torch.manual_seed(7)
    assert generate(FixedLogits(), vocab, "a", 40, torch.device("cpu"), temperature=2.0, seed=2) == texts[2]
    assert len(set(texts)) == 4


# ---- optimizer and schedule ----

def test_weight_decay_is_applied_to_matrices_only():
    """Mutations caught: `p.dim() >= 1` (biases and layer-norm gains decayed); the two groups'
    weight decays swapped; a parameter left out of both groups or put in both.
    """
    torch.manual_seed(0)
    model = DecoderOnlyTransformer(ModelConfig(vocab_size=11, d_model=16, heads=4, layers=2, d_ff=32,
                                               max_len=12))
    opt = make_optimizer(model, TrainConfig(weight_decay=0.1))
    decay_of = {}
    for group in opt.param_groups:
        for p in group["params"]:
            assert id(p) not in decay_of, "a parameter is in two groups"
            decay_of[id(p)] = group["weight_decay"]
    for name, p in model.named_parameters():
        assert id(p) in decay_of, f"{name} is not optimized"
        wanted = 0.1 if name.endswith("weight") and "norm" not in name else 0.0
        assert decay_of[id(p)] == wanted, name
    # The embedding and the attention projections are among the decayed matrices.
    assert decay_of[id(model.embed.weight)] == 0.1 and decay_of[id(model.layers[0].attn.query.weight)] == 0.1
    assert decay_of[id(model.layers[0].norm_attn.weight)] == 0.0


def test_learning_rate_schedule_end_is_schedule_steps_when_set():
    cfg = TrainConfig(steps=200, schedule_steps=100, lr=1.0, warmup=10, min_lr_ratio=0.1)
    assert learning_rate(55, cfg) == pytest.approx(0.55)
    assert learning_rate(100, cfg) == pytest.approx(0.1)
    assert learning_rate(150, cfg) == pytest.approx(0.1)  # beyond the end: the final rate


def tiny(tmp_path, **overrides) -> TrainConfig:
    cfg = TrainConfig(steps=12, batch_size=4, seq_len=16, lr=1e-2, warmup=3, eval_every=100,
                      d_model=16, heads=2, layers=1, d_ff=32, dropout=0.1, device="cpu",
                      checkpoint=str(tmp_path / "attention.pt"), sample_len=0)
    return replace(cfg, **overrides)


def test_resume_with_more_steps_keeps_the_schedule(tmp_path, capsys):
    """A 12-step run resumed with `--steps 20`: steps 12..19 run at the final learning rate.

    Mutations caught: `fix_schedule` returning `cfg` unchanged (the schedule would be
    recomputed for 20 steps, and the LR at step 12 would jump up); `learning_rate` ignoring
    `schedule_steps`; the checkpoint saving the original `cfg` instead of the fixed one (a second
    resume would then see `schedule_steps == 0`).
    """
    first = train(tiny(tmp_path))
    assert first.lrs == [learning_rate(s, tiny(tmp_path)) for s in range(12)]
    second = train(tiny(tmp_path, steps=20, resume=True))
    assert second.step == 20
    assert second.lrs == pytest.approx([1e-2 * 0.1] * 8)
    assert "schedule of the checkpoint ends at step 12" in capsys.readouterr().out
    third = train(tiny(tmp_path, steps=22, resume=True))
    assert third.lrs == pytest.approx([1e-2 * 0.1] * 2)
    # An explicit --schedule-steps gives a new, longer schedule.
    fourth = train(tiny(tmp_path, steps=24, schedule_steps=40, resume=True))
    assert fourth.lrs == pytest.approx([learning_rate(s, tiny(tmp_path, schedule_steps=40)) for s in (22, 23)])


# ---- the training loop, against a loop written out in the test ----

def test_training_steps_equal_a_hand_written_loop(tmp_path):
    """Three steps of `train` against the textbook loop, parameter for parameter.

    Mutations caught: no `optimizer.zero_grad` (gradients accumulate); the loss against `x`
    instead of `y` (no shift); clipping after `optimizer.step()`; the learning rate set from
    `step + 1`; the batch drawn before reseeding; `loss.backward()` on the mean of the logits;
    dropout left out of training (`train_model.eval()`); the model's or the steps' seed ignored
    (`torch.manual_seed(0)`, `step_seed(0, ...)`: hence a seed other than the default).
    """
    cfg = tiny(tmp_path, steps=3, grad_clip=0.5, seed=3)  # not the default 0: the seed must be used
    result = train(cfg)

    text = load_text()
    vocab = Vocabulary.from_text(text)
    train_data, _ = split(vocab.encode(text))
    torch.manual_seed(cfg.seed)
    model = DecoderOnlyTransformer(cfg.model_config(len(vocab)))
    opt = make_optimizer(model, cfg)
    model.train()
    for step in range(3):
        torch.manual_seed(experiment.step_seed(cfg.seed, 0, step))
        x, y = random_batch(train_data, cfg.batch_size, cfg.seq_len)
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, cfg)
        loss = F.cross_entropy(model(x).reshape(-1, len(vocab)), y.reshape(-1))
        assert loss.item() == pytest.approx(result.losses[step], abs=1e-6)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
    for (name, a), b in zip(model.named_parameters(), result.model.parameters()):
        if name.endswith("attn.key.bias"):
            # Adding b_k to every key adds q . b_k to a whole row of scores, which the softmax
            # ignores, so its gradient is 0 up to rounding, and Adam turns that rounding noise
            # into full-size steps. It is not comparable between two runs.
            continue
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6, msg=name)


def test_validation_loss_is_in_eval_mode_and_restores_train_mode():
    """Mutations caught: no `model.eval()` in `evaluate` (dropout changes the loss between
    calls); no `model.train()` at its end; `reduction="mean"` per batch (a short last batch
    would weigh as much as a full one: checked with 5 windows in batches of 2).
    """
    torch.manual_seed(0)
    model = DecoderOnlyTransformer(ModelConfig(vocab_size=7, d_model=16, heads=2, layers=1, d_ff=32,
                                               max_len=8, dropout=0.5))
    windows = torch.randint(0, 7, (5, 9))
    a = experiment.evaluate(model, windows, 2, torch.device("cpu"))
    assert model.training
    model.eval()
    with torch.no_grad():
        logits = model(windows[:, :-1])
    expected = F.cross_entropy(logits.flatten(0, 1), windows[:, 1:].flatten()).item()
    assert a == pytest.approx(expected, abs=1e-5)
    assert math.isfinite(a)


# ---- numbers in the prose ----

def test_numbers_on_the_data_and_transformer_pages():
    """data.py: "more than a hundred thousand characters", "about a hundred" vocabulary entries;
    transformer.py: embeddings of variance 1, encoding features with a mean square of 1/2."""
    text = load_text()
    assert 100_000 < len(text) < 200_000
    assert 80 <= len(Vocabulary.from_text(text)) <= 120
    assert sinusoidal_encoding(64, 128).pow(2).mean().item() == pytest.approx(0.5, abs=1e-6)
    torch.manual_seed(0)
    assert nn.Embedding(100, 128).weight.var().item() == pytest.approx(1.0, abs=0.05)


def test_memory_for_backward_grows_with_seq_squared_on_the_explicit_path_only():
    """The claim of the "time and memory" section of mha.py, with `saved_for_backward`."""
    from annotated_attention.mha import saved_for_backward
    torch.manual_seed(0)
    mha = MultiHeadAttention(64, 4)
    saved = {}
    for seq in (256, 512):
        x = torch.randn(2, seq, 64, requires_grad=True)
        saved[seq] = [saved_for_backward(lambda: mha(x, causal=True, fused=f))[1] for f in (False, True)]
    explicit, fused = (saved[512][i] / saved[256][i] for i in range(2))
    assert 3.0 < explicit < 4.0  # 3.48: the n² weights, plus the linear rest
    assert 1.8 < fused < 2.2
    # The weights alone: batch × heads × seq × seq float32 numbers, kept once.
    assert saved[512][0] > 2 * 4 * 512 * 512 * 4


# ---- data and seeds ----

def test_vocabulary_order_windows_bits_and_step_seeds():
    """Mutations caught: an unsorted vocabulary (`"".join(set(text))`: the ids would depend on
    the process's string hashing, so ranks of a distributed run could disagree); overlapping
    validation windows; bits as nats times log 2; a `step_seed` that repeats, e.g.
    `seed + rank + step` (rank 1 at step 0 would draw rank 0's batch of step 1).
    """
    from annotated_attention.data import nats_to_bits, validation_windows
    assert Vocabulary.from_text("cabbage").chars == "abceg"
    assert validation_windows(torch.arange(10), 2).tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert nats_to_bits(math.log(2)) == pytest.approx(1.0)
    seeds = {experiment.step_seed(s, r, t) for s in range(3) for r in range(4) for t in range(500)}
    assert len(seeds) == 3 * 4 * 500
