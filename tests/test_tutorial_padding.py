"""The padding page: a padded batch, a padding mask in attention and a loss with `ignore_index`,
each checked against the sequences run one by one, and its figures as committed.

Mutation checks (planted by hand, then reverted; each fails a test below): `ignore_index` left
out of `lm_loss`; left padding in `pad_batch`; `PAD = 0`; the padding mask dropped in `attend`;
the figures drawn from head 2.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

torch = pytest.importorskip("torch", reason="the tutorial's code needs torch")

from annotated_attention import figures, padding  # noqa: E402
from annotated_attention.padding import PAD, TEXTS, VOCAB, pad_batch  # noqa: E402
from tutorial_helpers import perturb  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
SEQUENCES = [VOCAB.encode(t) for t in TEXTS]


def test_right_padding_keeps_every_real_token_where_it_was():
    tokens, lengths = pad_batch(SEQUENCES)
    assert tokens.shape == (3, max(len(t) for t in TEXTS))
    assert lengths.tolist() == [len(t) for t in TEXTS]
    for row, s in zip(tokens, SEQUENCES):
        assert torch.equal(row[:len(s)], s)
        assert (row[len(s):] == PAD).all()
    longer, _ = pad_batch(SEQUENCES, length=12)
    assert longer.shape == (3, 12) and torch.equal(longer[:, :tokens.shape[1]], tokens)
    with pytest.raises(ValueError, match="shorter than the longest"):
        pad_batch(SEQUENCES, length=4)


def test_the_padding_id_is_no_character():
    assert PAD == len(VOCAB)
    assert all(PAD not in s.tolist() for s in SEQUENCES)
    assert VOCAB.decode(SEQUENCES[0]) == TEXTS[0]


def test_padding_mask_makes_each_real_output_that_of_the_sequence_alone():
    tokens, lengths = pad_batch(SEQUENCES)
    embed, mha = (perturb(m, seed) for seed, m in enumerate(padding.make_attention()))
    masked, weights = padding.attend(embed, mha, tokens, lengths)
    unmasked, _ = padding.attend(embed, mha, tokens, None)
    for i, s in enumerate(SEQUENCES):
        alone, _ = padding.attend(embed, mha, s[None], None)
        torch.testing.assert_close(masked[i, :len(s)], alone[0], atol=1e-6, rtol=0)
        # The padding keys get no weight from any query, padding queries included
        assert (weights[i, :, :, len(s):] == 0).all()
        if len(s) < tokens.shape[1]:
            assert (unmasked[i, :len(s)] - alone[0]).abs().max() > 1e-3
        else:
            torch.testing.assert_close(unmasked[i], alone[0], atol=1e-6, rtol=0)


def test_causal_model_with_right_padding_gives_the_real_positions_their_own_logits():
    """The page's claim: under the causal mask, right padding cannot reach a real position."""
    model = perturb(padding.make_model())  # every parameter off its initial value
    tokens, _ = pad_batch(SEQUENCES, length=14)
    with torch.no_grad():
        batched = model(tokens)
        for i, s in enumerate(SEQUENCES):
            torch.testing.assert_close(batched[i, :len(s)], model(s[None])[0], atol=1e-5, rtol=0)


def test_ignore_index_gives_the_one_by_one_loss():
    model = perturb(padding.make_model())  # every parameter off its initial value
    reference = padding.loss_one_by_one(model, SEQUENCES)
    with torch.no_grad():
        for length in (None, 12, 20):
            tokens, _ = pad_batch(SEQUENCES, length=length)
            assert padding.lm_loss(model, tokens).item() == pytest.approx(reference, abs=1e-5)


def test_without_ignore_index_the_loss_counts_the_padding_and_changes_with_it():
    model = perturb(padding.make_model())  # every parameter off its initial value
    reference = padding.loss_one_by_one(model, SEQUENCES)
    counted = []
    with torch.no_grad():
        for length in (None, 12, 20):
            tokens, lengths = pad_batch(SEQUENCES, length=length)
            loss = padding.lm_loss(model, tokens, ignore_padding=False).item()
            # It is the mean over every target, padding included: recompute it by hand
            x, y = tokens[:, :-1], tokens[:, 1:]
            per_target = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten(), reduction="none")
            assert loss == pytest.approx(per_target.mean().item(), abs=1e-6)
            real = (torch.arange(y.shape[1])[None] < (lengths - 1)[:, None]).flatten()
            assert per_target[real].mean().item() == pytest.approx(reference, abs=1e-5)
            counted.append(loss)
    assert all(abs(c - reference) > 1e-3 for c in counted)
    assert abs(counted[0] - counted[2]) > 1e-3


def test_main_runs_its_checks(capsys):
    padding.main()
    assert "all checks passed" in capsys.readouterr().out


def test_figures_are_committed_as_drawn_and_show_the_mask():
    drawn = padding.page_figures()
    assert set(drawn) == {"padding_unmasked.svg", "padding_masked.svg"}
    rendered = figures.render_all()
    for name, svg in drawn.items():
        assert (figures.FIGURE_DIR / name).read_text(encoding="utf-8") == svg == rendered[name]

    def cells(svg):
        root = ET.fromstring(svg)
        return [t.text for t in root.iter(f"{SVG}text") if t.text and t.text[:2] in ("0.", "1.")]

    short = TEXTS.index("is all")
    tokens, lengths = pad_batch(SEQUENCES)
    embed, mha = padding.make_attention()
    for name, lens in (("padding_unmasked.svg", None), ("padding_masked.svg", lengths)):
        _, weights = padding.attend(embed, mha, tokens, lens)
        head = weights[short, 0]
        shown = head if lens is None else head[:, :len(TEXTS[short])]
        assert cells(drawn[name]) == [f"{w:.2f}" for w in shown.flatten().tolist()]
    # Without the mask every one of the 9 queries gives some weight to the 3 padding keys
    assert len(cells(drawn["padding_unmasked.svg"])) == 81
    assert len(cells(drawn["padding_masked.svg"])) == 54
