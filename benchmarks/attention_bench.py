"""Speed of the tutorial's attention: explicit path vs fused path (SDPA) vs nn.MultiheadAttention.

Each measurement is one forward and one backward pass of causal self-attention on
`[batch, seq, d_model]` inputs, with the same weights in all three modules. After `--warmup`
untimed runs we time `--repeats` runs of each (taking turns) and report the median in
milliseconds.

    python benchmarks/attention_bench.py                 # CPU here; CUDA (bf16) when present
    python benchmarks/attention_bench.py --seq-lens 128 1024 --device cuda
    python benchmarks/attention_bench.py --markdown      # the table for docs/tutorial.md

Memory is reported two ways. "saved MiB" is what autograd keeps for the backward pass
(`saved_for_backward` in mha.py), on any device; it is what grows with seq² on the explicit path.
On CUDA the runs use bfloat16 autocast and the table adds the peak memory allocated by each
method ("peak MiB"). "×" columns are the growth of the time from the previous (half as long)
sequence length: 4 means quadratic, 2 linear.
"""
from __future__ import annotations

import argparse
import contextlib
import platform
import statistics
import time

import torch
from torch import nn

from annotated_attention.mha import MultiHeadAttention, causal_mask, saved_for_backward


def build(d_model: int, heads: int, device: torch.device):
    torch.manual_seed(0)
    ours = MultiHeadAttention(d_model, heads).to(device)
    ref = nn.MultiheadAttention(d_model, heads, batch_first=True).to(device)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.query.weight, ours.key.weight, ours.value.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.query.bias, ours.key.bias, ours.value.bias]))
        ref.out_proj.weight.copy_(ours.output.weight)
        ref.out_proj.bias.copy_(ours.output.bias)
    return ours, ref


def time_all(fns, device: torch.device, warmup: int, repeats: int) -> list[tuple[float, float]]:
    """Median milliseconds of each function and, on CUDA, its peak memory in MiB.

    The functions take turns within each repeat (in a rotating order), so that a burst of load
    from other processes slows all of them alike instead of skewing one column.
    """
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    peaks = []
    for fn in fns:
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        for _ in range(warmup):
            fn()
        sync()
        peaks.append(torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda"
                     else float("nan"))
    times: list[list[float]] = [[] for _ in fns]
    for r in range(repeats):
        for i in range(len(fns)):
            k = (i + r) % len(fns)
            start = time.perf_counter()
            fns[k]()
            sync()
            times[k].append((time.perf_counter() - start) * 1000)
    return [(statistics.median(t), peak) for t, peak in zip(times, peaks)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--seq-lens", type=int, nargs="+")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--threads", type=int, help="CPU threads (default: PyTorch's choice); "
                        "1 gives steadier numbers on a busy machine")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available()
                          else ("cpu" if args.device == "auto" else args.device))
    cuda = device.type == "cuda"
    seq_lens = args.seq_lens or ([256, 512, 1024, 2048, 4096] if cuda else [64, 128, 256, 512, 1024])
    autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if cuda else contextlib.nullcontext())
    ours, ref = build(args.d_model, args.heads, device)

    where = torch.cuda.get_device_name(device) if cuda else f"{platform.processor() or 'cpu'}, " \
                                                            f"{torch.get_num_threads()} threads"
    print(f"torch {torch.__version__} on {device} ({where}); {'bf16 autocast' if cuda else 'fp32'}; "
          f"batch={args.batch} d_model={args.d_model} heads={args.heads}; causal self-attention, "
          f"forward + backward, median of {args.repeats}")
    names = ["explicit", "fused", "nn.MHA"]
    columns = (["seq"] + [f"{n} ms" for n in names] + ["explicit ×", "fused ×", "explicit/fused"]
               + [f"{n} saved MiB" for n in names] + ([f"{n} peak MiB" for n in names] if cuda else []))
    if args.markdown:
        print("| " + " | ".join(columns) + " |")
        print("|" + " --- |" * len(columns))
    else:
        print("  ".join(f"{c:>14}" for c in columns))
    previous = None
    for seq in seq_lens:
        x = torch.randn(args.batch, seq, args.d_model, device=device, requires_grad=True)
        blocked = ~causal_mask(seq, device=device)[0]  # nn.MultiheadAttention: True = blocked

        def timed(forward):
            def run():
                with autocast:
                    out = forward()
                out.float().sum().backward()
            return run

        # The three forward passes, with the same weights
        fwd = [lambda: ours(x, causal=True, fused=False), lambda: ours(x, causal=True, fused=True),
               lambda: ref(x, x, x, attn_mask=blocked, need_weights=False, is_causal=True)[0]]
        saved = []
        for f in fwd:
            with autocast:
                _, nbytes = saved_for_backward(f)
            saved.append(nbytes / 2**20)
        results = time_all([timed(f) for f in fwd], device, args.warmup, args.repeats)
        times = [t for t, _ in results]
        growth = [t / p if previous else float("nan") for t, p in zip(times[:2], previous or times)]
        row = ([f"{seq}"] + [f"{t:.2f}" for t in times] + [f"{g:.2f}" for g in growth]
               + [f"{times[0] / times[1]:.2f}"] + [f"{m:.1f}" for m in saved]
               + ([f"{m:.0f}" for _, m in results] if cuda else []))
        if args.markdown:
            print("| " + " | ".join(row).replace("nan", "–") + " |", flush=True)
        else:
            print("  ".join(f"{c:>14}" for c in row), flush=True)
        previous = times[:2]


if __name__ == "__main__":
    main()
