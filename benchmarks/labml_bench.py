"""Build speed on the real corpus: a checkout of nn.labml.ai's sources, in four languages, against Pycco.

    python benchmarks/labml_bench.py PATH [--runs 3] [--langs zh,ja,si] [--jobs 0] [--no-serve]

PATH is a checkout of the annotated paper implementations (`labml_nn/`, the sources, and
`translate_cache/`, their translations). Fetch it outside the project; it is never committed.
It is read only: the script copies both folders into a temporary work folder first, since the
one-edit and `serve` figures change a file.

Measured the way `benchmarks/build_bench.py` measures its generated corpus (its drivers, its
memory sampler and its Pycco run are reused), median of --runs runs, alternated:

* cold: a full build in English and --langs, the cache emptied before each run, into a folder
  of its own (the previous run's output is not deleted just before: see build_bench.py);
* pycco: `pycco -p -d OUT files…` on the same `.py` files, English only (the reference), right
  after each cold build;
* unchanged: the same build again, nothing changed;
* one edit: the same build after one file's first heading changed;
* serve: the time from saving a file to the reload long poll answering with the new page.

Prints the cold/Pycco ratio and whether each goal is met. Exits 0 either way.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import build_bench as bb  # noqa: E402  (the drivers, the sampler, the Pycco run)

GOAL_RATIO, GOAL_UNCHANGED_S, GOAL_ONE_EDIT_S, GOAL_SERVE_S, GOAL_PEAK_MB = (
    bb.GOAL_RATIO, bb.GOAL_UNCHANGED_S, bb.GOAL_ONE_EDIT_S, bb.GOAL_SERVE_S, bb.GOAL_PEAK_MB)

EDIT_FILE = "transformers/mha.py"  # has a `# Title` line in its module docstring (bb.EDIT_RE)


def copy_corpus(checkout: Path, work: Path) -> tuple[Path, Path, list[str]]:
    src, tr = work / "labml_nn", work / "translate_cache"
    shutil.copytree(checkout / "labml_nn", src)
    shutil.copytree(checkout / "translate_cache", tr)
    rels = sorted(str(p.relative_to(src)) for p in src.rglob("*.py"))
    return src, tr, rels


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a checkout with labml_nn/ and translate_cache/")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--langs", default="zh,ja,si", help="the translated languages (English is always built)")
    parser.add_argument("--jobs", type=int, default=0, help="passed to the builder (0 = its default)")
    parser.add_argument("--no-serve", action="store_true")
    parser.add_argument("--no-incremental", action="store_true", help="cold and Pycco only")
    args = parser.parse_args(argv)
    if not (args.checkout / "labml_nn").is_dir() or not (args.checkout / "translate_cache").is_dir():
        parser.error(f"{args.checkout}: needs labml_nn/ and translate_cache/")
    bb.LANGS = ("en", *[lang for lang in args.langs.split(",") if lang and lang != "en"])

    work = Path(tempfile.mkdtemp(prefix="labml-real-bench-"))
    caches = work / "caches"
    os.environ["LABML_SITE_CACHE_DIR"] = str(caches)
    try:
        src, tr, rels = copy_corpus(args.checkout, work)
        lines = sum((src / r).read_text(encoding="utf-8", errors="replace").count("\n") for r in rels)
        print(f"corpus: {len(rels)} .py files, {lines} lines, languages {','.join(bb.LANGS)}; {os.cpu_count()} cores")
        if not re.search(bb.EDIT_RE, (src / EDIT_FILE).read_text(encoding="utf-8")):
            raise SystemExit(f"{EDIT_FILE} has no `# Title` line to edit")
        code = bb.snapshot_code(work)
        subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import labml_site.builder.site",
                        str(code)], check=True, env=bb._env())

        cold, pycco, unchanged, one_edit = [], [], [], []
        for run in range(args.runs):
            out = work / f"run{run}" / "site"
            shutil.rmtree(caches, ignore_errors=True)  # the cache emptied before each cold run
            cold.append(bb.run_build(code, src, tr, out, args.jobs))
            if cold[-1]["errors"]:
                print("build errors:", *cold[-1]["errors"], sep="\n  ")
            pycco.append(bb.run_pycco(src, rels, work / f"run{run}" / "pycco"))
            print(f"  run {run + 1}: cold {cold[-1]['wall_s']:.2f} s (cpu {cold[-1]['cpu_s']:.2f}), "
                  f"pycco {pycco[-1][0]:.2f} s (cpu {pycco[-1][1]:.2f})", flush=True)
            if not args.no_incremental:
                unchanged.append(bb.run_build(code, src, tr, out, args.jobs))
                bb.edit_one(src, EDIT_FILE, run)
                one_edit.append(bb.run_build(code, src, tr, out, args.jobs))
        start = statistics.median(bb.interpreter_start() for _ in range(5))

        def med(rows: list[dict], key: str) -> float:
            return statistics.median(r[key] for r in rows)

        c_wall = med(cold, "wall_s")
        p_wall, p_cpu = statistics.median(w for w, _ in pycco), statistics.median(c for _, c in pycco)
        ratio = c_wall / p_wall
        rows = [("cold", cold), ("unchanged rebuild", unchanged), ("one file edited", one_edit)]
        print(f"\nmedian of {args.runs} run(s), alternated with Pycco; wall includes interpreter start and imports")
        print(f"{'':22}{'wall s':>8}{'import':>8}{'build':>8}{'cpu s':>8}  computed")
        for name, got in rows:
            if not got:
                continue
            st = got[-1]["stats"]
            done = (f"analysed {st['analysed']}, localized {st['localized']}, rendered {st['rendered']}, "
                    f"workers {st['workers']}")
            print(f"{name:22}{med(got, 'wall_s'):8.2f}{med(got, 'import_s'):8.2f}{med(got, 'build_s'):8.2f}{med(got, 'cpu_s'):8.2f}  {done}")
        print(f"{'pycco (English only)':22}{p_wall:8.2f}{'':16}{p_cpu:8.2f}")
        peak = max(r["peak_mb"] for r in cold + unchanged + one_edit)
        print(f"interpreter start {start:.3f} s; peak memory (summed PSS) {peak:.0f} MB; load average {os.getloadavg()[0]:.1f}")

        goals = [(f"cold / Pycco English-only = {ratio:.2f} (≤ {GOAL_RATIO}); cpu ratio {med(cold, 'cpu_s') / p_cpu:.2f}", ratio <= GOAL_RATIO)]
        if unchanged:
            u_wall, e_wall = med(unchanged, "wall_s"), med(one_edit, "wall_s")
            goals += [
                (f"unchanged rebuild {u_wall:.2f} s (≤ {GOAL_UNCHANGED_S} s)", u_wall <= GOAL_UNCHANGED_S),
                (f"one-file rebuild {e_wall - start:.2f} s + start {start:.2f} s (≤ {GOAL_ONE_EDIT_S} s + start)",
                 e_wall - start <= GOAL_ONE_EDIT_S),
            ]
        goals.append((f"peak memory {peak:.0f} MB (≤ {GOAL_PEAK_MB:.0f} MB)", peak <= GOAL_PEAK_MB))
        if not args.no_serve:
            serve = bb.measure_serve(code, src, tr, work / "serve-site", EDIT_FILE, 5 if args.runs > 1 else 3)
            s = statistics.median(serve["latencies"])
            print(f"serve: save → reload answered {', '.join(f'{x:.2f}' for x in serve['latencies'])} s")
            goals.append((f"serve: edit visible {s:.2f} s after the save (≤ {GOAL_SERVE_S} s)", s <= GOAL_SERVE_S))
        print("\ngoals:")
        for text, met in goals:
            print(f"  [{'met' if met else 'MISSED'}] {text}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
