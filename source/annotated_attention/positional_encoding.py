r"""
---
title: Sinusoidal Positional Encoding
summary: Why attention needs position information, and the fixed sine and cosine encoding from the original transformer, in PyTorch.
---

# Sinusoidal Positional Encoding

Attention without a mask does not know the order of the tokens. If you shuffle the keys and
the values in the same way, every query gets exactly the same result, because a weighted sum does
not care about the order of its terms. A causal mask does reveal some order: query $i$ sees
exactly $i + 1$ keys, so a model could in principle work out positions by counting. That is an
indirect and weak signal, though, and a language model needs the order all the time, so we add
a vector that depends on the position to each token embedding before the first layer.

The original transformer uses fixed sines and cosines of different frequencies. For position
$p$ and feature pair $i = 0, 1, ..., d_{model}/2 - 1$:

$$PE_{p, 2i} = \sin\Big(\frac{p}{10000^{2i / d_{model}}}\Big)$$

$$PE_{p, 2i+1} = \cos\Big(\frac{p}{10000^{2i / d_{model}}}\Big)$$

The wavelengths grow geometrically from $2\pi$ (feature pair 0) to almost $10000 \cdot 2\pi$
(the last pair), so the first features tell apart nearby positions and the last ones tell apart
distant ones. Because $\sin(a + b)$ and $\cos(a + b)$ are linear combinations of $\sin a$ and
$\cos a$, the encoding of position $p + t$ is a fixed linear function (a rotation in each feature
pair) of the encoding of position $p$. The paper's authors chose the encoding for this
reason: they *hoped* it would let the model easily learn to attend by relative position, to "the
token $t$ places back". It is a hope, not a guarantee. The rotation acts on the encoding alone,
but a head sees the encoding added to the token embedding and passed through its learned
projections $W^Q$ and $W^K$, and nothing forces it to use the rotation. The paper itself reports
that learned position embeddings gave nearly the same results.

![The sinusoidal positional encoding as a heat map of positions and features, and three of its features as curves](figures/positional_encoding.svg)

*The encoding of positions 0 to 63 for $d_{model} = 32$, drawn by [`encoding_svg`](#encoding_svg)
below. Each column is one position's vector. The first features change from one position to the
next, the last ones hardly change over 64 positions: together they give every position a
different pattern.*
"""

import math

import torch
from torch import nn

from .figures import FONT


def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
    r"""
    ## The encoding table

    :param max_len: the number of positions
    :param d_model: the number of features; must be even, since features come in sine/cosine pairs
    :return: `[max_len, d_model]`; row $p$ is the encoding of position $p$
    """
    if d_model % 2 != 0:
        raise ValueError(f"d_model must be even for sinusoidal encodings, got {d_model}")
    # Positions $p$ as a column: `[max_len, 1]`
    position = torch.arange(max_len, dtype=torch.float32)[:, None]
    # The frequencies $1 / 10000^{2i/d_{model}}$, one per feature pair: `[d_model / 2]`.
    # We compute them as $\exp(-\frac{2i}{d_{model}} \log 10000)$, which is the same number.
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)
    frequency = torch.exp(-two_i / d_model * math.log(10000.0))
    # The angles $p / 10000^{2i/d_{model}}$ for every position and pair; broadcasting
    # `[max_len, 1]` times `[d_model / 2]` gives `[max_len, d_model / 2]`.
    angle = position * frequency
    pe = torch.zeros(max_len, d_model)
    # Even features get the sines and odd features the cosines.
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe


class PositionalEncoding(nn.Module):
    """
    ## Adding the encoding to the embeddings

    :param d_model: the number of features
    :param max_len: the longest sequence the model will see
    :param dropout: dropout applied to the sum, as in the original paper
    """

    def __init__(self, d_model: int, max_len: int, dropout: float = 0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        # A buffer moves with the module between devices but is not a parameter, so the
        # optimizer leaves it alone. `persistent=False` keeps it out of checkpoints: it can be
        # recomputed at any time.
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        :param x: token embeddings, `[batch, seq, d_model]`
        :return: `[batch, seq, d_model]`
        """
        seq = x.shape[1]
        if seq > self.pe.shape[0]:
            raise ValueError(f"sequence length {seq} is longer than max_len={self.pe.shape[0]}: "
                             f"create the model with a larger max_len")
        # `pe[:seq]` is `[seq, d_model]` and broadcasts over the batch axis. Dropout comes
        # after the sum, so that it acts on what the first layer receives.
        return self.dropout(x + self.pe[:seq].to(x.dtype))


def embedding_and_encoding_sizes(d_model: int = 64, vocab_size: int = 98, max_len: int = 64) -> dict[str, float]:
    r"""
    ## How large the two terms of the sum are

    The paper multiplies the token embeddings by $\sqrt{d_{model}}$ before adding the encoding,
    and gives no reason. The usual reading is about the size of the two terms: neither should
    drown the other, or the first layer sees mostly the token or mostly the position. The
    encoding of every position has a mean square of exactly 1/2 over its features (each
    sine/cosine pair has a squared norm of 1), whatever $d_{model}$ is. The paper shares one
    weight matrix between its embedding layers and the output layer before the softmax. Such a
    matrix starts small: initialised as PyTorch initialises an output layer
    `nn.Linear(d_model, vocab_size)`, uniform in $\pm 1/\sqrt{d_{model}}$, its entries have a
    mean square of $1/(3 d_{model})$, about 0.005 for $d_{model} = 64$, and the position would
    drown the token. Times $\sqrt{d_{model}}$ they have a mean square of 1/3, the order of the
    encoding's 1/2.

    Our model does not tie the weights: `nn.Embedding` starts with entries of variance 1, the
    same order as the encoding, so [the model](transformer.html) adds the two without a factor.
    This function measures the four numbers; the tests assert them.

    :return: the mean square of the encoding, of a fresh `nn.Embedding`, of an output layer's
        weight used as a tied embedding, and of that weight times $\sqrt{d_{model}}$
    """
    # A fixed seed in a forked random state, so that calling this leaves the caller's
    # random numbers as they were.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        embedding = nn.Embedding(vocab_size, d_model).weight.detach()
        tied = nn.Linear(d_model, vocab_size).weight.detach()
    return {"encoding": sinusoidal_encoding(max_len, d_model).pow(2).mean().item(),
            "embedding": embedding.pow(2).mean().item(),
            "tied": tied.pow(2).mean().item(),
            "tied_scaled": (tied * math.sqrt(d_model)).pow(2).mean().item()}


# ## Drawing the encoding
#
# The figure at the top of the page is drawn from `sinusoidal_encoding` itself, as plain SVG
# text like [the other figures](figures.html); the tests draw it again and compare it byte for
# byte with the committed file. Values go from blue ($-1$) through white (0) to red ($+1$).
NEGATIVE = (33, 102, 172)
ZERO = (247, 247, 247)
POSITIVE = (178, 24, 43)
# Three features drawn as curves below the map: the sines of pairs 0, 2 and 5, whose
# wavelengths are $2\pi$, about 20 and about 112 positions.
CURVES = ((0, "#b2182b"), (4, "#2166ac"), (10, "#1b7837"))
# The minus sign of the labels (U+2212, not the hyphen), written as an escape so that this
# page's text, which is also the training text, needs no character of its own for it
MINUS = "\u2212"


def diverging_colour(value: float) -> str:
    """$-1$ → `NEGATIVE`, 0 → `ZERO`, $+1$ → `POSITIVE`, linearly in between, as `#rrggbb`."""
    t = min(1.0, max(-1.0, value))
    end = POSITIVE if t > 0 else NEGATIVE
    r, g, b = (round(z + (e - z) * abs(t)) for z, e in zip(ZERO, end))
    return f"#{r:02x}{g:02x}{b:02x}"


def encoding_svg(max_len: int = 64, d_model: int = 32) -> str:
    """
    ## The encoding as a heat map and as curves

    Positions run from left to right and features from top to bottom, so each column is the
    vector added to one token. Below the map, the same positions show three features as curves.

    :return: the SVG document
    """
    pe = sinusoidal_encoding(max_len, d_model)
    cell_w, cell_h = 8, 6
    left, top = 64, 44
    map_w, map_h = max_len * cell_w, d_model * cell_h
    # The curves' plot, below the map and aligned with it
    plot_top, plot_h = top + map_h + 40, 120
    width, height = left + map_w + 24, plot_top + plot_h + 64
    title = "Sinusoidal positional encoding"
    description = (f"Top: a heat map of the encoding of positions 0 to {max_len - 1} (columns) "
                   f"for {d_model} features (rows), blue for -1, white for 0, red for +1. The "
                   f"first features alternate quickly from one position to the next; the last "
                   f"features hardly change. Bottom: features 0, 4 and 10, the sines of feature "
                   f"pairs 0, 2 and 5, as curves over the same positions.")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-labelledby="pe-title pe-desc">',
           f'<title id="pe-title">{title}</title>',
           f'<desc id="pe-desc">{description}</desc>',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="{left}" y="24" {FONT} font-size="15" font-weight="bold">{title}</text>']
    # The cells, one rectangle per position and feature, in 41 shades (steps of 0.05, more
    # than the eye tells apart). Neighbouring cells of one row with the same shade are drawn as
    # one rectangle, which keeps the file small where the last features hardly change.
    for f in range(d_model):
        colours = [diverging_colour(round(v * 20) / 20) for v in pe[:, f].tolist()]
        start = 0
        for p in range(1, max_len + 1):
            if p == max_len or colours[p] != colours[start]:
                out.append(f'<rect x="{left + start * cell_w}" y="{top + f * cell_h}" '
                           f'width="{(p - start) * cell_w}" height="{cell_h}" fill="{colours[start]}"/>')
                start = p
    # The feature numbers every 8 rows, and the axis name
    for f in range(0, d_model, 8):
        out.append(f'<text x="{left - 6}" y="{top + f * cell_h + cell_h}" {FONT} font-size="11" '
                   f'text-anchor="end">{f}</text>')
    out.append(f'<text x="16" y="{top + map_h // 2}" {FONT} font-size="13" text-anchor="middle" '
               f'transform="rotate(-90 16 {top + map_h // 2})">feature</text>')
    # The colour scale, to the right of the title
    for k, v in enumerate((-1.0, -0.5, 0.0, 0.5, 1.0)):
        x = left + map_w - 5 * 20 + k * 20
        out.append(f'<rect x="{x}" y="12" width="20" height="12" fill="{diverging_colour(v)}" stroke="#808080"/>')
    out.append(f'<text x="{left + map_w - 104}" y="22" {FONT} font-size="11" text-anchor="end">{MINUS}1</text>')
    out.append(f'<text x="{left + map_w + 4}" y="22" {FONT} font-size="11">+1</text>')

    # The curves: each feature's value at the integer positions, joined by straight lines
    def xy(p: int, v: float) -> str:
        return f"{left + p * cell_w + cell_w / 2:.1f},{plot_top + plot_h / 2 * (1 - v):.1f}"

    for v in (-1, 0, 1):
        y = plot_top + plot_h / 2 * (1 - v)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + map_w}" y2="{y:.1f}" stroke="#d9d9d9"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" {FONT} font-size="11" text-anchor="end">{(MINUS + "1", "0", "+1")[v + 1]}</text>')
    for k, (f, ink) in enumerate(CURVES):
        points = " ".join(xy(p, v) for p, v in enumerate(pe[:, f].tolist()))
        out.append(f'<polyline points="{points}" fill="none" stroke="{ink}" stroke-width="1.5"/>')
        # The legend: "feature" as a key to translate, the number in a `<tspan>` of its own
        out.append(f'<text x="{left + k * 120}" y="{plot_top - 12}" {FONT} font-size="12" '
                   f'fill="{ink}">feature<tspan fill="{ink}"> {f}</tspan></text>')
    # The position axis, shared by the map and the curves
    for p in range(0, max_len, 8):
        out.append(f'<text x="{xy(p, 0).split(",")[0]}" y="{plot_top + plot_h + 18}" {FONT} '
                   f'font-size="11" text-anchor="middle">{p}</text>')
    out.append(f'<text x="{left + map_w // 2}" y="{height - 12}" {FONT} font-size="13" '
               f'text-anchor="middle">position</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def page_figures() -> dict[str, str]:
    """This page's figures, file name → SVG text, for [`render_all`](figures.html#render_all)."""
    return {"positional_encoding.svg": encoding_svg()}


# ## Exercises
#
# Break the encoding and run `python -m pytest tests/test_attention.py
# tests/test_tutorial_subtle_bugs.py` to see which test catches it:
#
# 1. Put the cosines in the even features and the sines in the odd ones.
# 2. Apply dropout to the embeddings before adding the encoding.
# 3. Use `torch.arange(0, d_model)` instead of `torch.arange(0, d_model, 2)` for $2i$.
#
# <details><summary>Expected answers</summary>
#
# 1. `test_positional_encoding_matches_formula` fails: position 0 is then $(1, 0, 1, 0, ...)$
#    instead of $(0, 1, 0, 1, ...)$.
# 2. `test_positional_encoding_dropout_comes_after_adding_the_encoding` fails: the encoding would
#    reach the layers undropped.
# 3. The angles get `d_model` columns instead of `d_model / 2`, so writing them into the even
#    features raises a `RuntimeError` about mismatched sizes, and every test that builds an
#    encoding fails.
#
# </details>
