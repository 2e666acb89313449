r"""
---
title: Generating with a KV Cache
summary: Why the keys and values of earlier positions can be kept during generation, and a cached generator that the tests check against full recomputation, token by token.
---

# Generating with a KV Cache

[`generate`](experiment.html#generate) runs the whole text so far through the model for every new
character. For a text of $n$ characters that is $n$ forward passes over up to $n$ positions
each, and most of that work is repeated: under the causal mask, the key and the value of
position $j$ in every layer depend only on the tokens $0, ..., j$, so they do not change when a
token is appended.

A **KV cache** keeps them. For each new token we compute only its own query, key and value in
each layer, append the key and the value to the cache, and let the one new query attend to all
cached keys. The result is the same as recomputing everything (the tests check it token by
token); the work per new token grows with the length of the text instead of with its square.

The cache is bounded by the model's `max_len`: the positional encoding knows only that many
positions. `generate` on the experiment page keeps going past `max_len` by sliding a window over
the text, which moves every token to a new position, so nothing could be reused; the cached
generator below stops at `max_len` instead.
"""

from typing import Optional

import torch

from .data import Vocabulary
from .experiment import autocast
from .mha import MultiHeadAttention, attention
from .transformer import DecoderOnlyTransformer


class KVCache:
    """
    ## The cache

    One key tensor and one value tensor per layer, each `[batch, heads, cached, d_k]`: the
    heads are already split, so that the cache can go straight into
    [`attention`](mha.html#attention).
    """

    def __init__(self, layers: int):
        self.keys: list[Optional[torch.Tensor]] = [None] * layers
        self.values: list[Optional[torch.Tensor]] = [None] * layers

    def __len__(self) -> int:
        """The number of cached positions."""
        return 0 if self.keys[0] is None else self.keys[0].shape[2]


def attend_with_cache(mha: MultiHeadAttention, x: torch.Tensor, cache: KVCache,
                      layer: int) -> torch.Tensor:
    r"""
    ## Self-attention for the new positions

    :param x: the layer-normalised inputs of the new positions, `[batch, new, d_model]`
    :return: the attention output of the new positions, `[batch, new, d_model]`
    """
    # Queries, keys and values of the new positions only: `[batch, heads, new, d_k]`
    q = mha.split_heads(mha.query(x))
    k = mha.split_heads(mha.key(x))
    v = mha.split_heads(mha.value(x))
    # Append to the cache along the position axis: `[batch, heads, cached + new, d_k]`
    if cache.keys[layer] is not None:
        k = torch.cat([cache.keys[layer], k], dim=2)
        v = torch.cat([cache.values[layer], v], dim=2)
    cache.keys[layer], cache.values[layer] = k, v
    # The new position $t$ (counted from 0 among the new ones) is position `past + t` of the
    # text, so it may attend to keys $0, ..., past + t$: a causal mask shifted by `past`,
    # `[new, cached + new]`. For a single new token it allows every key.
    new, total = q.shape[2], k.shape[2]
    past = total - new
    mask = torch.ones(new, total, dtype=torch.bool, device=x.device).tril(past)
    out, _ = attention(q, k, v, mask[None, None])
    return mha.output(mha.merge_heads(out))


def forward_with_cache(model: DecoderOnlyTransformer, tokens: torch.Tensor,
                       cache: KVCache) -> torch.Tensor:
    """
    ## The model, one step at a time

    The same computation as [the model's `forward`](transformer.html#DecoderOnlyTransformer-forward), for the tokens that
    follow the cached ones. The model must be in evaluation mode (no dropout), as for any
    generation.

    :param tokens: the new token ids, `[batch, new]`
    :return: the logits of the new positions, `[batch, new, vocab_size]`
    """
    # Dropout would make the cached keys and values of earlier steps a random draw that the next
    # step cannot repeat, and this path applies only the FFN's share of it: refuse, not guess.
    if model.training:
        raise ValueError("forward_with_cache needs the model in evaluation mode (model.eval()): "
                         "dropout has no meaning for cached keys and values")
    past, new = len(cache), tokens.shape[1]
    if past + new > model.config.max_len:
        raise ValueError(f"the cache holds {past} positions and {new} more do not fit in "
                         f"max_len={model.config.max_len}")
    # The positional encoding of positions `past, ..., past + new - 1`, not of $0, 1, ...$
    x = model.embed(tokens) + model.pos.pe[past:past + new].to(model.embed.weight.dtype)
    # Each layer as in `TransformerLayer.forward`, with cached attention
    for i, layer in enumerate(model.layers):
        x = x + attend_with_cache(layer.attn, layer.norm_attn(x), cache, i)
        x = x + layer.ff(layer.norm_ff(x))
    return model.head(model.norm(x))


@torch.no_grad()
def generate_cached(model: DecoderOnlyTransformer, vocab: Vocabulary, prompt: str, length: int,
                    device: torch.device, temperature: float = 0.8, seed: int = 0) -> str:
    """
    ## Generation with the cache

    The same sampling as [`generate`](experiment.html#generate), with the same random numbers
    and the same [autocast](experiment.html#autocast) (bfloat16 on CUDA, none on the CPU), so
    for texts up to `max_len` characters both give the same text up to rounding: the two paths
    add the same numbers in a different order (a whole row at once against one position at a
    time), and a sample can differ where two characters are nearly equally likely. The prompt
    goes through the model in one call; after that each call handles a single new token. Like
    `generate`, it gives the model back in the mode it came in.
    """
    if len(prompt) + length > model.config.max_len:
        raise ValueError(f"prompt and sample ({len(prompt) + length} characters) must fit in "
                         f"max_len={model.config.max_len}")
    was_training = model.training
    model.eval()
    try:
        generator = torch.Generator(device=device).manual_seed(seed)
        cache = KVCache(len(model.layers))
        ids = vocab.encode(prompt).to(device)[None, :]
        with autocast(device):
            logits = forward_with_cache(model, ids, cache)
        for _ in range(length):
            probs = (logits[:, -1, :].float() / temperature).softmax(dim=-1)
            next_id = torch.multinomial(probs, 1, generator=generator)
            ids = torch.cat([ids, next_id], dim=1)
            # Only the new token: `[1, 1]`
            with autocast(device):
                logits = forward_with_cache(model, next_id, cache)
    finally:
        model.train(was_training)
    return vocab.decode(ids[0])

# ## Exercises
#
# Break the cache and run `python -m pytest tests/test_tutorial_kv_cache.py`:
#
# 1. Add the positional encoding of positions $0, ..., new - 1$ instead of
#    `past, ..., past + new - 1`.
# 2. Forget to append the new key and value to the cache (store only the new ones).
# 3. Use `tril()` instead of `tril(past)` for the mask of the new positions.
#
# <details><summary>Expected answers</summary>
#
# 1. All four tests of `tests/test_tutorial_kv_cache.py` fail, first
#    `test_cached_logits_equal_full_recomputation_token_by_token`: from the second step on, each
#    new token gets the encoding of position 0.
# 2. The same four fail: each new token then sees only itself and the other new tokens, and the
#    generated text differs after a few characters.
# 3. The same four fail. For the prompt (`past = 0`) both masks are equal; from the second call
#    on, `tril()` puts the diagonal at key 0, and the token at position `past + t` sees only keys
#    $0, ..., t$.
#
# </details>
