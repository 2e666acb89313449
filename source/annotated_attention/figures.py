r"""
---
title: Drawing the Attention Figures
summary: How the attention heat maps on these pages are computed with the tutorial's own code and written as plain SVG.
---

# Drawing the Attention Figures

The heat maps on these pages are not drawn by hand: this module computes them with the code of
the tutorial and writes them as SVG files. Run `python -m annotated_attention.figures` to draw
them into `artifacts/figures/`, or with `--update` to rewrite the committed `figures/*.svg`. The
tests draw the figures again and compare them byte for byte with the files in the repository, so
a change to the attention code that changes a figure cannot go unnoticed.

We write the SVG text ourselves instead of using a plotting library. A heat map is only
rectangles and text, and writing it directly keeps the output small, byte-for-byte reproducible,
and free of external fonts or links.

Rows are queries and columns are keys, as in the score matrix $QK^\top$: the cell in row $i$ and
column $j$ is the weight that query $i$ gives to key $j$, so every row sums to 1.
"""

from importlib.resources import files
from pathlib import Path
from xml.sax.saxutils import escape

import torch

from .mha import attention, causal_mask, padding_mask
from .scores_and_softmax import TOKENS, two_token_example

# Found through the import system, not the module's file name: a downloaded notebook has none.
FIGURE_DIR = Path(str(files(__package__ or "annotated_attention"))) / "figures"

# ## Layout and colours
#
# Sizes are in SVG user units (pixels at 100% zoom). Colours go from near-white for weight 0
# to dark blue for weight 1; masked cells are grey, so that "masked" and "small weight" look
# different.
CELL = 56
LABEL_CHAR = 8
LOW = (247, 251, 255)
HIGH = (8, 48, 107)
MASKED = "#d9d9d9"
FONT = 'font-family="sans-serif"'


def colour(weight: float) -> str:
    """Linear interpolation between `LOW` and `HIGH`, as a `#rrggbb` string."""
    t = min(1.0, max(0.0, weight))
    r, g, b = (round(lo + (hi - lo) * t) for lo, hi in zip(LOW, HIGH))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap_svg(name: str, weights: list[list[float]], queries: list[str], keys: list[str],
                title: str, description: str, masked: list[list[bool]] | None = None,
                cell: int = CELL, numbers: bool = True, caption: str = "") -> str:
    """
    ## A heat map as SVG text

    :param name: a short identifier, used for the ids of the `<title>` and `<desc>` elements
    :param weights: `[len(queries)][len(keys)]` attention weights
    :param queries: the labels of the rows; `keys`: the labels of the columns
    :param title: the accessible title (screen readers announce it, browsers show it on hover)
    :param description: a longer text description of what the figure shows
    :param masked: `True` where the mask blocks the pair; drawn grey, without a number
    :param cell: the size of a cell; `numbers`: print the weight in each cell (for large cells)
    :param caption: a short visible label in the top left corner, if given
    :return: the SVG document
    """
    rows, cols = len(weights), len(weights[0])
    # Room for the row labels on the left, and for the title and the column labels on top
    left = 36 + LABEL_CHAR * max(len(q) for q in queries)
    top = 68
    width = left + cols * cell + 16
    height = top + rows * cell + (44 if masked else 16)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" '
           f'aria-labelledby="{name}-title {name}-desc">',
           f'<title id="{name}-title">{escape(title)}</title>',
           f'<desc id="{name}-desc">{escape(description)}</desc>',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           # The axis names
           f'<text x="{left + cols * cell // 2}" y="24" {FONT} font-size="15" '
           f'text-anchor="middle" font-weight="bold">keys</text>',
           f'<text x="14" y="{top + rows * cell // 2}" {FONT} font-size="15" text-anchor="middle" '
           f'font-weight="bold" transform="rotate(-90 14 {top + rows * cell // 2})">queries</text>']
    if caption:
        out.append(f'<text x="8" y="24" {FONT} font-size="15" font-weight="bold">{escape(caption)}</text>')
    # Column labels (keys) above the grid, row labels (queries) to its left. They are tokens of
    # an example, the same in every language: `translate="no"` tells the builder not to offer
    # them to translators (as in HTML).
    for j, key in enumerate(keys):
        x = left + j * cell + cell // 2
        out.append(f'<text x="{x}" y="{top - 12}" {FONT} font-size="13" '
                   f'text-anchor="middle" translate="no">{escape(key)}</text>')
    for i, query in enumerate(queries):
        y = top + i * cell + cell // 2 + 5
        out.append(f'<text x="{left - 8}" y="{y}" {FONT} font-size="13" '
                   f'text-anchor="end" translate="no">{escape(query)}</text>')
    # The cells: a filled square with the weight printed in the middle. Light text on dark cells.
    # Small maps without numbers are drawn more compactly: the grid starts grey (masked), and
    # only the unmasked cells are drawn on it, without an outline.
    if not numbers:
        out.append(f'<rect x="{left}" y="{top}" width="{cols * cell}" height="{rows * cell}" '
                   f'fill="{MASKED}"/>')
    for i in range(rows):
        for j in range(cols):
            x, y = left + j * cell, top + i * cell
            blocked = masked is not None and masked[i][j]
            fill = MASKED if blocked else colour(weights[i][j])
            if not numbers:
                if not blocked:
                    out.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}"/>')
                continue
            out.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}" '
                       f'stroke="#ffffff" stroke-width="2"/>')
            if not blocked:
                ink = "#ffffff" if weights[i][j] > 0.5 else "#1a1a1a"
                out.append(f'<text x="{x + cell // 2}" y="{y + cell // 2 + 5}" {FONT} '
                           f'font-size="14" text-anchor="middle" fill="{ink}">'
                           f'{weights[i][j]:.2f}</text>')
    if masked:
        y = top + rows * cell + 28
        out.append(f'<rect x="{left}" y="{y - 13}" width="16" height="16" fill="{MASKED}"/>')
        out.append(f'<text x="{left + 24}" y="{y}" {FONT} font-size="13">masked: weight 0</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def uniform_attention_weights(mask: torch.Tensor) -> torch.Tensor:
    """
    ## Equal scores under a mask

    To show what a mask does on its own, we give every query-key pair the same score (zero
    queries and keys) and run [`attention`](mha.html#attention). Each query then spreads its weight evenly
    over the keys the mask allows.

    :param mask: `[seq_q, seq_k]`, `True` = may attend
    :return: the weights, `[seq_q, seq_k]`
    """
    seq_q, seq_k = mask.shape
    # `[1, 1, seq, 1]`: one batch element, one head, a head size of 1
    q = torch.zeros(1, 1, seq_q, 1)
    k = torch.zeros(1, 1, seq_k, 1)
    # `[None, None]` adds the batch and head axes: `[1, 1, seq_q, seq_k]`
    _, weights = attention(q, k, k, mask[None, None])
    return weights[0, 0]


def render_all(learned_data: dict | None = None) -> dict[str, str]:
    """
    ## The figures

    :return: file name → SVG text
    """
    figures = {}

    # ### Causal mask
    #
    # Query $i$ may only look at keys $0, ..., i$: row $i$ has weight $1/(i+1)$ on each of them.
    words = ["we", "read", "code", "line", "by", "line"]
    mask = causal_mask(len(words))[0]
    figures["causal_mask.svg"] = heatmap_svg(
        "causal", uniform_attention_weights(mask).tolist(), words, words,
        "Attention weights under a causal mask",
        "Six tokens with equal scores. Each query attends only to itself and earlier tokens, "
        "so row i has weight 1/(i+1) on keys 0 to i; keys after the query are masked.",
        masked=(~mask).tolist())

    # ### Padding mask
    #
    # A sequence of three real tokens padded to five. The padding mask `[1, 1, 5]` broadcasts
    # over the queries, so every row blocks the same two keys, including the rows of the padding
    # tokens themselves. Their outputs are computed like any other, and the mask does nothing
    # about the loss: a model trained on padded batches must leave the padding positions out of
    # the loss itself (for example with `ignore_index` in `cross_entropy`, as
    # [the padding page](padding.html) shows). This tutorial's training batches have no padding.
    tokens = ["short", "text", "here", "<pad>", "<pad>"]
    pad = padding_mask(torch.tensor([3]), len(tokens))[0].expand(len(tokens), -1)
    figures["padding_mask.svg"] = heatmap_svg(
        "padding", uniform_attention_weights(pad).tolist(), tokens, tokens,
        "Attention weights with a padding mask",
        "Five positions, of which the last two are padding. With equal scores every query, "
        "including the padding positions, puts weight 1/3 on each of the three real tokens "
        "and 0 on the padding keys.",
        masked=(~pad).tolist())

    # ### The two-token example
    #
    # The weights computed on [the scores and softmax page](scores_and_softmax.html).
    _, weights = two_token_example()
    figures["two_tokens.svg"] = heatmap_svg(
        "two-tokens", weights[0].tolist(), TOKENS, TOKENS,
        "Two-token example: attention weights",
        "The scaled scores of the first token are 14 and 12, which the softmax turns into "
        "0.88 and 0.12. The second token's scores, 2.5 and 3, give 0.38 and 0.62.")

    # ### Two pages with figures of their own
    #
    # Pages that draw figures of their own have a `page_figures` function.
    from . import padding, positional_encoding
    figures.update(positional_encoding.page_figures())
    figures.update(padding.page_figures())

    # ### The trained model's figures
    #
    # [What the model learned](learned.html) draws its figures from the numbers of a training
    # run saved in `figures/learned.json`; `python -m annotated_attention.learned` trains again
    # and rewrites that file.
    from .learned import DATA_FILE, load_data, render
    if learned_data is None and DATA_FILE.exists():
        learned_data = load_data()
    if learned_data is not None:
        figures.update(render(learned_data))
    return figures


def write_all(directory: Path = FIGURE_DIR, learned_data: dict | None = None) -> list[Path]:
    """Write every figure to `directory` (the trained model's from `learned_data`, by default
    the committed numbers); returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, svg in render_all(learned_data).items():
        path = directory / name
        # `newline="\n"` keeps the bytes identical on Windows too.
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(svg)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    """Draw every figure into `--out`, or over the committed ones with `--update`."""
    import argparse
    parser = argparse.ArgumentParser(prog="python -m annotated_attention.figures", description=main.__doc__)
    parser.add_argument("--out", default="artifacts/figures", help="folder for the figures (default: %(default)s)")
    parser.add_argument("--update", action="store_true", help="rewrite the committed figures/*.svg")
    args = parser.parse_args(argv)
    for path in write_all(FIGURE_DIR if args.update else Path(args.out)):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
