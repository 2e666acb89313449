r"""
---
title: What the Model Learned
summary: Attention maps of a trained model, layer by layer and head by head, its loss curve, and text sampled at several steps, all produced by running the tutorial's code.
---

# What the Model Learned

The other pages show what attention *computes*. This page shows what a small model *learns* to
do with it. We train a model like the one of the [experiment](experiment.html), only smaller,
on the same text (this package's source), save a few snapshots of it, and look inside.

Everything below comes from running `python -m annotated_attention.learned`: it trains the
model (600 steps, about 13 seconds of CPU time on one thread), checks the statements of this page
with `check`, writes the measured numbers to `figures/learned.json` and redraws the figures from
that file. The run is seeded, and the tests train it again and compare the result with the
committed numbers.

## The loss curve

![Training and validation loss of the small model](figures/learned_loss.svg)

The first loss is close to the logarithm of the vocabulary size, the loss of a uniform guess over
all characters. The loss then falls quickly below the [unigram entropy](data.html#unigram_entropy) (the dashed
line, the best a model can do without looking at the context) and keeps falling: the model uses
the context, which it can only reach through attention.

## Samples at several steps

![Text sampled at several steps of training](figures/learned_samples.svg)

Each sample is generated from the prompt `def ` with the same random seed. At step 0 the
model produces random characters. Soon it produces the common characters and the indentation of
Python, and later word-like groups separated by spaces. A model this small, trained this briefly,
writes no sensible code; the [experiment](experiment.html) trains a larger one for longer.

## Attention maps

We feed the trained model a line from the training text and draw the attention weights of every
head of every layer. Rows are the queries and columns the keys; the causal mask hides the upper
triangle, and every row sums to 1. The title of each map (shown when you hover over it) gives
three numbers for the head: the mean weight on the previous character, on the character itself,
and how many characters back the head looks on average.

![Layer 1, head 1](figures/learned_l1h1.svg)
![Layer 1, head 2](figures/learned_l1h2.svg)
![Layer 1, head 3](figures/learned_l1h3.svg)
![Layer 1, head 4](figures/learned_l1h4.svg)

**The first layer** looks close by. Its heads put most of their weight within a few characters
of the query, and at least one head shows a clear line just below the diagonal: it attends to
the **previous character**. This is the simplest use of context for predicting the next character
(after `s`, `e` is likely; after `se`, `l` is), and a position-dependent pattern like this is what
the [positional encoding](positional_encoding.html) makes easy to learn.

![Layer 2, head 1](figures/learned_l2h1.svg)
![Layer 2, head 2](figures/learned_l2h2.svg)
![Layer 2, head 3](figures/learned_l2h3.svg)
![Layer 2, head 4](figures/learned_l2h4.svg)

**The second layer** looks further back (on average more than twice as far as the first) and its
patterns depend more on the content: whole groups of neighbouring queries often attend to the
same key, a character that matters for all of them. Its input already contains what the
first layer gathered about each position's neighbours, so one step of attention in the second
layer can reach information from several characters away.
"""

import hashlib
import json
import math
import tempfile
from dataclasses import asdict, replace
from pathlib import Path

import torch

from .data import Vocabulary, load_text, unigram_entropy
from .experiment import TrainConfig, generate, train
from .figures import FIGURE_DIR, FONT, heatmap_svg
from .transformer import DecoderOnlyTransformer

# ## The run
#
# A model with half the width of the experiment's (`d_model` 64, 4 heads of 16, 2 layers) on
# sequences of 32 characters, 600 steps of 16 sequences. Dropout is off, so that the snapshots
# reflect what the weights compute and not a random pattern.
CONFIG = TrainConfig(steps=600, batch_size=16, seq_len=32, lr=1e-2, warmup=30, eval_every=100,
                     d_model=64, heads=4, layers=2, d_ff=256, dropout=0.0, device="cpu", threads=1,
                     sample_len=0)
# The steps at which we generate a sample (the last is the end of training)
SAMPLE_STEPS = (0, 100, 200, 400, 600)
SAMPLE_PROMPT = "def "
SAMPLE_LEN = 60
# The line whose attention we draw (32 characters, the model's longest input); it occurs in
# `transformer.py`
ATTENTION_TEXT = "x = x + self.dropout(self.ff(h))"
DATA_FILE = FIGURE_DIR / "learned.json"


def attention_maps(model: DecoderOnlyTransformer, vocab: Vocabulary, text: str) -> list[list]:
    """
    ## Reading the weights out

    The experiment trains with the fused kernel, which never forms the weights. For the figures
    we switch every layer to the explicit path, which computes the same outputs and keeps the
    weights of its last call.

    :return: `[layers][heads][seq][seq]` attention weights for `text`
    """
    model.eval()
    fused = [layer.attn.fused for layer in model.layers]
    for layer in model.layers:
        layer.attn.fused = False
    with torch.no_grad():
        model(vocab.encode(text)[None, :])
    for layer, f in zip(model.layers, fused):
        layer.attn.fused = f
    # `attn` is `[batch=1, heads, seq, seq]`; four decimals are plenty for a figure
    return [layer.attn.attn[0].double().round(decimals=4).tolist() for layer in model.layers]


def head_summary(weights: list[list[float]]) -> dict[str, float]:
    r"""
    ## What a head does, in numbers

    For one head's `[seq, seq]` weights: the mean weight that a query puts on the **previous**
    character ($j = i - 1$) and on **itself** ($j = i$), over the queries that have a previous
    character, and how far back a query looks on average, the **distance**
    $\frac{1}{n} \sum_i \sum_j p_{ij} (i - j)$ in characters.
    """
    n = len(weights)
    rows = range(1, n)
    return {"previous": sum(weights[i][i - 1] for i in rows) / (n - 1),
            "self": sum(weights[i][i] for i in rows) / (n - 1),
            "distance": sum(w * (i - j) for i in range(n) for j, w in enumerate(weights[i])) / n}


def run(cfg: TrainConfig = CONFIG) -> dict:
    """
    ## Training, with snapshots

    We train in stages that end at the sample steps: each stage resumes from the checkpoint of
    the last one. Resuming continues exactly as if the run had never stopped (the
    [experiment's tests](experiment.html) check this), so the stages add up to one
    uninterrupted run.

    :return: the numbers behind every figure of this page
    """
    text = load_text()
    vocab = Vocabulary.from_text(text)
    losses, val_losses, samples = [], {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        cfg = replace(cfg, checkpoint=str(Path(tmp) / "learned.pt"))
        result = None
        for i, step in enumerate(SAMPLE_STEPS):
            result = train(replace(cfg, resume=i > 0), stop_at=step)
            losses += [round(loss, 5) for loss in result.losses]
            val_losses.update(result.val_losses)
            samples[step] = generate(result.model, result.vocabulary, SAMPLE_PROMPT, SAMPLE_LEN,
                                     torch.device("cpu"), seed=cfg.seed)
    val_losses[result.step] = result.final_val_loss
    maps = attention_maps(result.model, vocab, ATTENTION_TEXT)
    return {"config": asdict(replace(cfg, checkpoint="")), "vocab_size": len(vocab),
            "unigram_entropy": unigram_entropy(vocab.encode(text), len(vocab)),
            "losses": losses, "val_losses": {str(k): v for k, v in sorted(val_losses.items())},
            "samples": {str(k): v for k, v in samples.items()},
            "attention_text": ATTENTION_TEXT, "attention": maps,
            "heads": [[head_summary(h) for h in layer] for layer in maps],
            "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def check(data: dict) -> None:
    """
    ## What the page claims, asserted

    The text of this page describes the run only through these checks, so it cannot claim
    something that the numbers do not show.
    """
    losses = data["losses"]
    # The first loss is close to a uniform guess, $\log(\text{vocabulary size})$.
    assert abs(losses[0] - math.log(data["vocab_size"])) < 0.3
    # The final validation loss is well below the unigram entropy.
    final = data["val_losses"][str(SAMPLE_STEPS[-1])]
    assert final < data["unigram_entropy"] - 0.5
    # A head of the first layer puts much of its weight on the previous character, more than any
    # head of the second layer does ...
    first, second = data["heads"][0], data["heads"][1]
    assert max(h["previous"] for h in first) > 0.35
    assert max(h["previous"] for h in first) > 1.5 * max(h["previous"] for h in second)
    # ... and the heads of the second layer look, on average, more than twice as far back.
    mean_distance = [sum(h["distance"] for h in layer) / len(layer) for layer in (first, second)]
    assert mean_distance[1] > 2 * mean_distance[0]
    # Every row of every map is a distribution over the keys at or before the query.
    for layer in data["attention"]:
        for head in layer:
            for i, row in enumerate(head):
                # (each weight is rounded to 4 decimals: 32 of them may be off by 0.0016 in all)
                assert abs(sum(row) - 1) < 2e-3 and all(w == 0 for w in row[i + 1:])


def shown(c: str) -> str:
    """Characters as labels: a space would be invisible, so it is drawn as `␣`."""
    return "␣" if c == " " else c


def attention_svgs(data: dict) -> dict[str, str]:
    """
    ## The attention figures

    One heat map per layer and head, with small cells and no numbers in them; the title of each
    figure gives the head's summary numbers.
    """
    chars = [shown(c) for c in data["attention_text"]]
    n = len(chars)
    blocked = [[j > i for j in range(n)] for i in range(n)]
    figures = {}
    for layer, heads in enumerate(data["attention"]):
        for head, weights in enumerate(heads):
            s = data["heads"][layer][head]
            title = (f"Layer {layer + 1}, head {head + 1}: weight on the previous character "
                     f"{s['previous']:.2f}, on itself {s['self']:.2f}; it looks "
                     f"{s['distance']:.1f} characters back on average")
            figures[f"learned_l{layer + 1}h{head + 1}.svg"] = heatmap_svg(
                f"learned-l{layer + 1}h{head + 1}", weights, chars, chars, title,
                f"Attention weights of the trained model for the line "
                f"'{data['attention_text']}'. {title}.", masked=blocked, cell=16, numbers=False,
                caption=f"layer {layer + 1}, head {head + 1}")
    return figures


def loss_svg(data: dict) -> str:
    """
    ## The loss curve

    The training loss of every step (light), its running mean over 10 steps (dark), the
    validation losses (dots) and the unigram entropy (dashed), on a linear scale.
    """
    losses, steps = data["losses"], len(data["losses"])
    width, height, left, top, bottom = 560, 300, 56, 36, 44
    plot_w, plot_h = width - left - 16, height - top - bottom
    hi = math.ceil(max(losses))
    lo = math.floor(min(min(losses), min(data["val_losses"].values())))

    def xy(step: float, loss: float) -> str:
        x = left + plot_w * step / steps
        y = top + plot_h * (hi - loss) / (hi - lo)
        return f"{x:.1f},{y:.1f}"

    smooth = [sum(losses[max(0, i - 9):i + 1]) / len(losses[max(0, i - 9):i + 1])
              for i in range(steps)]
    h = data["unigram_entropy"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-labelledby="loss-title loss-desc">',
           '<title id="loss-title">Training and validation loss of the small model</title>',
           f'<desc id="loss-desc">Cross-entropy in nats per character over {steps} steps. The '
           f'first step has loss {losses[0]:.2f}; the final validation loss is '
           f'{data["val_losses"][str(steps)]:.2f}, against a unigram entropy of {h:.2f}.</desc>',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>']
    for loss in range(lo, hi + 1):
        y = xy(0, loss).split(",")[1]
        out.append(f'<line x1="{left}" y1="{y}" x2="{left + plot_w}" y2="{y}" stroke="#e0e0e0"/>')
        out.append(f'<text x="{left - 8}" y="{float(y) + 4:.1f}" {FONT} font-size="12" '
                   f'text-anchor="end">{loss}</text>')
    for step in range(0, steps + 1, 100):
        x = xy(step, lo).split(",")[0]
        out.append(f'<text x="{x}" y="{top + plot_h + 18}" {FONT} font-size="12" '
                   f'text-anchor="middle">{step}</text>')
    out.append(f'<text x="{left + plot_w // 2}" y="{height - 6}" {FONT} font-size="13" '
               f'text-anchor="middle">step</text>')
    out.append(f'<text x="14" y="{top + plot_h // 2}" {FONT} font-size="13" text-anchor="middle" '
               f'transform="rotate(-90 14 {top + plot_h // 2})">loss (nats/char)</text>')
    (x0, y0), (x1, _) = xy(0, h).split(","), xy(steps, h).split(",")
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#b35806" '
               f'stroke-dasharray="6 4"/>')
    out.append(f'<text x="{x1}" y="{float(y0) - 6:.1f}" {FONT} font-size="12" text-anchor="end" '
               f'fill="#b35806">unigram entropy {h:.2f}</text>')
    out.append(f'<polyline points="{" ".join(xy(i + 1, l) for i, l in enumerate(losses))}" '
               f'fill="none" stroke="#9ecae1" stroke-width="1"/>')
    out.append(f'<polyline points="{" ".join(xy(i + 1, l) for i, l in enumerate(smooth))}" '
               f'fill="none" stroke="#08306b" stroke-width="2"/>')
    for step, loss in data["val_losses"].items():
        x, y = xy(int(step), loss).split(",")
        out.append(f'<circle cx="{x}" cy="{y}" r="4" fill="#b35806"/>')
    out.append(f'<text x="{left + plot_w}" y="{top - 12}" {FONT} font-size="12" '
               f'text-anchor="end">training loss (mean of 10 steps), validation loss (dots)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def samples_svg(data: dict) -> str:
    """
    ## The samples

    One block per step, up to three lines each, in a monospace font. Spaces are kept
    (`xml:space="preserve"`), so that indentation shows.
    """
    from xml.sax.saxutils import escape
    blocks = [(step, text.split("\n")[:3]) for step, text in data["samples"].items()]
    line_h, width = 18, 640
    height = 20 + sum(22 + line_h * len(lines) for _, lines in blocks)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-labelledby="samples-title">',
           '<title id="samples-title">Text sampled at several steps of training</title>',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>']
    y = 20
    for step, lines in blocks:
        out.append(f'<text x="12" y="{y + 4}" {FONT} font-size="13" font-weight="bold">'
                   f'step {step}</text>')
        y += 22
        for line in lines:
            out.append(f'<text x="24" y="{y}" font-family="monospace" font-size="13" '
                       f'xml:space="preserve">{escape(line[:76])}</text>')
            y += line_h
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render(data: dict) -> dict[str, str]:
    """All the figures of this page, from the numbers of a run: file name → SVG text."""
    return {"learned_loss.svg": loss_svg(data), "learned_samples.svg": samples_svg(data),
            **attention_svgs(data)}


def load_data(path: Path = DATA_FILE) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def main() -> None:
    """Train, check, save the numbers, and rewrite every figure (this page's and the others)."""
    from .figures import write_all
    data = run()
    for layer, heads in enumerate(data["heads"]):
        for head, s in enumerate(heads):
            print(f"layer {layer + 1} head {head + 1}: " +
                  ", ".join(f"{k} {v:.2f}" for k, v in s.items()))
    print(f"final validation loss {data['val_losses'][str(SAMPLE_STEPS[-1])]:.3f}, "
          f"unigram entropy {data['unigram_entropy']:.3f}")
    check(data)
    DATA_FILE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for path in write_all():
        print(f"wrote {path}")


if __name__ == "__main__":
    main()

# ## Exercises
#
# 1. Set `dropout=0.1` in `CONFIG`, run `python -m annotated_attention.learned` and compare the
#    maps: which statements of `check` still hold?
# 2. Remove the positional encoding (`x = self.embed(tokens)` in
#    [the model](transformer.html)). Does the previous-character head survive? The causal mask
#    still tells a query how many keys it can see, but nothing else about their order.
# 3. Break the code on purpose, for example take the softmax of [`attention`](mha.html#attention) over
#    `dim=-2`, and run `python -m pytest tests/test_tutorial_learned.py`: which check fails?
