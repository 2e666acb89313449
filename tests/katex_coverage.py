"""How much of KaTeX's documented function set converts (tests/data/katex_functions.tsv).

A name converts when one of its formulas converts to MathML that passes `validate_mathml`: the
docs' example first, then the name with the arguments it may need (`\\name{a}`, `\\name{a}{b}`,
`\\name(` for a sized delimiter), since the docs list many names without an example.
"""
from __future__ import annotations

from pathlib import Path

from labml_site.typeset.math import MathError, tex_to_mathml, validate_mathml

TABLE = Path(__file__).resolve().parent / "data" / "katex_functions.tsv"


def entries() -> list[tuple[str, str]]:
    rows = []
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, example = line.split("\t", 1)
            rows.append((name, example))
    return rows


def candidates(name: str, example: str) -> list[str]:
    out = [example]
    if not name.startswith("\\begin"):
        out += [name, name + "{a}", name + "{a}{b}", name + "(", name + "{a}{b}{c}", name + "{a}{b}{c}{d}",
                "a " + name + " b", name + '"41']
        # where the docs name a command without an example: its usual surroundings
        out += [
            rf"\left( a {name} b \right)" if name == "\\middle" else rf"\left( a \right)",
            rf"\sum{name}_a^b x",
            rf"\begin{{matrix}} a {name} b \end{{matrix}}",
            rf"\newcommand\foo{{a}}{name}\foo{{b}}\foo",
        ] if name in ("\\left", "\\right", "\\middle", "\\limits", "\\nolimits", "\\cr", "\\renewcommand") else []
        # names the docs list without an example, whose use needs its context: a table, a star,
        # a definition; `\\textXX` is the docs' name for the stacking text fonts (their example)
        out += {
            "\\cline": [r"\begin{array}{cc} a & b \\ \cline{1-2} c & d \end{array}"],
            "\\multicolumn": [r"\begin{array}{cc} \multicolumn{2}{c}{a} \\ b & c \end{array}"],
            "\\@": [r"\@ifstar{a}{b}*"],
            "\\textXX": [r"\textsf{\textbf{H}}"],
            "\\expandafter": [r"\def\b{x}\expandafter\hat\b"],
            "\\noexpand": [r"\def\b{x}\noexpand\b y"],
        }.get(name, [])
    return out


def converts(name: str, example: str) -> bool:
    for tex in candidates(name, example):
        for display in (True, False):
            try:
                markup = tex_to_mathml(tex, display)
            except MathError:
                continue
            if not validate_mathml(markup, expected_tex=tex):
                return True
    return False


def coverage() -> tuple[int, int, list[str]]:
    rows = entries()
    missing = [name for name, example in rows if not converts(name, example)]
    return len(rows) - len(missing), len(rows), missing


if __name__ == "__main__":
    done, total, missing = coverage()
    print(f"{done}/{total} = {100 * done / total:.1f} %")
    print(" ".join(missing))
