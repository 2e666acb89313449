#!/usr/bin/env python3
"""How often is a `glossary-term` warning real? Precision on a hand-labelled sample, and recall
on errors seeded into the shipped tutorial.

    python benchmarks/glossary_precision.py [--corpus /work/corpus] [--show-unlabelled N]

- **tutorial**: the shipped translations against the shipped glossaries (all warnings).
- **corpus zh, corpus ja**: the real annotated-paper corpus's `translate_cache/` (its keys are
  the English, its values the translations) against the glossaries below, written for this
  benchmark as a translator of that corpus would (a term's accepted translations; no corpus
  data is copied). Each warning gets a stable id; a sample is the warnings whose id hashes
  into a fixed part of the space (`SAMPLES`), so it neither moves nor grows when other warnings
  come or go. Each sampled warning was judged by reading the English and the translation:
  `benchmarks/data/glossary_labels.json` says whether it is real (the translation does not
  render the term as the glossary says: another word, a mistranslation, the term dropped) or
  false (the English uses the word in another sense, or the translation does render it in a
  form the check missed). Unlabelled sampled warnings are listed, to be judged and added.
- **recall (seeded)**: for every glossary term the tutorial's translations render, the
  rendering is blanked out of the translation (each expected word, in any of its forms, and
  the English kept as is); the check should then warn. This shows that what makes the check
  quiet (parts of speech, exclusions, forms) does not make it deaf.

Prints counts and ratios; no timings, so it is not a performance benchmark.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from labml_site.translate import glossary, glossary_check, inflection  # noqa: E402

LABELS = Path(__file__).resolve().parent / "data" / "glossary_labels.json"
# Sample A (about one warning in eight) was judged while the check was built, so its figure
# flatters; sample B (another one in sixteen) was judged only after, as a held-out check.
SAMPLES = {"A": (8, 0), "B": (16, 1)}  # name → (modulus, remainder) of the warning's id

# The benchmark's own glossaries for the corpus, in the shipped glossaries' format.
CORPUS_GLOSSARIES = {
    "zh": """
| English | 中文 | 说明 |
|---|---|---|
| attention | 注意力 | |
| self-attention | 自注意力 | |
| multi-head attention | 多头注意力 | |
| query / queries | 查询 | |
| key (noun) (not: key idea, key point, key insight, key difference, key observation) | 键 | |
| value / values | 值 | |
| embedding | 嵌入 | |
| layer | 层 | |
| layer normalization (layer norm) | 层归一化 | |
| batch normalization (batch norm) | 批量归一化；批归一化 | |
| normalization | 归一化；标准化 | |
| residual connection | 残差连接 | |
| gradient | 梯度 | |
| gradient descent | 梯度下降 | |
| loss | 损失 | |
| batch | 批量；批次 | |
| token | 令牌；词元；标记 | |
| sample (noun / verb) | 样本 / 采样 | |
| weight | 权重 | |
| parameter | 参数 | |
| convolution | 卷积 | |
| kernel | 核；内核 | |
| channel | 通道 | |
| distribution | 分布 | |
| probability | 概率 | |
| sequence | 序列 | |
| encoder | 编码器 | |
| decoder | 解码器 | |
| activation | 激活 | |
| matrix | 矩阵 | |
| vector | 向量 | |
| tensor | 张量 | |
| optimizer | 优化器 | |
| learning rate | 学习率 | |
| generator | 生成器 | |
| discriminator | 判别器；鉴别器 | |
| noise | 噪声 | |
| transformer | Transformer | 保留英文 |
| dropout | Dropout | 保留英文 |
| softmax | softmax | 保留英文 |
| dataset | 数据集 | |
| mean (noun) | 均值；平均 | |
| variance | 方差 | |
| head | 头 | |
| epoch | 轮；周期；epoch | |
| feature | 特征 | |
| hidden layer | 隐藏层 | |
| image | 图像 | |
| pixel | 像素 | |
| training | 训练 | |
| model | 模型 | |
| memory | 内存；记忆 | |
| reward | 奖励 | |
| policy | 策略 | |
| state | 状态 | |
| action | 动作；行动 | |
| label | 标签 | |
| classifier | 分类器 | |
| input | 输入 | |
| output | 输出 | |
| step | 步 | |
""",
    "ja": """
| English | 日本語 | 注 |
|---|---|---|
| attention | 注意；アテンション | |
| self-attention | 自己注意；セルフアテンション | |
| multi-head attention | マルチヘッドアテンション；マルチヘッド注意 | |
| query / queries | クエリ | |
| key (noun) (not: key idea, key point, key insight, key difference, key observation) | キー | |
| value / values | 値；バリュー | |
| embedding | 埋め込み；エンベディング | |
| layer | レイヤー；層 | |
| layer normalization (layer norm) | レイヤー正規化；層正規化 | |
| batch normalization (batch norm) | バッチ正規化 | |
| normalization | 正規化；ノーマライゼーション | |
| residual connection | 残差接続 | |
| gradient | 勾配 | |
| gradient descent | 勾配降下 | |
| loss | 損失；ロス | |
| batch | バッチ | |
| token | トークン | |
| sample (noun / verb) | サンプル / サンプリング；サンプル | |
| weight | 重み；ウェイト | |
| parameter | パラメータ | |
| convolution | 畳み込み | |
| kernel | カーネル | |
| channel | チャネル；チャンネル | |
| distribution | 分布 | |
| probability | 確率 | |
| sequence | シーケンス；系列 | |
| encoder | エンコーダ | |
| decoder | デコーダ | |
| activation | 活性化 | |
| matrix | 行列 | |
| vector | ベクトル | |
| tensor | テンソル | |
| optimizer | オプティマイザ | |
| learning rate | 学習率 | |
| generator | ジェネレータ；生成器 | |
| discriminator | ディスクリミネータ；識別器；判別器 | |
| noise | ノイズ | |
| transformer | トランスフォーマー；Transformer | |
| dropout | ドロップアウト | |
| softmax | ソフトマックス；softmax | |
| dataset | データセット | |
| mean (noun) | 平均 | |
| variance | 分散 | |
| head | ヘッド | |
| epoch | エポック | |
| feature | 特徴 | |
| hidden layer | 隠れ層；隠しレイヤー | |
| image | 画像；イメージ | |
| pixel | ピクセル；画素 | |
| training | 学習；トレーニング；訓練 | |
| model | モデル | |
| memory | メモリ；記憶 | |
| reward | 報酬 | |
| policy | ポリシー；方策 | |
| state | 状態；ステート | |
| action | 行動；アクション | |
| label | ラベル | |
| classifier | 分類器 | |
| input | 入力 | |
| output | 出力 | |
| step | ステップ | |
""",
}


def warning_id(set_name: str, rel: str, key: str, match: glossary_check.Match) -> str:
    text = "\x1f".join((set_name, rel, key, match.term.english[0], match.term.pos, match.found.lower()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def sample_of(wid: str) -> str:
    """The sample the warning `wid` falls in, or ""."""
    for name, (modulus, remainder) in SAMPLES.items():
        if int(wid, 16) % modulus == remainder:
            return name
    return ""


def catalogs(folder: Path, lang: str):
    for path in sorted(folder.rglob(f"*.{lang}.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            yield path, data


def warnings_of(set_name: str, folder: Path, lang: str, fixed: glossary.Glossary | None):
    """(id, rel, key, value, match) for each warning; and the number of entries checked."""
    found, entries = [], 0
    for path, data in catalogs(folder, lang):
        g = fixed or glossary.for_catalog(path, lang)
        rel = path.relative_to(folder).as_posix()
        for key, value in data.items():
            if not (isinstance(key, str) and isinstance(value, str) and value.strip()):
                continue
            entries += 1
            for match in glossary_check.missing_terms(g, lang, key, value):
                found.append((warning_id(set_name, rel, key, match), rel, key, value, match))
    return found, entries


def wilson(real: int, n: int) -> tuple[float, float]:
    if not n:
        return (0.0, 0.0)
    z, p = 1.96, real / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def report(set_name: str, found: list, entries: int, labels: dict, show: int, sample_all: bool = False) -> dict:
    print(f"{set_name:10} entries {entries:6}  warnings {len(found):5}")
    unlabelled = []
    for name in ([""] if sample_all else list(SAMPLES)):
        sample = [w for w in found if sample_all or sample_of(w[0]) == name]
        judged = [w for w in sample if w[0] in labels]
        real = sum(1 for w in judged if labels[w[0]]["real"])
        low, high = wilson(real, len(judged))
        precision = f"{real / len(judged):.1%} (95 % interval {low:.0%}–{high:.0%})" if judged else "n/a (no warning judged)"
        print(f"  {'all' if sample_all else 'sample ' + name:9} {len(sample):4} warnings, {len(judged):4} judged, "
              f"{real:4} real: precision {precision}")
        unlabelled += [w for w in sample if w[0] not in labels]
    if unlabelled:
        print(f"  {len(unlabelled)} sampled warnings not judged yet" + ("" if show else " (--show-unlabelled N lists them)"))
    for wid, rel, key, value, match in unlabelled[:show]:
        english = glossary_check.english_text(key).replace(glossary_check.english_words.PLACEHOLDER, "▢")
        at = english.lower().find(match.found.lower())
        print(json.dumps({"id": wid, "set": set_name, "file": rel, "found": match.found, "pos": match.term.pos,
                          "expected": list(match.term.expected),
                          "english": english[max(0, at - 200): at + 200],
                          "translation": glossary_check.translation_text(value)[:1200]}, ensure_ascii=False))
    return {"warnings": len(found)}


# --------------------------------------------------------------------------------------------
# Recall on seeded errors


def _blank(lang: str, text: str, match: glossary_check.Match) -> str:
    """`text` without what renders `match`: the expected words in any form, the English."""
    prepared = inflection.prepared(lang, text)
    out = text
    for wanted in sorted(match.term.expected, key=len, reverse=True):
        if prepared.cjk:
            out = inflection._cjk_pattern(lang, wanted).sub("□", inflection._cjk_normal(lang, out))
            continue
        for word in re.findall(r"\w+", wanted):
            folded = inflection._fold(word)
            word_stem = inflection.stem(lang, folded)

            def gone(m: re.Match) -> str:
                w = inflection._fold(m.group(0))
                return "□" if inflection.same_word(folded, w, word_stem, inflection.stem(lang, w)) else m.group(0)

            out = re.sub(r"\w+", gone, out)
    for word in re.findall(r"[A-Za-z]+", match.found):
        out = re.sub(rf"(?i)(?<![A-Za-z]){re.escape(word)}\w*", "□", out)
    return out


def seeded_recall(folder: Path, langs: tuple[str, ...]) -> None:
    for lang in langs:
        tried = caught = 0
        missed: list[str] = []
        for path, data in catalogs(folder, lang):
            g = glossary.for_catalog(path, lang)
            for key, value in data.items():
                if not (isinstance(value, str) and value.strip()):
                    continue
                text = glossary_check.translation_text(value)
                for match, used in glossary_check.term_report(g, lang, key, value):
                    if not used or match.term.ambiguous:
                        continue
                    tried += 1
                    broken = _blank(lang, text, match)
                    if not glossary_check.uses(lang, broken, match):
                        caught += 1
                    elif len(missed) < 5:
                        missed.append(f"{match.found} → {match.term.expected}")
        ratio = f"{caught / tried:.1%}" if tried else "n/a"
        print(f"recall {lang}: {caught} of {tried} terms blanked out of their translations are flagged ({ratio})"
              + (f"; e.g. missed: {'; '.join(missed)}" if missed else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus"), help="the annotated-paper repository")
    parser.add_argument("--show-unlabelled", type=int, default=0, metavar="N", help="print N unjudged sampled warnings as JSON lines")
    args = parser.parse_args(argv)
    labels = json.loads(LABELS.read_text(encoding="utf-8")) if LABELS.exists() else {}

    tutorial = ROOT / "translations"
    found, entries = [], 0
    for lang in ("zh", "ru"):
        f, n = warnings_of("tutorial", tutorial, lang, None)
        found += f
        entries += n
    report("tutorial", found, entries, labels, args.show_unlabelled, sample_all=True)
    cache = args.corpus / "translate_cache"
    if cache.is_dir():
        for lang, table in CORPUS_GLOSSARIES.items():
            g = glossary.parse_markdown(table, lang, f"benchmark glossary.{lang}.md")
            f, n = warnings_of(f"corpus {lang}", cache, lang, g)
            report(f"corpus {lang}", f, n, labels, args.show_unlabelled)
    else:
        print(f"(no corpus at {cache}: pass --corpus DIR)")
    seeded_recall(tutorial, ("zh", "ru"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
