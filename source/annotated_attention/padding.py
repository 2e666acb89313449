r"""
---
title: Padding a Batch of Sequences of Different Lengths
summary: Padding short sequences to a common length, a padding mask that hides the padding from attention, and a loss with ignore_index that really does not count it, each checked against the sequences run one by one.
---

# Padding a Batch of Sequences of Different Lengths

The [experiment](experiment.html) never pads: it cuts one long text into windows of the same
length. Many tasks cannot do that. Their examples are separate texts (sentences, documents,
questions), each of its own length, and a batch is one rectangular tensor. So the short
sequences are **padded**: a special token is appended until every sequence is as long as the
longest.

The padding is not data, and two things must then leave it out:

* **Attention.** A query must not take information from a padding key. A padding mask blocks
  those keys ([`padding_mask`](mha.html#padding_mask)).
* **The loss.** A padding position must not be a target. `F.cross_entropy(..., ignore_index=PAD)`
  leaves out every target equal to `PAD`, from the sum and from the count the mean divides by.

Either is easy to forget, and forgetting either gives no error: the code runs and trains, on
numbers that are a little wrong. This page checks both against the only definition that cannot
be wrong, each sequence run on its own, without padding.
"""

import torch
import torch.nn.functional as F

from .data import Vocabulary
from .figures import heatmap_svg
from .mha import MultiHeadAttention, padding_mask
from .positional_encoding import sinusoidal_encoding
from .transformer import DecoderOnlyTransformer, ModelConfig

# ## A batch of three texts
#
# Character-level, as in the rest of the tutorial. The padding token gets the id after the last
# character, so that it can never be mistaken for one.
TEXTS = ("attention", "is all", "you need")
VOCAB = Vocabulary.from_text("".join(TEXTS))
PAD = len(VOCAB)


def pad_batch(sequences: list[torch.Tensor], pad_id: int = PAD,
              length: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """
    ## Padding

    :param sequences: token ids, one `[length_i]` tensor per sequence
    :param pad_id: the id written into the padding positions
    :param length: the padded length; by default the longest sequence's
    :return: the padded ids `[batch, length]` and the real lengths `[batch]`
    """
    lengths = torch.tensor([len(s) for s in sequences])
    length = int(lengths.max()) if length is None else length
    if length < int(lengths.max()):
        raise ValueError(f"length={length} is shorter than the longest sequence ({int(lengths.max())})")
    tokens = torch.full((len(sequences), length), pad_id, dtype=torch.long)
    # Right padding: each sequence starts at position 0 and the padding follows it, so every
    # real token keeps the position (and the positional encoding) it has on its own.
    for i, s in enumerate(sequences):
        tokens[i, :len(s)] = s
    return tokens, lengths


# ## Attention over a padded batch
#
# Without a causal mask every query sees every key, as in an encoder. This is where padding hurts
# most: the padding keys come after the real tokens, and every real query can see them.
D_MODEL, HEADS = 16, 2


def make_attention(seed: int = 0) -> tuple[torch.nn.Embedding, MultiHeadAttention]:
    """An embedding and one attention layer with fixed random weights, in evaluation mode. The
    explicit path (`fused=False`) keeps the weights for the figures."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        embed = torch.nn.Embedding(PAD + 1, D_MODEL)
        mha = MultiHeadAttention(D_MODEL, HEADS, fused=False)
    return embed.eval(), mha.eval()


@torch.no_grad()
def attend(embed: torch.nn.Embedding, mha: MultiHeadAttention, tokens: torch.Tensor,
           lengths: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """
    ### One attention layer, with or without the padding mask

    :param tokens: `[batch, seq]`
    :param lengths: the real lengths `[batch]`, or `None` for no mask
    :return: the output `[batch, seq, d_model]` and the weights `[batch, heads, seq, seq]`
    """
    seq = tokens.shape[1]
    x = embed(tokens) + sinusoidal_encoding(seq, D_MODEL)
    # `[batch, 1, seq]`: the same keys are padding for every query of a sequence
    mask = None if lengths is None else padding_mask(lengths, seq)
    out = mha(x, mask=mask)
    return out, mha.attn


# ## The loss
#
# A language model predicts token $t + 1$ at position $t$. In a padded batch the last real token
# of a short sequence has a padding token as its target, and so do the padding positions.
# With right padding and a causal mask, the real positions cannot see the padding (it comes
# after them), so their logits are those of the sequence alone; only the loss can go wrong.
# (With left padding, as batched generation often uses, the causal mask is not enough: the
# padding comes first, and every real token also moves to a later position.)


def lm_loss(model: DecoderOnlyTransformer, tokens: torch.Tensor, ignore_padding: bool = True) -> torch.Tensor:
    """
    ### Cross-entropy over a padded batch

    :param tokens: padded ids `[batch, seq]`
    :param ignore_padding: pass `ignore_index=PAD`, so that padding targets count for nothing
    :return: the mean loss per counted target
    """
    # Inputs and targets, shifted by one: `[batch, seq - 1]` each
    x, y = tokens[:, :-1], tokens[:, 1:]
    logits = model(x)
    # `cross_entropy` wants `[N, vocab]` scores and `[N]` targets. With `ignore_index`, a target
    # equal to `PAD` adds nothing to the sum and is not counted in the mean. The default,
    # `ignore_index=-100`, never matches a token id, so without it every padding target is
    # counted as if it were text.
    return F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=PAD if ignore_padding else -100)


def make_model(seed: int = 0) -> DecoderOnlyTransformer:
    """A small language model over `VOCAB` and `PAD`, with fixed random weights, in evaluation
    mode (dropout off, so that two runs can be compared)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = DecoderOnlyTransformer(ModelConfig(vocab_size=PAD + 1, d_model=32, heads=2, layers=2,
                                                   d_ff=64, max_len=32, dropout=0.0))
    return model.eval()


@torch.no_grad()
def loss_one_by_one(model: DecoderOnlyTransformer, sequences: list[torch.Tensor]) -> float:
    """
    ### The reference: every sequence on its own

    Each sequence without padding; the losses of all their targets, summed, divided by the
    number of targets. This is what the batched loss should be.
    """
    total = sum(F.cross_entropy(model(s[None, :-1])[0], s[1:], reduction="sum").item() for s in sequences)
    return total / sum(len(s) - 1 for s in sequences)


def main() -> None:
    """
    ## Checking it

    `python -m annotated_attention.padding` prints the three losses and checks the statements of
    this page; the tests check the same.
    """
    sequences = [VOCAB.encode(t) for t in TEXTS]
    tokens, lengths = pad_batch(sequences)

    # Attention: with the mask, every real query's output is the sequence's output on its own.
    embed, mha = make_attention()
    masked, _ = attend(embed, mha, tokens, lengths)
    unmasked, _ = attend(embed, mha, tokens, None)
    for i, s in enumerate(sequences):
        alone, _ = attend(embed, mha, s[None], None)
        n = len(s)
        assert torch.allclose(masked[i, :n], alone[0], atol=1e-6)
        # Without the mask the shorter sequences' outputs change; the longest has no padding.
        if n < tokens.shape[1]:
            assert not torch.allclose(unmasked[i, :n], alone[0], atol=1e-3)

    # The loss: with `ignore_index` it is the one-by-one loss, and more padding changes nothing.
    with torch.no_grad():
        model = make_model()
        reference = loss_one_by_one(model, sequences)
        ignored = lm_loss(model, tokens).item()
        counted = lm_loss(model, tokens, ignore_padding=False).item()
        longer, _ = pad_batch(sequences, length=16)
        ignored_longer = lm_loss(model, longer).item()
        counted_longer = lm_loss(model, longer, ignore_padding=False).item()
    print(f"one by one {reference:.4f}, with ignore_index {ignored:.4f} ({ignored_longer:.4f} "
          f"padded to 16), without {counted:.4f} ({counted_longer:.4f} padded to 16)")
    assert abs(ignored - reference) < 1e-5 and abs(ignored_longer - reference) < 1e-5
    assert abs(counted - reference) > 1e-3 and abs(counted_longer - counted) > 1e-3
    print("all checks passed")


# ## The attention maps
#
# The weights of head 1 for the shortest text, "is all", padded to the length of "attention",
# without and with the padding mask. Without it, every query, real or not, gives some of its
# weight to the three padding keys; with it, the padding columns are blocked and each row's
# weight is shared among the six real keys only.
#
# ![Attention of a padded sequence without a padding mask](figures/padding_unmasked.svg)
#
# ![Attention of a padded sequence with a padding mask](figures/padding_masked.svg)
#
# The rows of the padding queries are computed either way. Nothing reads them: no real query of
# a later layer may look at a padding position, and `ignore_index` drops their predictions from
# the loss.


def page_figures() -> dict[str, str]:
    """This page's figures, file name → SVG text, for [`render_all`](figures.html#render_all)."""
    sequences = [VOCAB.encode(t) for t in TEXTS]
    tokens, lengths = pad_batch(sequences)
    embed, mha = make_attention()
    short = TEXTS.index("is all")
    labels = [c if c != " " else "␣" for c in TEXTS[short]] + ["<pad>"] * (tokens.shape[1] - len(TEXTS[short]))
    figures = {}
    _, weights = attend(embed, mha, tokens, None)
    figures["padding_unmasked.svg"] = heatmap_svg(
        "padding-unmasked", weights[short, 0].tolist(), labels, labels,
        "Attention of a padded sequence without a padding mask",
        "Head 1 of one attention layer with random weights, for the text 'is all' padded with "
        "three padding tokens. Every query puts part of its weight on the padding keys.",
        cell=48)
    _, weights = attend(embed, mha, tokens, lengths)
    blocked = (~padding_mask(lengths, tokens.shape[1])[short].expand(tokens.shape[1], -1)).tolist()
    figures["padding_masked.svg"] = heatmap_svg(
        "padding-masked", weights[short, 0].tolist(), labels, labels,
        "Attention of a padded sequence with a padding mask",
        "The same head and text with the padding mask: the padding keys are blocked, and every "
        "query spreads its weight over the six real keys only.",
        masked=blocked, cell=48)
    return figures

# ## Exercises
#
# Break the page and run `python -m pytest tests/test_tutorial_padding.py` to see which test
# catches it:
#
# 1. Leave out `ignore_index` in `lm_loss`.
# 2. Pad on the left instead of the right in `pad_batch`: `tokens[i, length - len(s):] = s`.
# 3. Give the padding token the id 0.
#
# <details><summary>Expected answers</summary>
#
# 1. `test_ignore_index_gives_the_one_by_one_loss` fails: the loss now counts the padding
#    targets, and it changes when the batch is padded further.
# 2. `test_right_padding_keeps_every_real_token_where_it_was` fails, and with it the loss test:
#    every real token of a short sequence moves to a later position, gets another positional
#    encoding, and under the causal mask sees the padding before it.
# 3. `test_the_padding_id_is_no_character` fails: id 0 is the first character of the vocabulary,
#    so `ignore_index` would also drop every real target of that character.
#
# </details>

if __name__ == "__main__":
    main()
