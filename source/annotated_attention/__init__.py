r"""
---
title: Annotated Multi-Head Attention
summary: A tested, line-by-line PyTorch implementation of multi-head attention and of the small transformer language model that trains with it.
---

# Annotated Multi-Head Attention

**Multi-head attention** is the operation at the centre of the transformer. For every position in
a sequence it computes a weighted average of information from other positions, and it learns
*which* positions matter: each query is compared with every key, the comparison scores become
weights through a softmax, and the weights mix the values. Several heads do this in parallel,
each with its own learned projections, so that one layer can follow several kinds of relations
at once. Language models, translation systems, speech recognisers and image models are all built
around it.

These pages implement multi-head attention in [PyTorch](https://pytorch.org/), explain every
non-trivial line, and then train a small language model with it.

## How to read these pages

Each page is a Python module. The explanation is on the left and the code it describes is on the
right, section by section. The formulas are written in mathematical notation next to the code
that computes them, and the shape of every tensor is noted at each step, for example
`[batch, seq, d_model]`. Nothing here is pseudo-code: the tests compare these modules with
`torch.nn.MultiheadAttention` and with `torch.nn.functional.scaled_dot_product_attention`
(outputs and gradients), so what you read is what runs.
"""

# ## Pages, in reading order
#
# 1. [Multi-head attention](mha.html): projections, heads, scores, scaling, masks, softmax,
#    dropout, and a fast path with PyTorch's fused kernel.
# 2. [The scores and the softmax, shape by shape](scores_and_softmax.html): why $QK^\top$ has
#    the shape `batch × seq × seq` and why the softmax runs over the last axis, with a two-token
#    example you can run.
# 3. [Positional encoding](positional_encoding.html): how the model is told the order of the tokens.
# 4. [Feed-forward network](feed_forward.html): the part of a layer that works on each position
#    on its own.
# 5. [Transformer layer and language model](transformer.html): a pre-norm layer and a small
#    decoder-only model.
# 6. [Character data](data.html): the training text, which is the source of these pages.
# 7. [Training](experiment.html): the training loop, checkpoints, and data-parallel training.
# 8. [Figures](figures.html): how the attention heat maps are computed and drawn.
# 9. [What the model learned](learned.html): the attention maps of a trained model, layer by
#    layer and head by head, its loss curve, and samples at several steps.
# 10. [Generating with a KV cache](kv_cache.html): reusing the keys and values of earlier
#     positions, checked against full recomputation.
# 11. [Padding](padding.html): a batch of sequences of different lengths, a padding mask, and a
#     loss that really leaves the padding out.
# 12. [Where attention went next](where_next.html): rotary position embeddings, grouped-query
#     attention and the online softmax of FlashAttention, in short tested code, with papers to
#     read on.
#
# ## Running the code
#
# Install PyTorch first, then the project with its tutorial extra, from the repository root (as
# the README says; this makes the package `annotated_attention` importable):
#
# ```sh
# pip install torch==2.13.0 && pip install -e ".[tutorial]"
# ```
#
# On Linux, PyPI's torch is the CUDA build (several GB); the CPU build, all the tutorial needs,
# comes from PyTorch's index: make the first step
# `pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu`. Then:
#
# * `python -m annotated_attention.scores_and_softmax` prints the two-token example and checks its
#   numbers;
# * `python -m annotated_attention.experiment` trains the language model on the CPU in about a
#   minute or two (or on a GPU, when there is one) and prints a generated sample;
# * `pip install -e ".[tutorial,test]"` and `python -m pytest tests` run the tests.
#
# Importing the package loads nothing else, so `import annotated_attention` stays cheap; each
# page imports PyTorch itself.
__version__ = "0.1.0"
