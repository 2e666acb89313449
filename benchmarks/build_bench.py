"""Build speed at scale: a generated ~250-file annotated repository in four languages, against Pycco.

    python benchmarks/build_bench.py [--quick] [--files N] [--runs 3] [--keep DIR] [--seed 7]

Generates (deterministically, from --seed) a corpus shaped like a real annotated-paper repository:
nested folders with an `__init__.py` each, files of about 175 lines whose comments and docstrings
are dense with inline and display math, code spans, links and lists, front matter, and complete,
valid translation files for zh, ru and ja (keys computed with the builder's own
`labml_site.pages.analyse`, values the same HTML with every text run marked by its language, so
every placeholder and tag is kept). Then measures, median of --runs runs, each build in a fresh
interpreter the way a user runs it:

* cold: a full four-language build with an empty cache, into a folder of its own;
* unchanged: the same build again with nothing changed;
* one edit: the same build after one file's prose changed;
* pycco: `pycco -p -d OUT files…` on the same files, English only (the reference), into a folder
  of its own;
* cold and pycco again, each right after deleting its previous output (`rm -rf site` and the
  cache), reported but not the goal: on a file system that holds back inodes freed in the last
  minute (ext4 without a journal, as on the VM these figures come from), each file created then
  costs up to a millisecond of kernel time, so this measures the file system's aftermath of the
  deletion as much as the tool; every output folder is otherwise deleted only after measuring;
* serve: in one long-lived process running `labml_site.builder.serve` as `build.py serve` does, the time
  from saving a file to the reload long poll answering with the new page on disk.

Builds run from a private copy of `labml_site/` (its theme included) taken at the start, so edits to the
working tree during a run cannot empty the cache (the builder's own files are part of every key).
Prints wall seconds (interpreter start included), the builder's imports and its own seconds, CPU
seconds of all its processes, pages per second, peak memory (the summed proportional set size of
the build's processes, sampled from /proc, so pages that forked workers share with the main process
count once), the cold/Pycco ratio, and whether each goal is met. Exits 0 either way: speed goals live here, not in timed tests.
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
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LANGS = ("en", "zh", "ru", "ja")
MARKERS = {"zh": "【中】", "ru": "[ру] ", "ja": "【日】"}

# The performance goals (labml_bench.py judges the real corpus by the same ones).
GOAL_RATIO = 0.5  # cold 4-language build / Pycco English-only build
GOAL_UNCHANGED_S = 0.3  # wall, interpreter start included
GOAL_ONE_EDIT_S = 0.4  # plus interpreter start
GOAL_PEAK_MB = 300.0
GOAL_SERVE_S = 0.2

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


def make_file(w: Writer, title: str, siblings: list[str], target_lines: int = 133) -> str:
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
    """Paths under the source folder: folders nested two or three deep, `__init__.py` in each,
    about one folder for every six files."""
    topics = TOPICS[: max(1, min(len(TOPICS), n_files // 18))]
    paths: list[str] = ["labml_nn/__init__.py"]
    folders: list[str] = []
    for topic in topics:
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
    from labml_site.typeset.page import analyse

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


EDIT_RE = r"(?m)^(# [^\n]*?)(?: \(edit \d+\))?$"  # the page's H1, in its module docstring


def edit_one(src: Path, rel: str, n: int) -> None:
    """Change the page's first heading, as an author edits prose (repeatable: edit n replaces
    edit n - 1)."""
    import re

    path = src / rel
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(EDIT_RE, lambda m: f"{m.group(1)} (edit {n})", text, count=1), encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Measuring

# Runs one build in a fresh interpreter, like `python build.py …`, and reports its own figures.
DRIVER = r"""
import json, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from labml_site.builder import build  # (the entry point a user's `build.py` runs)
from labml_site.builder.config import BuildConfig
from labml_site.cli import end  # (and how it ends the process)
from pathlib import Path
t1 = time.perf_counter()
src, tr, out, langs, jobs = sys.argv[2:7]
result = build(BuildConfig(Path(src), Path(tr), Path(out), langs=tuple(langs.split(",")), base_lang="en", jobs=int(jobs)))
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({
    "import_s": t1 - t0,
    "build_s": result.seconds,
    "pages": len(result.pages),
    "errors": [f.format() for f in result.report.errors][:5],
    "findings": len(result.report.findings),
    "files_written": result.files_written,
    "cpu_s": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
    "self_maxrss_kb": me.ru_maxrss,
    "children_maxrss_kb": kids.ru_maxrss,
    "stats": result.stats.__dict__,
}))
end(0)
"""

# Serves a site the way `build.py serve` does, saves one file several times, and reports how long
# each save took to reach the reload endpoint's long poll with the new page on disk.
SERVE_DRIVER = r"""
import json, os, re, sys, threading, time, urllib.request
sys.path.insert(0, sys.argv[1])
EDIT_RE = %r
from pathlib import Path
from labml_site.builder.site import BuildConfig, build
from labml_site.builder.serve import RELOAD_PATH, make_server, watch_and_rebuild
src, tr, out, langs, rel, edits = sys.argv[2:8]
config = BuildConfig(Path(src), Path(tr), Path(out), langs=tuple(langs.split(",")), base_lang="en", live_reload=True)
build(config)
server, state = make_server(config.out, 0)
port = server.server_address[1]
threading.Thread(target=server.serve_forever, daemon=True).start()
stop = threading.Event()
rebuilds = []
watcher = threading.Thread(target=watch_and_rebuild, args=([config.source, config.translations], lambda: rebuilds.append(build(config)), state, stop), daemon=True)
watcher.start()
time.sleep(1.0)  # the watcher starts
base = f"http://127.0.0.1:{port}"
page_url = base + "/" + os.path.splitext(rel)[0] + ".html"
latencies = []
for n in range(int(edits)):
    current = urllib.request.urlopen(base + RELOAD_PATH).read().decode()
    marker = f"(edit {1000 + n})"
    path = Path(src) / rel
    text = re.sub(EDIT_RE, lambda m: m.group(1) + " " + marker, path.read_text(encoding="utf-8"), count=1)
    saved = time.perf_counter()
    path.write_text(text, encoding="utf-8")
    # What the page's script does: a long poll that answers when the build number changes.
    while time.perf_counter() - saved < 60:
        answer = urllib.request.urlopen(f"{base}{RELOAD_PATH}?after={current}").read().decode()
        if answer != current and marker in urllib.request.urlopen(page_url).read().decode():
            break
        current = answer
    latencies.append(time.perf_counter() - saved)
    time.sleep(0.5)
stop.set()
server.shutdown()
print(json.dumps({"latencies": latencies, "rebuild_s": [r.seconds for r in rebuilds], "analysed": [r.stats.analysed for r in rebuilds]}))
""" % EDIT_RE


def _env() -> dict[str, str]:
    # Let the interpreter cache bytecode, as it does on a user's machine (some sandboxes turn it off).
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def snapshot_code(work: Path) -> Path:
    """A private copy of the builder, so edits to the working tree during a run (which change the
    builder's fingerprint and so empty the cache) cannot disturb the measurements."""
    code = work / "code"
    shutil.copytree(ROOT / "labml_site", code / "labml_site", ignore=shutil.ignore_patterns("__pycache__"))
    return code


def _process_tree(pid: int) -> list[int]:
    """The process and its descendants (Linux /proc)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            with open(f"/proc/{current}/task/{current}/children") as f:
                todo.extend(int(child) for child in f.read().split())
        except OSError:
            pass
    return found


def _pss_kb(pid: int) -> int:
    """Proportional set size: the process's private memory plus its share of pages it shares
    (forked workers share most of the parent's), so the sum over processes is the real use."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class MemorySampler(threading.Thread):
    """Samples the summed PSS of a process tree every `interval` seconds; `peak_kb` is the most.
    Where /proc has no smaps_rollup (not Linux), `peak_kb` stays 0."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval, self.peak_kb = pid, interval, 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.peak_kb = max(self.peak_kb, sum(_pss_kb(p) for p in _process_tree(self.pid)))
            self.done.wait(self.interval)


def run_build(code: Path, src: Path, tr: Path, out: Path, jobs: int = 0) -> dict:
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(code), str(src), str(tr), str(out), ",".join(LANGS), str(jobs)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
    )
    sampler = MemorySampler(proc.pid)
    sampler.start()
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - started
    sampler.done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"build failed:\n{stderr[-4000:]}")
    figures = json.loads(stdout.strip().splitlines()[-1])
    figures["wall_s"] = wall
    workers = figures["stats"].get("workers", 1)
    # ru_maxrss is per process: the main process plus every worker at its own peak is an upper
    # bound that counts the pages forked workers share with the main process once per process.
    child = figures["children_maxrss_kb"] if workers > 1 else 0
    figures["rss_bound_mb"] = (figures["self_maxrss_kb"] + child * workers) / 1024
    # The measured peak of the summed PSS counts each shared page once; without /proc, the bound.
    figures["peak_mb"] = sampler.peak_kb / 1024 if sampler.peak_kb else figures["rss_bound_mb"]
    return figures


def run_pycco(src: Path, rels: list[str], out: Path) -> tuple[float, float]:
    """Wall and CPU seconds of `pycco -p -d OUT files…`, run from the source folder."""
    import resource

    pycco = Path(sys.executable).with_name("pycco")
    cmd = [str(pycco)] if pycco.exists() else [sys.executable, "-c", "from pycco.main import main; main()"]
    shutil.rmtree(out, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    # -p keeps the folder structure (without it, files of the same name overwrite each other).
    proc = subprocess.run([*cmd, "-p", "-d", str(out), *rels], cwd=src, capture_output=True, text=True, check=False, env=_env())
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"pycco failed (pip install -e '.[bench]'):\n{proc.stderr[-3000:]}")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def interpreter_start() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=_env())
    return time.perf_counter() - started


def measure_serve(code: Path, src: Path, tr: Path, out: Path, rel: str, edits: int) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", SERVE_DRIVER, str(code), str(src), str(tr), str(out), ",".join(LANGS), rel, str(edits)],
        capture_output=True, text=True, check=False, env=_env(), timeout=600,
    )
    if proc.returncode != 0:
        raise SystemExit(f"serve measurement failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cache_dir_of(out: Path) -> Path:
    from labml_site.builder.cache import cache_dir_for  # (the rule; LABML_SITE_CACHE_DIR is set in main)

    return cache_dir_for(out)


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
    os.environ["LABML_SITE_CACHE_DIR"] = str(work / "caches")  # every build's cache, deleted with the work folder
    try:
        t = time.perf_counter()
        src, tr, rels = generate(work, args.files, args.seed)
        lines = sum((src / r).read_text().count("\n") for r in rels)
        print(f"corpus: {len(rels)} files, {lines} lines ({lines // len(rels)} per file), "
              f"{len(LANGS)} languages; generated in {time.perf_counter() - t:.1f} s; {os.cpu_count()} cores")
        edit_rel = next(r for r in rels if not r.endswith("__init__.py"))
        code = snapshot_code(work)
        subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import labml_site.builder.site, labml_site.builder.cache",
                        str(code)], check=True, env=_env())  # compiles the snapshot's bytecode once

        cold, unchanged, one_edit, pycco = [], [], [], []
        outs = [work / f"run{run}" / "site" for run in range(args.runs)]
        for run, out in enumerate(outs):
            cold.append(run_build(code, src, tr, out, args.jobs))
            if cold[-1]["errors"]:
                print("build errors:", *cold[-1]["errors"], sep="\n  ")
            pycco.append(run_pycco(src, rels, work / f"run{run}" / "pycco"))
            unchanged.append(run_build(code, src, tr, out, args.jobs))
            edit_one(src, edit_rel, run)
            one_edit.append(run_build(code, src, tr, out, args.jobs))
        start = statistics.median(interpreter_start() for _ in range(5))

        def med(rows: list[dict], key: str) -> float:
            return statistics.median(r[key] for r in rows)

        pages = cold[0]["pages"] * len(LANGS)
        c_wall, u_wall, e_wall = med(cold, "wall_s"), med(unchanged, "wall_s"), med(one_edit, "wall_s")
        p_wall, p_cpu = statistics.median(w for w, _ in pycco), statistics.median(c for _, c in pycco)
        peak = max(r["peak_mb"] for r in cold + unchanged + one_edit)
        bound = max(r["rss_bound_mb"] for r in cold + unchanged + one_edit)
        main_peak = max(r["self_maxrss_kb"] for r in cold + unchanged + one_edit) / 1024
        ratio = c_wall / p_wall
        print(f"\nmedian of {args.runs} run(s). wall: a fresh interpreter, imports and the build, as `python build.py` runs;")
        print("import/build: the builder's imports and its own timer; cpu: all processes, user + system")
        print(f"{'':22}{'wall s':>8}{'import':>8}{'build':>8}{'cpu s':>8}{'pages/s':>9}  computed (reused)")
        for name, rows in (("cold (4 languages)", cold), ("unchanged rebuild", unchanged), ("one file edited", one_edit)):
            st = rows[-1]["stats"]
            done = (f"analysed {st['analysed']} ({st['analysis_reused']}), localized {st['localized']} ({st['localization_reused']}), "
                    f"rendered {st['rendered']} ({st['render_reused']}), workers {st['workers']}")
            print(f"{name:22}{med(rows, 'wall_s'):8.2f}{med(rows, 'import_s'):8.2f}{med(rows, 'build_s'):8.2f}"
                  f"{med(rows, 'cpu_s'):8.2f}{pages / med(rows, 'wall_s'):9.0f}  {done}")
        print(f"{'pycco (English only)':22}{p_wall:8.2f}{'':16}{p_cpu:8.2f}{cold[0]['pages'] / p_wall:9.0f}")
        print(f"interpreter start (python -c pass): {start:.3f} s; load average now: {os.getloadavg()[0]:.1f}")
        print(
            f"peak memory: all processes together (summed PSS, sampled every 50 ms) {peak:.0f} MB; main process "
            f"{main_peak:.0f} MB; main + every worker at its own peak RSS (counts shared pages per process) {bound:.0f} MB"
        )

        serve: dict = {}
        if not args.no_serve:
            serve = measure_serve(code, src, tr, work / "serve-site", edit_rel, 5 if args.runs > 1 else 3)
            print(f"serve: save → page rebuilt and the reload long poll answered: "
                  f"{', '.join(f'{s:.2f}' for s in serve['latencies'])} s (rebuilds {', '.join(f'{s:.2f}' for s in serve['rebuild_s'])} s)")

        # Last, as it leaves thousands of freshly freed inodes behind (see the docstring).
        after_rm, pycco_after_rm = [], []
        for run, out in enumerate(outs):
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(cache_dir_of(out), ignore_errors=True)
            after_rm.append(run_build(code, src, tr, out, args.jobs))
            pycco_after_rm.append(run_pycco(src, rels, work / f"run{run}" / "pycco"))  # (run_pycco deletes it first)
        r_wall, rp_wall = med(after_rm, "wall_s"), statistics.median(w for w, _ in pycco_after_rm)
        print(f"right after deleting the previous output: cold {r_wall:.2f} s (cpu {med(after_rm, 'cpu_s'):.2f} s), "
              f"pycco {rp_wall:.2f} s (cpu {statistics.median(c for _, c in pycco_after_rm):.2f} s), ratio {r_wall / rp_wall:.2f} "
              f"(not a goal: see the docstring)")

        goals = [
            (f"cold 4-language build / Pycco English-only = {ratio:.2f} (< {GOAL_RATIO}); cpu ratio {med(cold, 'cpu_s') / p_cpu:.2f}", ratio < GOAL_RATIO),
            (f"unchanged rebuild {u_wall:.2f} s (< {GOAL_UNCHANGED_S} s)", u_wall < GOAL_UNCHANGED_S),
            (f"one-file rebuild {e_wall - start:.2f} s + interpreter start {start:.2f} s (< {GOAL_ONE_EDIT_S} s + start)", e_wall - start < GOAL_ONE_EDIT_S),
            (f"peak memory {peak:.0f} MB (< {GOAL_PEAK_MB:.0f} MB)", peak < GOAL_PEAK_MB),
        ]
        if serve:
            s = statistics.median(serve["latencies"])
            goals.append((f"serve: edit visible {s:.2f} s after the save (< {GOAL_SERVE_S} s)", s < GOAL_SERVE_S))
        print("\ngoals:")
        for text, met in goals:
            print(f"  [{'met' if met else 'MISSED'}] {text}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
