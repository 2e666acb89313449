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
with `check`, and writes the measured numbers and the figures drawn from them to
`artifacts/learned/`; with `--update` it rewrites the committed `figures/learned.json` and figures
instead. The run is seeded: on one machine a second run gives the same bytes. Another CPU or
another version of PyTorch rounds some sums differently, and 600 steps turn that into a slightly
different run, so your numbers may differ from these in the second decimal; the tests train
again and compare the result with the committed numbers within such margins. These are CPU
figures: the run uses no GPU.

## The loss curve

![Training and validation loss of the small model](figures/learned_loss.svg)

The first loss is close to the logarithm of the vocabulary size, the loss of a uniform guess over
all characters. The loss then falls quickly below the [unigram entropy](data.html#unigram_entropy) (the upper dashed
line, the best a model can do without looking at the context) and then below the
[bigram model](data.html#bigram_loss) (the lower dashed line, the best one can do from the previous character alone,
measured on the same validation text): the model uses more of the context than one character,
which it can only reach through attention.

## Samples at several steps

![Text sampled at several steps of training](figures/learned_samples.svg)

Each sample is generated from the prompt `def ` with the same random seed. At step 0 the
model produces random characters. Soon it produces the common characters and the indentation of
Python, and later word-like groups separated by spaces. A model this small, trained this briefly,
writes no sensible code; the [experiment](experiment.html) trains a larger one for longer.

## Attention maps

We feed the trained model a line from the training text and draw the attention weights of every
head of every layer. Rows are the queries and columns the keys; the causal mask hides the upper
triangle, and every row sums to 1. The table gives four numbers for each head: the mean weight on
the previous character and on the character itself, how many characters back the head looks on
average, and the entropy of its weights. Its last row is a head that spreads its weight evenly
over the keys it may see, the baseline for all of them: it looks 7.75 characters back on our
32-character line.

![The heads of the trained model in numbers](figures/learned_heads.svg)

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

**The second layer** looks further back: on average more than twice as far as the first, and
more than half as far as the even spread, while every head of the first layer stays under half
of it (single heads of the second layer can fall below half from one training text to the
next). Much of that distance comes from spreading: on average the heads of the second
layer have a higher entropy than those of the first, and each a lower one than the even
spread's, so these heads prefer some keys without choosing one sharply. In both layers some
neighbouring queries in a row share one strongest key, but on a single 32-character line how
long these runs are, and which layer has the longest, changes from one training text to the
next, so they do not tell the layers apart; the distances and entropies do. The second layer's input already contains what the first layer gathered about
each position's neighbours, so one step of attention in the second layer can reach information
from several characters away.
"""

import hashlib
import json
import math
import tempfile
from dataclasses import asdict, replace
from pathlib import Path

import torch

from .data import Vocabulary, bigram_loss, load_text, split, unigram_entropy
from .experiment import TrainConfig, generate, train
from .figures import FIGURE_DIR, FONT, heatmap_svg
from .transformer import DecoderOnlyTransformer

# ## The run
#
# A model with half the width of the experiment's (`d_model` 64, 4 heads of 16, 2 layers) on
# sequences of 32 characters, 600 steps of 16 sequences. Dropout is off: it regularises a model
# that would otherwise fit its training text too closely, which a model this small does not do
# in 600 steps, so here it would only slow the training down. (The maps are taken in evaluation
# mode, where dropout does nothing, either way.)
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
    character; how far back a query looks on average, the **distance**
    $\frac{1}{n} \sum_i \sum_j p_{ij} (i - j)$ in characters; and how spread out its weights are,
    the mean **entropy** $-\frac{1}{n} \sum_i \sum_j p_{ij} \log p_{ij}$ in nats (0 for a head
    that puts all its weight on one key, $\log(i + 1)$ for query $i$ spreading it evenly).
    """
    n = len(weights)
    rows = range(1, n)
    return {"previous": sum(weights[i][i - 1] for i in rows) / (n - 1),
            "self": sum(weights[i][i] for i in rows) / (n - 1),
            "distance": sum(w * (i - j) for i in range(n) for j, w in enumerate(weights[i])) / n,
            "entropy": -sum(w * math.log(w) for row in weights for w in row if w > 0) / n}


def uniform_weights(n: int) -> list[list[float]]:
    r"""
    ## The baseline: a head that does not choose

    A head whose scores are all equal spreads each query's weight evenly over the keys the
    causal mask leaves it: $1/(i+1)$ on each of keys $0, ..., i$. Its distance is
    $\frac{1}{n} \sum_i \frac{i}{2} = \frac{n-1}{4}$, 7.75 characters on our 32-character line.
    A trained head's numbers mean something only next to these: a head that "looks far back"
    may just be one that looks everywhere.
    """
    return [[1 / (i + 1) if j <= i else 0.0 for j in range(n)] for i in range(n)]


def longest_shared_run(weights: list[list[float]]) -> int:
    """The most consecutive queries whose strongest key is one and the same key."""
    strongest = [max(range(len(row)), key=row.__getitem__) for row in weights]
    best = run = 1
    for a, b in zip(strongest, strongest[1:]):
        run = run + 1 if a == b else 1
        best = max(best, run)
    return best


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
    train_ids, val_ids = split(vocab.encode(text))
    return {"config": asdict(replace(cfg, checkpoint="")), "vocab_size": len(vocab),
            "unigram_entropy": unigram_entropy(vocab.encode(text), len(vocab)),
            "bigram_loss": bigram_loss(train_ids, val_ids, len(vocab)),
            "uniform": head_summary(uniform_weights(len(ATTENTION_TEXT))),
            "runs": [[longest_shared_run(h) for h in layer] for layer in maps],
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
    # The final validation loss is well below the unigram entropy, and below the bigram model's
    # loss on the same validation text: the model uses more than the previous character.
    final = data["val_losses"][str(SAMPLE_STEPS[-1])]
    assert final < data["unigram_entropy"] - 0.5
    assert data["bigram_loss"] < data["unigram_entropy"]
    assert final < data["bigram_loss"] - 0.3
    # A head of the first layer puts much of its weight on the previous character, more than any
    # head of the second layer does ...
    first, second = data["heads"][0], data["heads"][1]
    uniform = data["uniform"]
    assert max(h["previous"] for h in first) > 0.35
    assert max(h["previous"] for h in first) > 1.5 * max(h["previous"] for h in second)
    # ... every head of the first layer looks less than half as far back as a head that spreads
    # its weight evenly (7.75 characters), the second layer on average more than half as far,
    # and more than twice as far as the first ...
    assert abs(uniform["distance"] - (len(data["attention_text"]) - 1) / 4) < 1e-9
    assert all(h["distance"] < uniform["distance"] / 2 for h in first)
    mean_distance = [sum(h["distance"] for h in layer) / len(layer) for layer in (first, second)]
    assert mean_distance[1] > uniform["distance"] / 2
    assert mean_distance[1] > 2 * mean_distance[0]
    # ... and spreads its weight more: the second layer's mean entropy is above the first's (single
    # heads of the two layers can overlap from one training text to the next), and every head's
    # is still below the even spread's.
    mean_entropy = [sum(h["entropy"] for h in layer) / len(layer) for layer in (first, second)]
    assert mean_entropy[1] > mean_entropy[0]
    assert max(h["entropy"] for h in second) < uniform["entropy"]
    # In both layers some neighbouring queries share their strongest key (how long the runs are,
    # and which layer has the longest, is not stable from text to text, so the page claims no
    # order).
    assert all(max(runs) >= 2 for runs in data["runs"])
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

    One heat map per layer and head, with small cells and no numbers in them. Their labels do
    not change from run to run (the numbers are in [the table](#heads_svg)), so that their
    translations stay valid when the model is trained again.
    """
    chars = [shown(c) for c in data["attention_text"]]
    n = len(chars)
    blocked = [[j > i for j in range(n)] for i in range(n)]
    description = (f"Attention weights of the trained model for the line "
                   f"'{data['attention_text']}': one row per query, one column per key; the "
                   f"causal mask hides the keys after each query. The table of the heads gives "
                   f"each head's numbers.")
    figures = {}
    for layer, heads in enumerate(data["attention"]):
        for head, weights in enumerate(heads):
            figures[f"learned_l{layer + 1}h{head + 1}.svg"] = heatmap_svg(
                f"learned-l{layer + 1}h{head + 1}", weights, chars, chars,
                f"Layer {layer + 1}, head {head + 1}: attention weights of the trained model",
                description, masked=blocked, cell=16, numbers=False,
                caption=f"layer {layer + 1}, head {head + 1}")
    return figures


def heads_svg(data: dict) -> str:
    """
    ## The table of the heads

    Every head's numbers as a table, with the even spread's last, so that a reader sees them
    without hovering over anything. The cells hold only numbers, which need no translation.
    """
    columns = ["weight on previous", "weight on itself", "characters back", "entropy (nats)"]
    fields = ["previous", "self", "distance", "entropy"]
    rows = [(f"layer {layer + 1}, head {head + 1}", s)
            for layer, heads in enumerate(data["heads"]) for head, s in enumerate(heads)]
    rows.append(("even spread", data["uniform"]))
    first, col, line_h, top = 130, 150, 24, 40
    width, height = first + col * len(columns) + 12, top + line_h * len(rows) + 12
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-labelledby="heads-title heads-desc">',
           '<title id="heads-title">The heads of the trained model in numbers</title>',
           '<desc id="heads-desc">For each head of each layer, and for a head that spreads its '
           'weight evenly over the keys it may see: the mean weight on the previous character '
           'and on the character itself, how many characters back it looks on average, and the '
           'entropy of its weights.</desc>',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>']
    for c, name in enumerate(columns):
        x = first + col * c + col - 12
        out.append(f'<text x="{x}" y="{top - 12}" {FONT} font-size="13" font-weight="bold" '
                   f'text-anchor="end">{name}</text>')
    for r, (label, s) in enumerate(rows):
        y = top + line_h * r + 16
        if r % 2 == 0:
            out.append(f'<rect x="6" y="{y - 16}" width="{width - 12}" height="{line_h}" fill="#eef3f8"/>')
        out.append(f'<text x="12" y="{y}" {FONT} font-size="13">{label}</text>')
        for c, key in enumerate(fields):
            value = f"{s[key]:.1f}" if key == "distance" else f"{s[key]:.2f}"
            out.append(f'<text x="{first + col * c + col - 12}" y="{y}" {FONT} font-size="13" '
                       f'text-anchor="end">{value}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


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
           f'<desc id="loss-desc">Cross-entropy in nats per character over {steps} steps: the '
           f'training loss of each step and its mean over 10 steps, the validation loss every '
           f'100 steps, and two baselines measured on the same text: the unigram entropy and '
           f'the bigram model. The numbers are printed next to the lines.</desc>',
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
    # The two baselines, dashed, each with its name and (in a `<tspan>` of its own, since a
    # number needs no translation) its value
    for value, name, ink, dy in ((h, "unigram entropy", "#b35806", -6), (data["bigram_loss"], "bigram model", "#542788", 14)):
        (x0, y0), (x1, _) = xy(0, value).split(","), xy(steps, value).split(",")
        out.append(f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="{ink}" '
                   f'stroke-dasharray="6 4"/>')
        out.append(f'<text x="{x1}" y="{float(y0) + dy:.1f}" {FONT} font-size="12" text-anchor="end" '
                   f'fill="{ink}">{name}<tspan> {value:.2f}</tspan></text>')
    out.append(f'<polyline points="{" ".join(xy(i + 1, l) for i, l in enumerate(losses))}" '
               f'fill="none" stroke="#9ecae1" stroke-width="1"/>')
    out.append(f'<polyline points="{" ".join(xy(i + 1, l) for i, l in enumerate(smooth))}" '
               f'fill="none" stroke="#08306b" stroke-width="2"/>')
    for step, loss in data["val_losses"].items():
        x, y = xy(int(step), loss).split(",")
        out.append(f'<circle cx="{x}" cy="{y}" r="4" fill="#b35806"/>')
    x, y = xy(steps, data["val_losses"][str(steps)]).split(",")
    out.append(f'<text x="{float(x) - 8:.1f}" y="{float(y) - 8:.1f}" {FONT} font-size="12" '
               f'text-anchor="end" fill="#b35806">{data["val_losses"][str(steps)]:.2f}</text>')
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
                       f'xml:space="preserve" translate="no">{escape(line[:76])}</text>')
            y += line_h
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render(data: dict) -> dict[str, str]:
    """All the figures of this page, from the numbers of a run: file name → SVG text."""
    return {"learned_loss.svg": loss_svg(data), "learned_samples.svg": samples_svg(data),
            "learned_heads.svg": heads_svg(data), **attention_svgs(data)}


def load_data(path: Path = DATA_FILE) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> None:
    """Train, check, save the numbers and draw the figures: into `--out` (the committed files
    stay as they are), or over the committed ones with `--update`."""
    import argparse
    from .figures import write_all
    parser = argparse.ArgumentParser(prog="python -m annotated_attention.learned", description=main.__doc__)
    parser.add_argument("--out", default="artifacts/learned", help="folder for the numbers and figures (default: %(default)s)")
    parser.add_argument("--update", action="store_true", help="rewrite the committed figures/learned.json and figures")
    args = parser.parse_args(argv)
    data = run()
    for layer, heads in enumerate(data["heads"]):
        for head, s in enumerate(heads):
            print(f"layer {layer + 1} head {head + 1}: " +
                  ", ".join(f"{k} {v:.2f}" for k, v in s.items()))
    print(f"final validation loss {data['val_losses'][str(SAMPLE_STEPS[-1])]:.3f}, "
          f"bigram model {data['bigram_loss']:.3f}, unigram entropy {data['unigram_entropy']:.3f}")
    check(data)
    directory = FIGURE_DIR if args.update else Path(args.out)
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / DATA_FILE.name, "w", encoding="utf-8", newline="\n") as f:
        f.write(dumps(data))
    for path in write_all(directory, data):
        print(f"wrote {path}")


def dumps(data: dict) -> str:
    """The numbers as the committed file holds them (sorted keys: the same bytes every run)."""
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


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
#
# <details><summary>Expected answers</summary>
#
# 1. The maps are taken in evaluation mode, where dropout does nothing, so they change only
#    through what training learned; `check` says which statements still hold.
# 2. No. Without the encoding, a first-layer score depends only on the two characters, so the
#    previous character gets the same weight as every earlier copy of the same character: a
#    first-layer head cannot single it out.
# 3. The tests of [attention](mha.html) fail first, among them
#    `test_causal_model_cannot_see_the_future`: with the softmax over the queries, a column's sum
#    runs over later positions, so the model can read the future.
#    `tests/test_tutorial_learned.py` retrains the model, which is slow; run the fast tests
#    first.
#
# </details>
