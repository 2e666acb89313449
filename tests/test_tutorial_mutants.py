"""Held-back bugs: small edits of the tutorial's code that its tests must catch.

Each mutant is one (or two) exact source edits of the kinds a careful reader makes by accident:
the √d_k scaling wrong or missing, heads merged or split in the wrong order, masks off by one or
inverted, dropout applied in evaluation mode, two layer norms or two projections swapped, a
softmax without its max subtraction, a seed ignored, training and validation text overlapping.
The edit is applied to a copy of the package in a temporary folder, and the tests named with it
run in a fresh interpreter whose `PYTHONPATH` puts that copy first. A mutant that survives (its
tests pass) is a hole in the tests.

The cheap test checks that every edit still applies to the current code (each `old` occurs
exactly once), so a mutant cannot silently stop testing anything after the code changes. Running
the mutants is marked `slow` (one forked interpreter per mutant, two at a time, about a second
each; the tests named per mutant are the few that should catch it, and `-x` stops at the first
failure): about 35 s for the 42 mutants and the control on two busy cores.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "source" / "annotated_attention"
T = "tests/"
ATT = T + "test_attention.py::"
SUB = T + "test_tutorial_subtle_bugs.py::"
KV = T + "test_tutorial_kv_cache.py::"
CLAIMS = T + "test_tutorial_claims.py::"
EXP = T + "test_experiment.py::"


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    edits: tuple[tuple[str, str], ...]
    tests: tuple[str, ...]


def m(name: str, file: str, edits: tuple, *tests: str) -> Mutant:
    """One mutant: `edits` is one (old, new) pair or a tuple of them, applied in order."""
    if isinstance(edits[0], str):
        edits = (edits,)
    return Mutant(name, file, tuple(edits), tests)


SCORES = "scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)"
Q_PROJ = "q = self.split_heads(self.query(query))"
K_PROJ = "k = self.split_heads(self.key(key))"
V_PROJ = "v = self.split_heads(self.value(value))"

MUTANTS = [
    # ---- scaling ----
    m("scale by d_k", "mha.py", (SCORES, SCORES.replace("math.sqrt(d_k)", "d_k")),
      ATT + "test_matches_nn_multihead_attention"),
    m("no scaling", "mha.py", (SCORES, SCORES.replace(" / math.sqrt(d_k)", "")),
      ATT + "test_attention_function_matches_scaled_dot_product_attention"),
    m("fused path unscaled", "mha.py",
      ("is_causal=True)", "is_causal=True, scale=1.0)"),
      ATT + "test_fused_path_equals_explicit_path"),
    m("scores page scaled by d", "scores_and_softmax.py",
      ("return s / math.sqrt(q.shape[-1])", "return s / q.shape[-1]"),
      ATT + "test_two_token_example_numbers"),
    # ---- merging and splitting heads ----
    m("merge without transpose", "mha.py",
      ("x.transpose(1, 2).reshape(batch, seq, self.d_model)", "x.reshape(batch, seq, self.d_model)"),
      ATT + "test_matches_nn_multihead_attention"),
    m("merge with the wrong transpose", "mha.py",
      ("x.transpose(1, 2).reshape(batch, seq, self.d_model)", "x.transpose(2, 3).reshape(batch, seq, self.d_model)"),
      ATT + "test_matches_nn_multihead_attention"),
    m("split in the wrong order", "mha.py",
      ("x.view(batch, seq, self.heads, self.d_k).transpose(1, 2)", "x.view(batch, self.heads, seq, self.d_k)"),
      ATT + "test_split_and_merge_heads_are_inverse_and_group_features_by_head"),
    # ---- masks ----
    m("causal mask sees one future token", "mha.py", (".tril()[None]", ".tril(1)[None]"),
      ATT + "test_causal_model_cannot_see_the_future"),
    m("causal mask hides the diagonal", "mha.py", (".tril()[None]", ".tril(-1)[None]"),
      ATT + "test_matches_nn_multihead_attention"),
    m("mask inverted", "mha.py",
      ('scores = scores.masked_fill(~mask, float("-inf"))', 'scores = scores.masked_fill(mask, float("-inf"))'),
      ATT + "test_matches_nn_multihead_attention"),
    m("fused mask inverted", "mha.py",
      ("attn_mask=mask, dropout_p=dropout_p)", "attn_mask=~mask, dropout_p=dropout_p)"),
      ATT + "test_fused_path_equals_explicit_path"),
    m("padding mask keeps one pad", "mha.py",
      ("keep = positions[None, :] < lengths[:, None]", "keep = positions[None, :] <= lengths[:, None]"),
      ATT + "test_mask_helpers"),
    m("empty rows found along the query axis", "mha.py",
      ("empty = ~mask.any(dim=-1, keepdim=True)", "empty = ~mask.any(dim=-2, keepdim=True)"),
      SUB + "test_fully_masked_rows_give_zero_on_both_paths"),
    m("fused causal flag dropped", "mha.py",
      ("dropout_p=dropout_p, is_causal=True)", "dropout_p=dropout_p, is_causal=False)"),
      ATT + "test_fused_path_equals_explicit_path"),
    m("cache mask sees the future", "kv_cache.py", (".tril(past)", ".tril(past + 1)"),
      KV + "test_prompt_in_chunks"),
    # ---- dropout in evaluation mode ----
    m("fused dropout in eval", "mha.py",
      ("dropout_p = self.dropout.p if self.training else 0.0", "dropout_p = self.dropout.p"),
      ATT + "test_dropout_off_in_eval_and_on_in_train"),
    m("attention dropout in eval", "mha.py",
      ("dropped = dropout(weights) if dropout is not None else weights",
       "dropped = F.dropout(weights, dropout.p, training=True) if dropout is not None else weights"),
      ATT + "test_dropout_off_in_eval_and_on_in_train"),
    m("feed-forward dropout in eval", "feed_forward.py",
      ("h = self.dropout(h)", "h = torch.nn.functional.dropout(h, self.dropout.p, training=True)"),
      SUB + "test_dropout_sits_on_the_residual_branches_only", SUB + "test_validation_loss_is_in_eval_mode_and_restores_train_mode"),
    m("residual dropout in eval", "transformer.py",
      ("x = x + self.dropout(self.ff(h))",
       "x = x + torch.nn.functional.dropout(self.ff(h), self.dropout.p, training=True)"),
      SUB + "test_dropout_sits_on_the_residual_branches_only", SUB + "test_validation_loss_is_in_eval_mode_and_restores_train_mode"),
    m("positional-encoding dropout in eval", "positional_encoding.py",
      ("return self.dropout(", "return torch.nn.functional.dropout(training=True, p=self.dropout.p, input="),
      SUB + "test_validation_loss_is_in_eval_mode_and_restores_train_mode", ATT + "test_causal_model_cannot_see_the_future"),
    # ---- swapped norms and parameters ----
    m("norm_ff before attention", "transformer.py", ("h = self.norm_attn(x)", "h = self.norm_ff(x)"),
      ATT + "test_pre_norm_layer_structure"),
    m("the layer's two norms swapped", "transformer.py",
      (("h = self.norm_attn(x)", "h = self.NORM_B(x)"), ("h = self.norm_ff(x)", "h = self.norm_attn(x)"),
       ("h = self.NORM_B(x)", "h = self.norm_ff(x)")),
      ATT + "test_pre_norm_layer_structure"),
    m("final norm replaced by a layer's norm", "transformer.py",
      ("return self.head(self.norm(x))", "return self.head(self.layers[-1].norm_ff(x))"),
      SUB + "test_model_applies_embedding_encoding_layers_final_norm_and_head_in_order"),
    m("W_q and W_k swapped", "mha.py",
      ((Q_PROJ, "q = self.split_heads(self.key(query))"), (K_PROJ, "k = self.split_heads(self.query(key))")),
      ATT + "test_matches_nn_multihead_attention"),
    m("W_k and W_v swapped", "mha.py",
      ((K_PROJ, "k = self.split_heads(self.value(key))"), (V_PROJ, "v = self.split_heads(self.key(value))")),
      ATT + "test_matches_nn_multihead_attention"),
    m("W_v used as W_o", "mha.py",
      ("return self.output(self.merge_heads(x))", "return self.value(self.merge_heads(x))"),
      ATT + "test_matches_nn_multihead_attention"),
    m("cache: the layer's norms swapped", "kv_cache.py",
      (("layer.norm_attn(x), cache, i)", "layer.norm_ff(x), cache, i)"),
       ("x = x + layer.ff(layer.norm_ff(x))", "x = x + layer.ff(layer.norm_attn(x))")),
      KV + "test_cached_logits_equal_full_recomputation_token_by_token"),
    m("cache: W_k used for values", "kv_cache.py",
      ("v = mha.split_heads(mha.value(x))", "v = mha.split_heads(mha.key(x))"),
      KV + "test_cached_logits_equal_full_recomputation_token_by_token"),
    # ---- softmax stability ----
    m("softmax by hand without the max", "scores_and_softmax.py", ("    m = max(row)\n", "    m = 0\n"),
      ATT + "test_scores_page_main_runs_its_assertions"),
    m("softmax over keys without the max", "scores_and_softmax.py",
      ("return torch.softmax(s, dim=-1)", "return s.exp() / s.exp().sum(dim=-1, keepdim=True)"),
      ATT + "test_softmax_over_keys_is_stable_for_large_scores"),
    m("attention softmax without the max", "mha.py",
      ("weights = scores.softmax(dim=-1)", "weights = scores.exp() / scores.exp().sum(dim=-1, keepdim=True)"),
      ATT + "test_attention_is_stable_for_large_scores"),
    m("online softmax without rescaling the sum", "where_next.py",
      ("total = total * torch.exp(m - m_new) + ", "total = total + "),
      T + "test_tutorial_where_next.py::test_online_softmax_equals_softmax_over_the_whole_row"),
    m("online softmax without the max", "where_next.py",
      (("total = total * torch.exp(m - m_new) + torch.exp(s - m_new[..., None]).sum(dim=-1)",
        "total = total + torch.exp(s).sum(dim=-1)"),
       ("return torch.exp(scores - m[..., None]) / total[..., None]", "return torch.exp(scores) / total[..., None]")),
      T + "test_tutorial_where_next.py::test_online_softmax_is_stable_for_large_scores"),
    # ---- seeding ----
    m("model seed ignored", "experiment.py",
      ("torch.manual_seed(cfg.seed)\n", "torch.manual_seed(0)\n"),
      SUB + "test_training_steps_equal_a_hand_written_loop"),
    m("step seed ignores the run's seed", "experiment.py",
      ("torch.manual_seed(step_seed(cfg.seed, rt.rank, step))", "torch.manual_seed(step_seed(0, rt.rank, step))"),
      SUB + "test_training_steps_equal_a_hand_written_loop"),
    m("step seed ignores the step", "experiment.py",
      ("return (seed * 1_000_003 + rank) * 1_000_033 + step", "return (seed * 1_000_003 + rank) * 1_000_033"),
      SUB + "test_vocabulary_order_windows_bits_and_step_seeds"),
    m("generation seed ignored", "experiment.py",
      ("generator = torch.Generator(device=device).manual_seed(seed)\n    # `[1, len(prompt)]`",
       "generator = torch.Generator(device=device).manual_seed(0)\n    # `[1, len(prompt)]`"),
      SUB + "test_generate_depends_on_its_seed_only"),
    m("batch generator ignored", "data.py",
      ("(batch_size,), generator=generator)", "(batch_size,))"),
      T + "test_tutorial_claims.py::test_random_batch_follows_its_generator"),
    # ---- data split ----
    m("validation blocks also trained on", "data.py",
      ("train = [b for i, b in enumerate(blocks) if i % every != every - 1]",
       "train = [b for i, b in enumerate(blocks) if i % every != 0]"),
      T + "test_tutorial_claims.py::test_split_is_disjoint_and_complete"),
    m("training on the whole text", "experiment.py",
      ("train_data, val_data = split(data)", "train_data, val_data = data, split(data)[1]"),
      SUB + "test_training_steps_equal_a_hand_written_loop"),
    m("loss counts the padding", "padding.py",
      ("ignore_index=PAD if ignore_padding else -100)", "ignore_index=-100)"),
      T + "test_tutorial_padding.py::test_ignore_index_gives_the_one_by_one_loss"),
    m("validation windows overlap", "data.py",
      ("return data[: n * (seq_len + 1)].view(n, seq_len + 1)",
       "return data.unfold(0, seq_len + 1, seq_len)[:n]"),
      SUB + "test_vocabulary_order_windows_bits_and_step_seeds"),
]


def apply(text: str, mutant: Mutant) -> str:
    for old, new in mutant.edits:
        assert text.count(old) == 1, f"{mutant.name}: {old!r} occurs {text.count(old)} times in {mutant.file}"
        text = text.replace(old, new)
    return text


def test_every_mutant_still_applies_and_names_existing_tests():
    names = [mu.name for mu in MUTANTS]
    assert len(names) == len(set(names))
    for mu in MUTANTS:
        source = (PACKAGE / mu.file).read_text(encoding="utf-8")
        assert apply(source, mu) != source, mu.name
        for node in mu.tests:
            path, _, func = node.partition("::")
            assert f"def {func}(" in (ROOT / path).read_text(encoding="utf-8"), (mu.name, node)


def copy_with(folder: Path, mutant: Mutant | None) -> Path:
    """A copy of the package in `folder`, with the mutant's edits applied."""
    target = folder / "annotated_attention"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    if mutant is not None:
        path = target / mutant.file
        path.write_text(apply(path.read_text(encoding="utf-8"), mutant), encoding="utf-8")
    return folder


# ## The runner
#
# An interpreter per mutant would import torch and pytest each time (about 3 s here). Instead one
# interpreter imports them once and forks a child per mutant; the child puts its copy of the
# package first on `sys.path`, runs the named tests with `pytest.main` and exits with its status.
# The parent has computed nothing with torch before forking (no thread pool to inherit).

def run_all(jobs: list[dict]) -> list[int]:
    # What the tests import, once for every child (nothing of the package itself)
    import torch
    import torch.distributed  # noqa: F401
    import torch.multiprocessing  # noqa: F401
    import torch.nn.functional  # noqa: F401
    import torch.testing  # noqa: F401
    import tqdm  # noqa: F401

    # One thread, so that the small warm-up below starts no thread pool for the children to inherit
    torch.set_num_threads(1)
    (torch.randn(4, 4) @ torch.randn(4, 4)).softmax(-1).sum().item()

    # Two children at a time (each runs one thread): the machines this runs on have two cores or more.
    width = min(2, os.cpu_count() or 1)
    statuses: list[int] = [0] * len(jobs)
    running: dict[int, int] = {}
    for index, job in enumerate(jobs):
        while len(running) >= width:
            pid, status = os.wait()
            statuses[running.pop(pid)] = os.waitstatus_to_exitcode(status)
        pid = os.fork()
        if pid == 0:
            status = 3
            try:
                sys.path.insert(0, job["folder"])
                os.chdir(ROOT)
                with open(job["log"], "w") as log:
                    os.dup2(log.fileno(), 1)
                    os.dup2(log.fileno(), 2)
                    # Plain asserts and no hypothesis plugin: rewriting the asserts of every
                    # imported test module, and hypothesis' import, were 3/4 of a child's time.
                    status = int(pytest.main(["-q", "-x", "--tb=line", "--assert=plain", "-p", "no:cacheprovider",
                                              "-p", "no:xdist", "-p", "no:hypothesispytest", "--no-header",
                                              *job["tests"]]))
                    import annotated_attention
                    if not annotated_attention.__file__.startswith(job["folder"]):
                        print(f"imported {annotated_attention.__file__}, not the copy")
                        status = 99
            finally:
                sys.stdout.flush()
                os._exit(status)
        running[pid] = index
    while running:
        pid, status = os.wait()
        statuses[running.pop(pid)] = os.waitstatus_to_exitcode(status)
    return statuses


@pytest.mark.slow
def test_every_mutant_is_caught_and_the_plain_copy_passes(tmp_path):
    """The control (the plain copy) must pass every named test, so that a failure under a
    mutant is the mutant's doing; each mutant must make one of its tests fail (status 1: 2 would
    be an interrupted run, 4 a usage error, 5 no test collected)."""
    jobs = []
    for i, mutant in enumerate([None, *MUTANTS]):
        folder = copy_with(tmp_path / str(i), mutant)
        tests = sorted({t for mu in MUTANTS for t in mu.tests}) if mutant is None else list(mutant.tests)
        jobs.append({"folder": str(folder), "tests": tests, "log": str(tmp_path / f"{i}.log")})
    spec = tmp_path / "jobs.json"
    spec.write_text(json.dumps(jobs), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, __file__, str(spec)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    statuses = json.loads(done.stdout.strip().splitlines()[-1])
    log = lambda i: Path(jobs[i]["log"]).read_text(encoding="utf-8")[-1500:]
    assert statuses[0] == 0, "the plain copy fails:\n" + log(0)
    survivors = [f"{mu.name} (status {st}): {mu.tests}\n{log(i + 1)}"
                 for i, (mu, st) in enumerate(zip(MUTANTS, statuses[1:])) if st != 1]
    assert not survivors, "\n\n".join(survivors)


if __name__ == "__main__":
    print(json.dumps(run_all(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8")))))
