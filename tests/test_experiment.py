"""The training experiment: learning, checkpoints, exact resuming, and DDP on the CPU."""
import math
import os
import socket
from dataclasses import replace

import pytest
import torch
import torch.multiprocessing as mp

from annotated_attention import data
from annotated_attention.experiment import TrainConfig, learning_rate, load_checkpoint, parse_args, train


def tiny(tmp_path, **overrides) -> TrainConfig:
    cfg = TrainConfig(steps=30, batch_size=8, seq_len=32, lr=1e-2, warmup=5, eval_every=10,
                      d_model=32, heads=2, layers=1, d_ff=64, dropout=0.1, device="cpu",
                      checkpoint=str(tmp_path / "ckpt" / "attention.pt"), sample_len=0)
    return replace(cfg, **overrides)


def flat_params(model: torch.nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def test_data_vocabulary_split_and_entropy():
    text = data.load_text()
    assert "class MultiHeadAttention" in text  # it is this package's source
    vocab = data.Vocabulary.from_text(text)
    ids = vocab.encode(text)
    assert vocab.decode(ids) == text
    train_ids, val_ids = data.split(ids, block=100, every=10)
    assert len(train_ids) + len(val_ids) == len(ids)
    assert val_ids[:100].tolist() == ids[900:1000].tolist()  # the 10th block
    # Entropy by the formula, for a hand-made distribution: p = (1/2, 1/4, 1/4).
    h = data.unigram_entropy(torch.tensor([0, 0, 1, 2]), 4)
    assert h == pytest.approx(-(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)))
    x, y = data.random_batch(ids, 4, 16, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 16)
    assert torch.equal(x[:, 1:], y[:, :-1])  # targets are the inputs shifted by one


def test_learning_rate_schedule():
    cfg = TrainConfig(steps=100, lr=1.0, warmup=10, min_lr_ratio=0.1)
    assert learning_rate(0, cfg) == pytest.approx(0.1)
    assert learning_rate(9, cfg) == pytest.approx(1.0)
    assert learning_rate(10, cfg) == pytest.approx(1.0)
    assert learning_rate(55, cfg) == pytest.approx(0.55)
    assert learning_rate(100, cfg) == pytest.approx(0.1)


def test_short_run_learns_saves_and_resumes_exactly(tmp_path):
    # Uninterrupted run of 30 steps
    threads = torch.get_num_threads()
    full = train(tiny(tmp_path / "a", sample_len=20))
    assert torch.get_num_threads() == threads, "train() must restore the thread count"
    assert full.step == 30 and len(full.losses) == 30
    assert full.losses[0] == pytest.approx(math.log(len(full.vocabulary)), abs=0.5)
    assert sum(full.losses[-5:]) / 5 < sum(full.losses[:5]) / 5 - 1.0
    assert full.val_losses[30] < full.val_losses[10]
    assert full.final_val_loss == full.val_losses[30]
    assert full.sample.startswith("def ") and len(full.sample) == 4 + 20

    ckpt = load_checkpoint(tmp_path / "a" / "ckpt" / "attention.pt", torch.device("cpu"))
    assert ckpt["step"] == 30
    assert ckpt["vocabulary"] == full.vocabulary.chars
    assert ckpt["model_config"]["d_model"] == 32 and ckpt["train_config"]["steps"] == 30
    assert ckpt["optimizer"]["state"], "the optimizer state (Adam moments) must be saved"

    # The same run, interrupted after step 15 ...
    cfg = tiny(tmp_path / "b")
    first = train(cfg, stop_at=15)
    assert first.step == 15
    saved = load_checkpoint(tmp_path / "b" / "ckpt" / "attention.pt", torch.device("cpu"))
    assert saved["step"] == 15
    for name, tensor in first.model.state_dict().items():
        assert torch.equal(saved["model"][name], tensor), name
    # ... and resumed: the step continues from 15, and the result is the uninterrupted run's.
    second = train(replace(cfg, resume=True))
    assert second.step == 30 and len(second.losses) == 15
    assert second.losses == pytest.approx(full.losses[15:], abs=1e-5)
    torch.testing.assert_close(flat_params(second.model), flat_params(full.model), rtol=0, atol=1e-6)


def test_resume_without_checkpoint_says_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match="run once without --resume"):
        train(tiny(tmp_path, resume=True))


def test_command_line_flags_map_to_the_config():
    cfg = parse_args(["--steps", "7", "--seed", "3", "--device", "cpu", "--checkpoint", "x.pt",
                      "--resume", "--batch-size", "4", "--no-fused", "--threads", "0"])
    assert (cfg.steps, cfg.seed, cfg.device, cfg.checkpoint) == (7, 3, "cpu", "x.pt")
    assert cfg.resume and not cfg.fused and cfg.batch_size == 4 and cfg.threads == 0
    assert parse_args([]) == TrainConfig()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ddp_worker(rank: int, world_size: int, port: int, cfg: TrainConfig, out_dir: str) -> None:
    # What torchrun would set for each process
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size))
    torch.set_num_threads(1)
    result = train(cfg)
    torch.save({"params": flat_params(result.model), "losses": result.losses,
                "final": result.final_val_loss}, os.path.join(out_dir, f"rank{rank}.pt"))


def test_two_process_ddp_on_cpu_keeps_replicas_in_sync(tmp_path):
    cfg = tiny(tmp_path, steps=4, eval_every=100)
    mp.spawn(_ddp_worker, args=(2, _free_port(), cfg, str(tmp_path)), nprocs=2, join=True)
    r0 = torch.load(tmp_path / "rank0.pt")
    r1 = torch.load(tmp_path / "rank1.pt")
    # Both replicas hold the same parameters after 4 steps ...
    torch.testing.assert_close(r0["params"], r1["params"], rtol=0, atol=1e-6)
    # ... even though they trained on different batches ...
    assert r0["losses"] != r1["losses"]
    # ... and the parameters did move away from the common initialisation.
    torch.manual_seed(cfg.seed)
    from annotated_attention.transformer import DecoderOnlyTransformer
    initial = DecoderOnlyTransformer(cfg.model_config(len(data.Vocabulary.from_text(data.load_text()))))
    assert not torch.allclose(flat_params(initial), r0["params"])
    # Only rank 0 evaluates and saves.
    assert math.isfinite(r0["final"]) and math.isnan(r1["final"])
    assert load_checkpoint(tmp_path / "ckpt" / "attention.pt", torch.device("cpu"))["step"] == 4
