r"""
---
title: Character Data from the Tutorial's Own Source
summary: The training text (this package's source files), a character vocabulary, a train/validation split, random batches and the unigram-entropy baseline.
---

# Character Data from the Tutorial's Own Source

The [experiment](experiment.html) needs text, and it should run without downloading anything.
So the model learns from the source files of this package: the pages you are reading now.
That is more than a hundred thousand characters of Python and English, enough for a small model
to learn spelling, indentation and common phrases within a couple of minutes on a laptop CPU.

We model **characters**: the vocabulary is the set of distinct characters in the text, and each
character is one token. This avoids a tokenizer and keeps the vocabulary small (about a hundred
entries).
"""

import math
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import torch

# The package's folder, found through the import system rather than the module's own file
# name, which a downloaded notebook of this page does not have (its intro sets `__package__`).
PACKAGE_DIR = Path(str(files(__package__ or "annotated_attention")))


def load_text(directory: Path = PACKAGE_DIR) -> str:
    """
    ## The text

    All `.py` files of the package, in sorted order, so that every run (and every process of a
    distributed run) sees exactly the same text.
    """
    files = sorted(directory.glob("*.py"))
    if not files:
        raise FileNotFoundError(f"no .py files in {directory}: the experiment trains on them")
    return "\n\n".join(f.read_text(encoding="utf-8") for f in files)


@dataclass(frozen=True)
class Vocabulary:
    """
    ## The vocabulary

    The characters, in a fixed order; a character's index in this string is its token id.
    We store the string itself in checkpoints, so a saved model can always decode its output.
    """
    chars: str

    @classmethod
    def from_text(cls, text: str) -> "Vocabulary":
        # Sorting makes the ids independent of where each character first appears.
        return cls("".join(sorted(set(text))))

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        """Characters → token ids, `[len(text)]`. Characters outside the vocabulary are dropped."""
        index = {c: i for i, c in enumerate(self.chars)}
        return torch.tensor([index[c] for c in text if c in index], dtype=torch.long)

    def decode(self, ids: list[int] | torch.Tensor) -> str:
        """Token ids → characters."""
        if isinstance(ids, torch.Tensor):
            ids = ids.tolist()
        return "".join(self.chars[i] for i in ids)


def split(data: torch.Tensor, block: int = 2048, every: int = 10) -> tuple[torch.Tensor, torch.Tensor]:
    """
    ## Train and validation split

    We cut the text into blocks of `block` characters and send every `every`-th block to the
    validation set. Taking only the end of the text would make the validation set one single
    file, which is not typical of the rest. The training blocks are joined into one tensor and
    the validation blocks into another, so no training window can reach into validation text.

    :param data: token ids, `[n]`
    :return: training ids and validation ids
    """
    blocks = data.split(block)
    train = [b for i, b in enumerate(blocks) if i % every != every - 1]
    val = [b for i, b in enumerate(blocks) if i % every == every - 1]
    if not val:
        raise ValueError(f"the text ({len(data)} tokens) is too short for a validation set: "
                         f"it needs at least {block * every} tokens with block={block}")
    return torch.cat(train), torch.cat(val)


def unigram_entropy(data: torch.Tensor, vocab_size: int) -> float:
    r"""
    ## The baseline: unigram entropy

    A model that ignores the context can at best predict every character with its overall
    frequency $f_c$. Its loss is then the entropy of the character distribution, in nats
    (natural logarithm, the unit of `cross_entropy`):

    $$H = -\sum_c f_c \log f_c$$

    A validation loss clearly below $H$ shows that the model uses the context, which is what
    attention is for.
    """
    counts = torch.bincount(data, minlength=vocab_size).double()
    f = counts[counts > 0] / counts.sum()
    return float(-(f * f.log()).sum())


def bigram_loss(train: torch.Tensor, val: torch.Tensor, vocab_size: int, alpha: float = 0.1) -> float:
    r"""
    ## A second baseline: the bigram model

    The next step up from the unigram model predicts each character from the one before it
    only, with the frequencies counted on the training text: $p(b \mid a)$ is the share of $b$
    among the characters that follow $a$. This is the model of
    [Karpathy's "makemore"](https://github.com/karpathy/makemore) before any neural network, and
    what a transformer with a one-character context could reach. We add $\alpha$ to every count
    (additive smoothing), so that a pair never seen in training costs a large but finite loss,
    and measure it on the validation text, like the model:

    $$\mathcal{L}_{\text{bigram}} = -\frac{1}{n - 1} \sum_{t=1}^{n-1} \log \frac{N(x_t, x_{t+1}) + \alpha}{N(x_t) + \alpha V}$$

    A model that beats this number uses more than the previous character, which only attention
    can give it here.

    :param train: training ids, `[n]`; `val`: validation ids
    :return: the mean loss per character on `val`, in nats
    """
    counts = torch.full((vocab_size, vocab_size), alpha, dtype=torch.float64)
    counts.index_put_((train[:-1], train[1:]), torch.ones(len(train) - 1, dtype=torch.float64),
                      accumulate=True)
    log_p = (counts / counts.sum(dim=1, keepdim=True)).log()
    return float(-log_p[val[:-1], val[1:]].mean())


def random_batch(data: torch.Tensor, batch_size: int, seq_len: int,
                 generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """
    ## Random training batches

    Pick `batch_size` random windows of `seq_len + 1` characters. The input is a window without
    its last character and the target is the same window shifted by one: the target at
    position $t$ is the character at position $t + 1$.

    :return: inputs and targets, both `[batch_size, seq_len]`
    """
    if len(data) < seq_len + 1:
        raise ValueError(f"the data ({len(data)} tokens) is shorter than one window of "
                         f"seq_len + 1 = {seq_len + 1} tokens: use a smaller --seq-len")
    # Start positions, `[batch_size]`: a window starting at `len(data) - seq_len - 1` ends
    # exactly at the last token, so that is the last valid start (`randint`'s bound is exclusive)
    start = torch.randint(0, len(data) - seq_len, (batch_size,), generator=generator)
    # `[batch_size, seq_len + 1]`: row $b$ is `data[start[b] : start[b] + seq_len + 1]`
    windows = data[start[:, None] + torch.arange(seq_len + 1)]
    return windows[:, :-1], windows[:, 1:]


def validation_windows(data: torch.Tensor, seq_len: int) -> torch.Tensor:
    """
    ## Validation windows

    The validation text cut into consecutive, non-overlapping windows of `seq_len + 1`
    characters (a leftover shorter than a window is dropped). Every validation run uses the
    same windows, so losses from different steps and runs are comparable.

    :return: `[windows, seq_len + 1]`
    """
    n = len(data) // (seq_len + 1)
    if n == 0:
        raise ValueError(f"the validation data ({len(data)} tokens) is shorter than one window "
                         f"of {seq_len + 1} tokens: use a smaller --seq-len")
    return data[: n * (seq_len + 1)].view(n, seq_len + 1)


def nats_to_bits(nats: float) -> float:
    r"""Divide by $\log 2$ to convert nats to bits."""
    return nats / math.log(2)
