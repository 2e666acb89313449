"""The KV cache gives exactly what full recomputation gives, token by token.

Mutation checks (planted by hand, then reverted; each fails a test below): the positional
encoding of positions 0.. instead of `past`.. (logits differ from the second token on); the new
key and value not stored in the cache (the line `cache.keys[layer], cache.values[layer] = k, v` removed); the mask of
the prompt built with `tril()` instead of `tril(past)` (harmless for one new token, but
`test_prompt_in_chunks` feeds several); the feed-forward sub-layer skipped.
"""
import pytest
import torch

from annotated_attention.data import Vocabulary
from annotated_attention.experiment import generate
from annotated_attention.kv_cache import KVCache, forward_with_cache, generate_cached
from annotated_attention.transformer import DecoderOnlyTransformer, ModelConfig
from tutorial_helpers import perturb


def model(fused=True):
    torch.manual_seed(0)
    m = DecoderOnlyTransformer(ModelConfig(vocab_size=13, d_model=32, heads=4, layers=3, d_ff=64,
                                           max_len=24, dropout=0.1, fused=fused)).double()
    return perturb(m).eval()


@pytest.mark.parametrize("fused", [False, True])
def test_cached_logits_equal_full_recomputation_token_by_token(fused):
    m = model(fused)
    tokens = torch.randint(0, 13, (2, 24), generator=torch.Generator().manual_seed(1))
    cache = KVCache(len(m.layers))
    with torch.no_grad():
        for t in range(24):
            step = forward_with_cache(m, tokens[:, t:t + 1], cache)
            full = m(tokens[:, :t + 1])
            torch.testing.assert_close(step[:, 0], full[:, -1], rtol=0, atol=1e-10)
            assert len(cache) == t + 1


def test_prompt_in_chunks():
    m = model()
    tokens = torch.randint(0, 13, (2, 20), generator=torch.Generator().manual_seed(2))
    cache = KVCache(len(m.layers))
    with torch.no_grad():
        parts = [forward_with_cache(m, tokens[:, a:b], cache) for a, b in ((0, 7), (7, 8), (8, 20))]
        torch.testing.assert_close(torch.cat(parts, dim=1), m(tokens), rtol=0, atol=1e-10)
        with pytest.raises(ValueError, match="do not fit in max_len=24"):
            forward_with_cache(m, tokens[:, :5], cache)


def test_cached_generation_gives_the_same_text():
    m = model()
    vocab = Vocabulary("abcdefghijklm")
    cpu = torch.device("cpu")
    for seed in range(3):
        assert generate_cached(m, vocab, "abc", 21, cpu, seed=seed) == generate(m, vocab, "abc", 21, cpu, seed=seed)
    with pytest.raises(ValueError, match="must fit in max_len=24"):
        generate_cached(m, vocab, "abc", 22, cpu)
