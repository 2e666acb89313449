"""Build speed at scale: a generated ~250-file annotated repository in four languages, against Pycco.

    python benchmarks/build_bench.py [--quick] [--files N] [--runs 3] [--keep DIR] [--seed 7]

Generates (deterministically, from --seed) a corpus shaped like a real annotated-paper repository:
nested folders with an `__init__.py` each, files of about 175 lines whose comments and docstrings
are dense with inline and display math, code spans, links and lists, front matter, and complete,
valid translation files for zh, ru and ja (keys computed with the builder's own
`labml_site.pages.analyse`, values the same HTML with every text run marked by its language, so
every placeholder and tag is kept). Then measures, median of --runs runs, each build in a fresh
interpreter the way a user runs it:

* cold: a full four-language build with an empty cache (the cache and the site deleted first);
* unchanged: the same build again with nothing changed;
* one edit: the same build after one file's prose changed;
* pycco: `pycco -p -d OUT files…` on the same files, English only (the reference);
* serve: in one long-lived process, the time from saving a file to the rebuilt page on disk and
  the reload endpoint bumped (what the browser's polling script waits for).

Prints wall seconds (interpreter start included), the builder's own seconds, pages per second, peak
memory, the cold/Pycco ratio, and whether each goal is met. Exits 0 either way: speed goals live
here, not in timed tests.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LANGS = ("en", "zh", "ru", "ja")
MARKERS = {"zh": "【中】", "ru": "[ру] ", "ja": "【日】"}

GOAL_RATIO = 1.0  # cold 4-language build / Pycco English-only build
GOAL_UNCHANGED_S = 1.0  # wall, interpreter start included
GOAL_ONE_EDIT_S = 0.5  # plus interpreter start
GOAL_PEAK_MB = 500.0
GOAL_SERVE_S = 0.5

# ---------------------------------------------------------------------------------------------
# Corpus

WORDS = (
    "attention layer token sequence query key value head projection residual normalization gradient "
    "weight bias embedding position softmax logits batch dimension scale mask dropout feature vector "
    "matrix model training loss optimizer step update memory cache kernel channel filter stride block "
    "encoder decoder transformer network output input hidden state recurrent convolution pooling sample "
    "noise diffusion score energy policy reward critic actor agent environment trajectory buffer"
).split()
TOPICS = (
    "transformers diffusion gan rl normalization optimizers activations capsule graphs hypernetworks "
    "lstm resnet unet vit sketch_rnn recurrent_highway compressive feedback switch fnet"
).split()
SUBTOPICS = "basic xl rope alibi mlm gmlp aft primer retro hour_glass vq ddpm dcgan ppo dqn adam".split()
SYMBOLS = ("x", "y", "h", "z", "W", "Q", "K", "V", "\\theta", "\\alpha", "\\beta", "\\sigma", "\\mu", "\\epsilon")
PAPER_URLS = ("https://arxiv.org/abs/{n}.{m}", "https://papers.nips.cc/paper/{n}", "https://openreview.net/forum?id={n}")


class Writer:
    """Random prose, math and code for one file, deterministic from the seed."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def sym(self) -> str:
        s = self.rng.choice(SYMBOLS)
        r = self.rng.random()
        if r < 0.3:
            return f"{s}_{{{self.rng.choice('tijkl')}}}"
        if r < 0.45:
            return f"{s}^{{({self.rng.randint(1, 9)})}}"
        if r < 0.55:
            return f"\\mathbf{{{self.rng.choice('xyzhWQKV')}}}"
        return s

    def formula(self) -> str:
        r = self.rng.randrange(8)
        a, b, c = self.sym(), self.sym(), self.sym()
        if r == 0:
            return f"{a} = {b} + {c}"
        if r == 1:
            return f"\\frac{{{a}}}{{\\sqrt{{d_{{{self.rng.choice('kvh')}}}}}}}"
        if r == 2:
            return f"\\sum_{{i=1}}^{{{self.rng.choice('NnTd')}}} {a} {b}"
        if r == 3:
            return f"\\operatorname{{softmax}}\\Big({a} {{{b}}}^\\top\\Big)"
        if r == 4:
            return f"{a} \\leftarrow {a} - \\eta \\nabla {b}"
        if r == 5:
            return f"\\log p({a} \\mid {b}) \\le {c}"
        if r == 6:
            return f"\\mathbb{{E}}\\big[{a} \\cdot {b}\\big]"
        return f"{a} \\in \\mathbb{{R}}^{{{self.rng.randint(2, 512)} \\times d}}"

    def sentence(self) -> str:
        parts = [self.words(self.rng.randint(4, 9)).capitalize()]
        for _ in range(self.rng.randint(1, 3)):
            r = self.rng.random()
            if r < 0.35:
                parts.append(f"${self.formula()}$")
            elif r < 0.6:
                parts.append(f"`{self.rng.choice(WORDS)}_{self.rng.choice(WORDS)}`")
            elif r < 0.72:
                url = self.rng.choice(PAPER_URLS).format(n=self.rng.randint(1000, 2400), m=self.rng.randint(10000, 99999))
                parts.append(f"[{self.words(2)}]({url})")
            elif r < 0.8:
                parts.append(f"**{self.words(2)}**")
            parts.append(self.words(self.rng.randint(3, 8)))
        return " ".join(parts) + "."

    def paragraph(self, width: int = 96) -> list[str]:
        text = " ".join(self.sentence() for _ in range(self.rng.randint(2, 4)))
        return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)

    def prose(self, blocks: int) -> list[str]:
        """Markdown lines: paragraphs, display math, lists, separated by blank lines."""
        out: list[str] = []
        for i in range(blocks):
            if i:
                out.append("")
            r = self.rng.random()
            if r < 0.55:
                out.extend(self.paragraph())
            elif r < 0.75:
                out.append(f"$${self.formula()}$$")
            else:
                for _ in range(self.rng.randint(2, 4)):
                    out.append(f"* {self.sentence()}")
        return out


def _comment(lines: list[str], indent: str) -> list[str]:
    return [f"{indent}# {l}".rstrip() if l else f"{indent}#" for l in lines]


def _docstring(lines: list[str], indent: str) -> list[str]:
    return [f'{indent}r"""'] + [f"{indent}{l}".rstrip() for l in lines] + [f'{indent}"""']


def make_file(w: Writer, title: str, siblings: list[str], target_lines: int = 140) -> str:
    """One annotated module of about `target_lines` lines."""
    head = [
        'r"""',
        "---",
        f"title: {title}",
        f"summary: {w.words(10).capitalize()}.",
        "---",
        "",
        f"# {title}",
        "",
        *w.paragraph(),
        "",
        f"$${w.formula()}$$",
        "",
    ]
    if siblings:
        head += [f"See also [{s.replace('_', ' ')}]({s}.html) for {w.words(3)}." for s in siblings[:2]]
        head.append("")
    head += [f"* {w.sentence()}" for _ in range(3)]
    head += ['"""', "", "import math", "from typing import Optional", "", "import torch", "from torch import nn", "", ""]
    lines = head
    n = 0
    while len(lines) < target_lines - 20:
        n += 1
        cls = f"{w.rng.choice(WORDS).capitalize()}{w.rng.choice(WORDS).capitalize()}{n}"
        lines += _comment([f"## {w.words(3).capitalize()}", "", *w.prose(2)], "")
        lines.append(f"class {cls}(nn.Module):")
        lines += _docstring([*w.prose(2), "", f":param d_model: {w.words(5)}", f":param heads: {w.words(4)}"], "    ")
        lines += [
            "",
            "    def __init__(self, d_model: int, heads: int, dropout: float = 0.1):",
            "        super().__init__()",
        ]
        lines += _comment(w.paragraph(88), "        ")
        lines += [
            "        self.linear = nn.Linear(d_model, heads * d_model)",
            "        self.dropout = nn.Dropout(dropout)",
            "        self.scale = 1 / math.sqrt(d_model)",
            "",
            "    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:",
        ]
        lines += _docstring([*w.prose(1), "", f"* `x` has shape `[seq_len, batch_size, d_model]`", f"* `mask` {w.words(4)}"], "        ")
        for _ in range(w.rng.randint(2, 4)):
            lines += _comment(w.paragraph(88)[:3], "        ")
            var = w.rng.choice(("scores", "attn", "h", "out", "z"))
            lines.append(f"        {var} = torch.einsum('ibhd,jbhd->ijbh', x, x) * self.scale  # {w.words(3)}")
            lines.append(f"        {var} = self.dropout({var}.softmax(dim=-1))")
            lines.append("")
        lines += _comment([f"Return ${w.formula()}$"], "        ")
        lines += ["        return self.linear(x)", "", ""]
    lines += _comment(w.paragraph(), "")
    lines += ["def _test():", "    model = nn.Linear(4, 4)", "    print(model(torch.zeros(2, 4)).shape)", "", "", 'if __name__ == "__main__":', "    _test()"]
    return "\n".join(lines) + "\n"


def layout(n_files: int, rng: random.Random) -> list[str]:
    """Paths under the source folder: folders nested two or three deep, `__init__.py` in each."""
    paths: list[str] = ["labml_nn/__init__.py"]
    folders: list[str] = []
    for topic in TOPICS:
        folders.append(f"labml_nn/{topic}")
        for sub in rng.sample(SUBTOPICS, 2):
            folders.append(f"labml_nn/{topic}/{sub}")
    for folder in folders:
        paths.append(f"{folder}/__init__.py")
    i = 0
    while len(paths) < n_files:
        folder = folders[i % len(folders)]
        paths.append(f"{folder}/{rng.choice(WORDS)}_{rng.choice(WORDS)}_{i}.py")
        i += 1
    return sorted(paths[:n_files])


def mark_text(html_key: str, marker: str) -> str:
    """A valid "translation": every text run between tags gets the language marker; tags,
    placeholders and surrounding whitespace are unchanged."""
    import re

    out = []
    for part in re.split(r"(<span translate=no>_\^_\d+_\^_</span>|<[^>]+>)", html_key):
        if part.startswith("<") or not part.strip():
            out.append(part)
            continue
        lead = part[: len(part) - len(part.lstrip())]
        out.append(lead + marker + part.lstrip())
    return "".join(out)


def generate(root: Path, n_files: int, seed: int) -> tuple[Path, Path, list[str]]:
    """Write the corpus and its zh/ru/ja translations under `root`; return (source, translations, rels)."""
    from labml_site.pages import analyse

    rng = random.Random(seed)
    src, tr = root / "source", root / "translations"
    rels = layout(n_files, rng)
    by_folder: dict[str, list[str]] = {}
    for rel in rels:
        by_folder.setdefault(os.path.dirname(rel), []).append(os.path.splitext(os.path.basename(rel))[0])
    for rel in rels:
        w = Writer(random.Random(f"{seed}:{rel}"))
        folder = os.path.dirname(rel)
        stem = os.path.splitext(os.path.basename(rel))[0]
        title = (os.path.basename(folder) if stem == "__init__" else stem).replace("_", " ").title()
        siblings = [s for s in by_folder[folder] if s not in (stem, "__init__")]
        text = make_file(w, title, siblings)
        path = src / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        keys = analyse(rel, rel, text).keys
        for lang, marker in MARKERS.items():
            out = tr / f"{os.path.splitext(rel)[0]}.{lang}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({k: mark_text(k, marker) for k in keys}, ensure_ascii=False, indent=1), encoding="utf-8")
    return src, tr, rels


def edit_one(src: Path, rel: str, n: int) -> None:
    """Change one paragraph of prose, as an author does."""
    path = src / rel
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("# Return $", f"# Edited {n}: return $", 1), encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Measuring

# Runs one build in a fresh interpreter, like `python build.py …`, and reports its own figures.
DRIVER = r"""
import json, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from labml_site.builder import BuildConfig, build
from pathlib import Path
src, tr, out, langs, jobs = sys.argv[2:7]
result = build(BuildConfig(Path(src), Path(tr), Path(out), langs=tuple(langs.split(",")), base_lang="en", jobs=int(jobs)))
stats = getattr(result, "cache_stats", None)
print(json.dumps({
    "build_s": result.seconds,
    "total_s": time.perf_counter() - t0,
    "pages": len(result.pages),
    "errors": [f.format() for f in result.report.errors][:5],
    "findings": len(result.report.findings),
    "files_written": result.files_written,
    "self_maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "children_maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    "stats": stats.__dict__ if stats is not None else None,
}))
"""


def run_build(src: Path, tr: Path, out: Path, jobs: int = 0) -> dict:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(ROOT), str(src), str(tr), str(out), ",".join(LANGS), str(jobs)],
        capture_output=True, text=True, check=False,
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"build failed:\n{proc.stderr[-4000:]}")
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    figures["wall_s"] = wall
    workers = jobs or (os.cpu_count() or 1)
    # ru_maxrss is per process: the main process plus, at worst, every worker at its own peak.
    child = figures["children_maxrss_kb"]
    figures["peak_mb"] = (figures["self_maxrss_kb"] + (child * workers if child else 0)) / 1024
    return figures


def run_pycco(src: Path, rels: list[str], out: Path) -> float:
    pycco = Path(sys.executable).with_name("pycco")
    cmd = [str(pycco)] if pycco.exists() else [sys.executable, "-c", "from pycco.main import main; main()"]
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    # -p keeps the folder structure (without it, files of the same name overwrite each other).
    proc = subprocess.run([*cmd, "-p", "-d", str(out), *rels], cwd=src, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"pycco failed (pip install -e '.[bench]'):\n{proc.stderr[-3000:]}")
    return wall


def interpreter_start() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def measure_serve(src: Path, tr: Path, out: Path, rel: str, edits: int) -> list[float]:
    """Save → page rebuilt on disk and reload endpoint bumped, through labml_site.serve."""
    import threading
    import urllib.request

    from labml_site.builder import BuildConfig, build
    from labml_site.serve import RELOAD_PATH, make_server, watch_and_rebuild

    config = BuildConfig(src, tr, out, langs=LANGS, base_lang="en")
    build(config)
    server, state = make_server(out, 0)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stop = threading.Event()
    watcher = threading.Thread(target=watch_and_rebuild, args=([src, tr], lambda: build(config), state, stop), daemon=True)
    watcher.start()
    time.sleep(0.5)  # let the watcher start
    page_url = f"http://127.0.0.1:{port}/" + os.path.splitext(rel)[0] + ".html"
    latencies = []
    for n in range(edits):
        before = urllib.request.urlopen(f"http://127.0.0.1:{port}{RELOAD_PATH}").read()
        marker = f"Served edit {n} here"
        path = src / rel
        path.write_text(path.read_text(encoding="utf-8").replace("# Return $", f"# {marker}: return $", 1), encoding="utf-8")
        saved = time.perf_counter()
        while time.perf_counter() - saved < 10:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}{RELOAD_PATH}").read() != before:
                if marker in urllib.request.urlopen(page_url).read().decode():
                    break
            time.sleep(0.005)
        latencies.append(time.perf_counter() - saved)
        time.sleep(0.3)
    stop.set()
    server.shutdown()
    watcher.join(timeout=5)
    return latencies


def cache_dir_of(out: Path) -> Path:
    return out.parent / f".{out.name}-cache"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=250)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=0, help="passed to the builder (0 = its default)")
    parser.add_argument("--quick", action="store_true", help="60 files, one run")
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    parser.add_argument("--no-serve", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.files, args.runs = 60, 1

    work = args.keep or Path(tempfile.mkdtemp(prefix="labml-bench-"))
    if work.exists() and args.keep:
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    try:
        t = time.perf_counter()
        src, tr, rels = generate(work, args.files, args.seed)
        lines = sum((src / r).read_text().count("\n") for r in rels)
        print(f"corpus: {len(rels)} files, {lines} lines ({lines // len(rels)} per file), "
              f"{len(LANGS)} languages; generated in {time.perf_counter() - t:.1f} s; {os.cpu_count()} cores")
        out = work / "site"
        edit_rel = next(r for r in rels if not r.endswith("__init__.py"))

        cold, unchanged, one_edit, pycco = [], [], [], []
        for run in range(args.runs):
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(cache_dir_of(out), ignore_errors=True)
            cold.append(run_build(src, tr, out, args.jobs))
            if cold[-1]["errors"]:
                print("build errors:", *cold[-1]["errors"], sep="\n  ")
            unchanged.append(run_build(src, tr, out, args.jobs))
            edit_one(src, edit_rel, run)
            one_edit.append(run_build(src, tr, out, args.jobs))
            pycco.append(run_pycco(src, rels, work / "pycco"))
        start = statistics.median(interpreter_start() for _ in range(3))

        def med(rows: list[dict], key: str) -> float:
            return statistics.median(r[key] for r in rows)

        pages = cold[0]["pages"] * len(LANGS)
        c_wall, u_wall, e_wall, p_wall = med(cold, "wall_s"), med(unchanged, "wall_s"), med(one_edit, "wall_s"), statistics.median(pycco)
        peak = max(r["peak_mb"] for r in cold + unchanged + one_edit)
        ratio = c_wall / p_wall
        print(f"\nmedian of {args.runs} run(s); wall = fresh interpreter + imports + build; build = the builder's own timer")
        print(f"{'':22}{'wall s':>9}{'build s':>9}{'pages/s':>9}  cache")
        for name, rows in (("cold (4 languages)", cold), ("unchanged rebuild", unchanged), ("one file edited", one_edit)):
            stats = rows[-1].get("stats") or {}
            print(f"{name:22}{med(rows, 'wall_s'):9.2f}{med(rows, 'build_s'):9.2f}{pages / med(rows, 'wall_s'):9.0f}  {stats}")
        print(f"{'pycco (English only)':22}{p_wall:9.2f}{'':9}{cold[0]['pages'] / p_wall:9.0f}")
        print(f"interpreter start: {start:.3f} s; peak memory: {peak:.0f} MB (main + workers, upper bound)")

        serve = []
        if not args.no_serve:
            serve = measure_serve(src, tr, work / "serve-site", edit_rel, 3 if args.runs > 1 else 2)
            print(f"serve: save → rebuilt page + reload signal: {', '.join(f'{s:.2f}' for s in serve)} s")

        goals = [
            (f"cold 4-language build / Pycco English-only = {ratio:.2f} (< {GOAL_RATIO})", ratio < GOAL_RATIO),
            (f"unchanged rebuild {u_wall:.2f} s (< {GOAL_UNCHANGED_S} s)", u_wall < GOAL_UNCHANGED_S),
            (f"one-file rebuild {e_wall - start:.2f} s + interpreter start {start:.2f} s (< {GOAL_ONE_EDIT_S} s + start)", e_wall - start < GOAL_ONE_EDIT_S),
            (f"peak memory {peak:.0f} MB (< {GOAL_PEAK_MB:.0f} MB)", peak < GOAL_PEAK_MB),
        ]
        if serve:
            s = statistics.median(serve)
            goals.append((f"serve: edit visible after {s:.2f} s (< {GOAL_SERVE_S} s)", s < GOAL_SERVE_S))
        print("\ngoals:")
        for text, met in goals:
            print(f"  [{'met' if met else 'MISSED'}] {text}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
