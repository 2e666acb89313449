r"""
---
title: Training a Character-Level Language Model
summary: An annotated training loop for next-character prediction with the small transformer, with checkpoints, resuming, bf16 on GPUs and data-parallel training with DDP.
---

# Training a Character-Level Language Model

This page trains the [decoder-only transformer](transformer.html) to predict the next character
of [this package's own source code](data.html). The loss is the cross-entropy of the true next
character, averaged over all positions:

$$\mathcal{L} = -\frac{1}{B T} \sum_{b=1}^{B} \sum_{t=1}^{T} \log p_\theta(x_{b, t+1} \mid x_{b, 1}, ..., x_{b, t})$$

It is measured in nats. The number to beat is the [unigram entropy](data.html#unigram_entropy) of the text:
the loss of the best model that ignores the context.

## Running it

Install PyTorch, then the project, as the [first page](index.html) says
(`pip install torch==2.13.0 && pip install -e ".[tutorial]"`; on Linux take the CPU build from
PyTorch's index first), and run `python -m annotated_attention.experiment`.
On a CPU with two cores the default run takes under two minutes. It shows a progress bar with
the loss and the speed in tokens per second, prints the validation loss next to the unigram
entropy, saves a checkpoint to `checkpoints/attention.pt` and prints a generated sample.

* `--steps N`: train until step `N`; `--seed S`: change the random seed.
* `--device cpu` or `--device cuda`: the default picks CUDA when it is available. On CUDA the
  model runs in bfloat16 autocast. `--threads N` sets the number of CPU threads (default 1).
* `--checkpoint PATH`, `--resume`: continue from a saved checkpoint. Ctrl-C saves a checkpoint
  before stopping. A resumed run keeps the learning-rate schedule of the run that wrote the
  checkpoint: `--resume --steps 1000` after a 400-step run trains 600 more steps at the final
  learning rate of the cosine (it prints a line that says so); `--schedule-steps 1000` instead
  stretches the schedule to end at step 1000, which raises the learning rate again at step 400.
* `torchrun --nproc_per_node 2 -m annotated_attention.experiment`: data-parallel training with
  two processes (one per GPU with NCCL, or on the CPU with gloo).
"""

import argparse
import contextlib
import math
import os
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from .data import (Vocabulary, load_text, nats_to_bits, random_batch, split, unigram_entropy,
                   validation_windows)
from .transformer import DecoderOnlyTransformer, ModelConfig


@dataclass
class TrainConfig:
    """
    ## Configuration

    The defaults are tuned to finish in under two minutes on two CPU cores while reaching a loss
    far below the unigram entropy.
    """
    # Training stops after this optimizer step
    steps: int = 400
    # The step at which the cosine schedule reaches its end. 0 means `steps` for a new run and,
    # for a resumed run, the schedule stored in the checkpoint
    schedule_steps: int = 0
    # Sequences per step (per process, in a distributed run) and characters per sequence
    batch_size: int = 32
    seq_len: int = 64
    # Peak learning rate, the number of warm-up steps, and the final learning rate as a
    # fraction of the peak
    lr: float = 6e-3
    warmup: int = 40
    min_lr_ratio: float = 0.1
    # AdamW weight decay, applied to weight matrices only
    weight_decay: float = 0.1
    # Gradients are rescaled when their total norm exceeds this
    grad_clip: float = 1.0
    # Evaluate (and save a checkpoint) every this many steps
    eval_every: int = 100
    seed: int = 0
    # `auto`, `cpu`, `cuda` or `cuda:N`
    device: str = "auto"
    # CPU threads for PyTorch; 0 keeps PyTorch's default (one per core). This model's matrices
    # are small, so extra threads gain little and spend much of their time waiting for each
    # other; on a machine that is busy with other work they can make a run several times
    # slower. One thread is the predictable choice; on an idle machine with two cores,
    # `--threads 0` is about a third faster.
    threads: int = 1
    checkpoint: str = "checkpoints/attention.pt"
    resume: bool = False
    # Characters to generate at the end
    sample_len: int = 300
    # The model's size, see [ModelConfig](transformer.html#ModelConfig)
    d_model: int = 128
    heads: int = 4
    layers: int = 2
    d_ff: int = 512
    dropout: float = 0.1
    fused: bool = True

    def model_config(self, vocab_size: int) -> ModelConfig:
        return ModelConfig(vocab_size=vocab_size, d_model=self.d_model, heads=self.heads,
                           layers=self.layers, d_ff=self.d_ff, max_len=self.seq_len,
                           dropout=self.dropout, fused=self.fused)


@dataclass
class Result:
    """What `train` returns: the model, the numbers we report and the time it took."""
    model: nn.Module
    vocabulary: Vocabulary
    step: int
    # Training loss and learning rate of each step run in this call, and the validation losses
    # by step
    losses: list[float]
    lrs: list[float]
    val_losses: dict[int, float]
    unigram_entropy: float
    # Validation loss at the end (computed on rank 0 only; `nan` on other ranks)
    final_val_loss: float
    wall_time: float
    # Training throughput over all processes, not counting evaluation
    tokens_per_s: float = 0.0
    sample: str = ""


# ## Devices and processes
#
# `torchrun` starts one process per device and tells each process who it is through environment
# variables: `WORLD_SIZE` (the number of processes), `RANK` (this process, from 0) and
# `LOCAL_RANK` (this process on this machine, used to choose the GPU). When they are missing, we
# are a single ordinary process.
@dataclass
class Runtime:
    device: torch.device
    rank: int = 0
    world_size: int = 1

    @property
    def is_main(self) -> bool:
        # Only rank 0 prints and writes files; otherwise every process would do it.
        return self.rank == 0


def pick_device(name: str) -> torch.device:
    """`auto` means CUDA when PyTorch sees a GPU, the CPU otherwise."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda was given but PyTorch sees no GPU: use --device cpu")
    return device


def setup(device_name: str) -> Runtime:
    """
    ### Starting the process group

    In a distributed run, every process joins a *process group*, the set of processes that
    exchange gradients. NCCL is the backend for NVIDIA GPUs; gloo works on the CPU. The address of
    rank 0 (`MASTER_ADDR`, `MASTER_PORT`) comes from the environment, which `torchrun` sets.
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    device = pick_device(device_name)
    if world_size == 1:
        return Runtime(device)
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    if device.type == "cuda":
        # One GPU per process, chosen by the local rank
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return Runtime(device, rank, world_size)


def autocast(device: torch.device):
    """
    bfloat16 autocast on CUDA: matrix products run in bfloat16, which is about twice as fast as
    float32 on recent GPUs, while operations autocast lists as precision-sensitive, such as the
    explicit path's `softmax` and the loss, run in float32. Not all of them: the fused
    `scaled_dot_product_attention` runs in bfloat16 as a whole, its softmax included.
    bfloat16 has the same exponent range as float32, so unlike float16 it needs no loss
    scaling. On the CPU we keep plain float32.
    """
    if device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def step_seed(seed: int, rank: int, step: int) -> int:
    """
    ### Randomness that survives a restart

    Before every step we reseed PyTorch's random number generator from `(seed, rank, step)`.
    The batch and the dropout pattern of a step then depend only on these three numbers, so:

    * a run resumed from a checkpoint continues exactly as if it had never stopped, and
    * each process of a distributed run draws different batches.
    """
    return (seed * 1_000_003 + rank) * 1_000_033 + step


# ## Learning-rate schedule
#
# A linear warm-up (from `lr / warmup` at the first step to `lr`) avoids large, badly aimed updates while Adam's running estimates of
# the gradient statistics are still poor. After the warm-up the learning rate follows half a
# cosine from the peak down to `min_lr_ratio` times the peak at step `schedule_steps` (the last
# step, unless a resumed run goes on beyond it; then it stays at that final value).
def learning_rate(step: int, cfg: TrainConfig) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    end = cfg.schedule_steps or cfg.steps
    progress = min(1.0, (step - cfg.warmup) / max(1, end - cfg.warmup))
    cosine = 0.5 * (1 + math.cos(math.pi * progress))
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * cosine)


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    """
    ## Optimizer

    AdamW with weight decay on the weight matrices (and the embedding) only. Decaying biases and
    layer-norm gains towards zero does not regularise anything useful; it only fights the
    normalisation. We pick the matrices by their number of dimensions.
    """
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.95))


@torch.no_grad()
def evaluate(model: nn.Module, windows: torch.Tensor, batch_size: int,
             device: torch.device) -> float:
    """
    ## Validation loss

    The mean cross-entropy per character over all validation windows. `model.eval()` turns
    dropout off, and `torch.no_grad()` skips building the autograd graph.

    :param windows: `[n, seq_len + 1]` from [`validation_windows`](data.html#validation_windows)
    """
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for chunk in windows.split(batch_size):
        chunk = chunk.to(device)
        x, y = chunk[:, :-1], chunk[:, 1:]
        with autocast(device):
            logits = model(x)
        # Sum, not mean, so that a smaller last batch gets its proper weight
        total += F.cross_entropy(logits.float().flatten(0, 1), y.flatten(), reduction="sum").item()
        count += y.numel()
    # Back to the caller's mode, whichever it was
    model.train(was_training)
    return total / count


@torch.no_grad()
def generate(model: DecoderOnlyTransformer, vocab: Vocabulary, prompt: str, length: int,
             device: torch.device, temperature: float = 0.8, seed: int = 0) -> str:
    r"""
    ## Sampling text

    Generation runs the model one character at a time. We feed the text so far (at most
    `max_len` characters), take the logits at the last position, and sample the next character
    from $\mathop{softmax}(\text{logits} / \tau)$. A temperature $\tau < 1$ sharpens the
    distribution, which gives fewer odd characters than sampling at $\tau = 1$. The model is put
    in evaluation mode (no dropout) and given back in the mode it came in.
    """
    was_training = model.training
    model.eval()
    generator = torch.Generator(device=device).manual_seed(seed)
    # `[1, len(prompt)]`
    ids = vocab.encode(prompt).to(device)[None, :]
    for _ in range(length):
        context = ids[:, -model.config.max_len:]
        with autocast(device):
            logits = model(context)
        # Logits of the last position only: `[1, vocab_size]`
        probs = (logits[:, -1, :].float() / temperature).softmax(dim=-1)
        # `[1, 1]`
        next_id = torch.multinomial(probs, 1, generator=generator)
        ids = torch.cat([ids, next_id], dim=1)
    model.train(was_training)
    return vocab.decode(ids[0])


def save_checkpoint(path: Path, model: nn.Module, optimizer: torch.optim.Optimizer, step: int,
                    cfg: TrainConfig, vocab: Vocabulary) -> None:
    """
    ## Checkpoints

    A checkpoint holds everything needed to continue: the parameters, the optimizer state
    (Adam's running averages), the step, both configurations and the vocabulary. We write to a
    temporary file and rename it, so an interrupted save never leaves a half-written checkpoint.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
             "model_config": asdict(model.config), "train_config": asdict(cfg),
             "vocabulary": vocab.chars}
    tmp = path.with_name(path.name + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def load_checkpoint(path: Path, device: torch.device) -> dict:
    """`weights_only=True` refuses to unpickle arbitrary objects, so loading a file is safe."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no checkpoint to resume from; run once without --resume "
                                f"or pass --checkpoint PATH")
    return torch.load(path, map_location=device, weights_only=True)


def fix_schedule(cfg: TrainConfig, ckpt: Optional[dict], verbose: bool) -> TrainConfig:
    """
    ### The schedule of a resumed run

    The learning rate at step $t$ depends on where the schedule ends. If a resumed run took that
    end from its own `--steps`, then `--resume --steps 1000` after a 400-step run would jump from
    the end of one cosine back to the middle of a longer one. So the end is fixed when a run
    starts and saved in the checkpoint; a resumed run uses the saved end unless
    `--schedule-steps` is given, and steps beyond the end run at the final learning rate.
    """
    if cfg.schedule_steps:
        return cfg
    saved = ckpt["train_config"] if ckpt else {}
    end = saved.get("schedule_steps") or saved.get("steps") or cfg.steps
    if verbose and ckpt and cfg.steps > end:
        print(f"the learning-rate schedule of the checkpoint ends at step {end}: steps {end} to "
              f"{cfg.steps} run at the final learning rate {cfg.lr * cfg.min_lr_ratio:.2g} "
              f"(pass --schedule-steps {cfg.steps} for a schedule that ends at step {cfg.steps})")
    return replace(cfg, schedule_steps=end)


def train(cfg: TrainConfig, stop_at: Optional[int] = None) -> Result:
    """
    ## The training run

    :param cfg: the configuration
    :param stop_at: stop after this step as if interrupted (the checkpoint is saved; the learning
        rate schedule still runs to `cfg.steps`). The tests use it to check resuming.
    """
    started = time.perf_counter()
    rt = setup(cfg.device)
    threads = torch.get_num_threads()
    if rt.device.type == "cpu" and cfg.threads > 0:
        torch.set_num_threads(cfg.threads)
    try:
        return _train(cfg, rt, stop_at, started)
    finally:
        # Leave the process as we found it (this matters when `train` is called from Python).
        torch.set_num_threads(threads)
        if rt.world_size > 1:
            dist.destroy_process_group()


def _train(cfg: TrainConfig, rt: Runtime, stop_at: Optional[int], started: float) -> Result:
    # ### Data and model
    #
    # When resuming, the vocabulary and the model configuration come from the checkpoint, so
    # that the token ids and the parameter shapes match what was saved.
    checkpoint_path = Path(cfg.checkpoint)
    ckpt = load_checkpoint(checkpoint_path, rt.device) if cfg.resume else None
    cfg = fix_schedule(cfg, ckpt, rt.is_main)
    text = load_text()
    vocab = Vocabulary(ckpt["vocabulary"]) if ckpt else Vocabulary.from_text(text)
    data = vocab.encode(text)
    train_data, val_data = split(data)
    val_windows = validation_windows(val_data, cfg.seq_len)
    entropy = unigram_entropy(data, len(vocab))
    model_cfg = ModelConfig(**ckpt["model_config"]) if ckpt else cfg.model_config(len(vocab))

    # The same seed on every rank gives every process the same initial parameters.
    torch.manual_seed(cfg.seed)
    model = DecoderOnlyTransformer(model_cfg).to(rt.device)
    optimizer = make_optimizer(model, cfg)
    start = 0
    if ckpt:
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start = ckpt["step"]

    # ### Data parallelism
    #
    # `DistributedDataParallel` keeps one full copy of the model in each process. Each process
    # computes gradients on its own batch; during `backward()` DDP averages the gradients of all
    # processes (an *all-reduce*), so every copy takes the same optimizer step and the copies
    # stay identical. The effective batch is `batch_size × world_size` sequences.
    train_model: nn.Module = model
    if rt.world_size > 1:
        train_model = DistributedDataParallel(
            model, device_ids=[rt.device.index] if rt.device.type == "cuda" else None)

    end = cfg.steps if stop_at is None else min(cfg.steps, stop_at)
    if rt.is_main:
        print(f"device {rt.device} × {rt.world_size} process(es), {model.num_parameters():,} "
              f"parameters, vocabulary {len(vocab)}, train {len(train_data):,} / "
              f"validation {len(val_data):,} characters")
        print(f"unigram entropy of the data: {entropy:.3f} nats/char")

    losses: list[float] = []
    lrs: list[float] = []
    val_losses: dict[int, float] = {}
    bar = tqdm(total=cfg.steps, initial=start, disable=not rt.is_main, unit="step",
               dynamic_ncols=True)
    step, train_time, tokens = start, 0.0, 0
    train_model.train()
    try:
        while step < end:
            tick = time.perf_counter()
            # ### One training step
            #
            # Seed, then draw a batch: `x` and `y` are `[batch_size, seq_len]`.
            torch.manual_seed(step_seed(cfg.seed, rt.rank, step))
            x, y = random_batch(train_data, cfg.batch_size, cfg.seq_len)
            x, y = x.to(rt.device), y.to(rt.device)
            lrs.append(learning_rate(step, cfg))
            for group in optimizer.param_groups:
                group["lr"] = lrs[-1]
            # Forward: `[batch_size, seq_len, vocab_size]` logits. `cross_entropy` wants the
            # classes on axis 1 or a flat list of predictions, so we flatten batch and time into
            # `[batch_size * seq_len, vocab_size]` against `[batch_size * seq_len]` targets.
            # `.float()` computes the loss in float32 even when the model ran in bfloat16.
            with autocast(rt.device):
                logits = train_model(x)
            loss = F.cross_entropy(logits.float().flatten(0, 1), y.flatten())
            # Backward (in DDP this also averages the gradients across processes), clip the
            # gradient norm to damp rare large updates, and take the step.
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            optimizer.step()
            step += 1

            # ### Progress
            #
            # `loss.item()` waits for the GPU to finish, so the timing below is honest.
            losses.append(loss.item())
            train_time += time.perf_counter() - tick
            tokens += x.numel() * rt.world_size
            bar.update(1)
            bar.set_postfix(loss=f"{losses[-1]:.3f}", tok_s=f"{tokens / train_time:,.0f}")
            if rt.is_main and (step % cfg.eval_every == 0 or step == end):
                val_losses[step] = evaluate(model, val_windows, cfg.batch_size, rt.device)
                bar.write(f"step {step}: validation loss {val_losses[step]:.3f} nats/char")
                save_checkpoint(checkpoint_path, model, optimizer, step, cfg, vocab)
    except KeyboardInterrupt:
        # Ctrl-C: keep what has been learned, then stop.
        if rt.is_main:
            save_checkpoint(checkpoint_path, model, optimizer, step, cfg, vocab)
            bar.write(f"interrupted: checkpoint at step {step} saved to {checkpoint_path}; "
                      f"continue with --resume")
        raise
    finally:
        bar.close()

    # ### Final report
    #
    # Rank 0 evaluates once more (unless the last step just did), saves, and writes a sample.
    # In a distributed run the other ranks wait at a barrier, so that no process tears down the
    # process group while rank 0 still works.
    final_loss, sample = float("nan"), ""
    if rt.is_main:
        final_loss = val_losses.get(step)
        if final_loss is None:
            final_loss = evaluate(model, val_windows, cfg.batch_size, rt.device)
            save_checkpoint(checkpoint_path, model, optimizer, step, cfg, vocab)
        if cfg.sample_len > 0:
            sample = generate(model, vocab, "def ", cfg.sample_len, rt.device, seed=cfg.seed)
    if rt.world_size > 1:
        dist.barrier()
    return Result(model, vocab, step, losses, lrs, val_losses, entropy, final_loss,
                  time.perf_counter() - started, tokens / max(train_time, 1e-9), sample)


def parse_args(argv: Optional[list[str]] = None) -> TrainConfig:
    """
    ## Command line

    Every field of `TrainConfig` is a flag: `--steps 600`, `--batch-size 16`, `--resume`, and
    `--no-fused` to use the explicit attention path.
    """
    defaults = TrainConfig()
    parser = argparse.ArgumentParser(description="Train a small character-level transformer "
                                                 "on this package's source code.")
    for f in fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        value = getattr(defaults, f.name)
        if isinstance(value, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=value)
        else:
            parser.add_argument(flag, type=type(value), default=value, help=f"default: {value}")
    return TrainConfig(**vars(parser.parse_args(argv)))


def main(argv: Optional[list[str]] = None) -> None:
    cfg = parse_args(argv)
    try:
        result = train(cfg)
    except FileNotFoundError as e:
        # A missing checkpoint or source folder: say what to do, without a traceback.
        raise SystemExit(f"error: {e}") from None
    except KeyboardInterrupt:
        # The checkpoint is already saved; 130 is the usual exit status after Ctrl-C.
        raise SystemExit(130) from None
    if int(os.environ.get("RANK", "0")) == 0:
        gap = result.unigram_entropy - result.final_val_loss
        print(f"\nunigram entropy:       {result.unigram_entropy:.3f} nats/char "
              f"({nats_to_bits(result.unigram_entropy):.2f} bits)")
        print(f"final validation loss: {result.final_val_loss:.3f} nats/char "
              f"({nats_to_bits(result.final_val_loss):.2f} bits), {gap:.3f} nats below the "
              f"unigram entropy")
        print(f"steps: {result.step}, {result.tokens_per_s:,.0f} tokens/s, "
              f"wall time: {result.wall_time:.1f} s, checkpoint: {cfg.checkpoint}")
        if result.sample:
            print(f"\n--- sample ---\n{result.sample}\n--------------")


if __name__ == "__main__":
    main()

# ## Exercises
#
# Break the loop and run `python -m pytest tests/test_experiment.py
# tests/test_tutorial_subtle_bugs.py` to see which test catches it:
#
# 1. Delete `optimizer.zero_grad(set_to_none=True)`.
# 2. Compute the loss against `x` instead of `y`.
# 3. Let `fix_schedule` return `cfg` unchanged, then resume a run with a larger `--steps`.
# 4. Decay every parameter: `p.dim() >= 1` in `make_optimizer`.
#
# <details><summary>Expected answers</summary>
#
# 1. `test_training_steps_equal_a_hand_written_loop` fails: the gradients accumulate from step to
#    step.
# 2. The same test fails: the model then learns to copy its input.
# 3. `test_resume_with_more_steps_keeps_the_schedule` fails: the resumed run would follow a
#    different learning-rate schedule.
# 4. `test_weight_decay_is_applied_to_matrices_only` fails: biases and layer-norm gains are then
#    decayed towards 0.
#
# </details>
