"""A small source tree and translation files for the workbench's tests, and an HTTP client."""
from __future__ import annotations

import http.client
import json
from pathlib import Path

from conftest import write_tree
from labml_site.builder.config import BuildConfig

PAGE = '''"""
---
title: Scaled attention
summary: How scores are scaled.
---

# Scaled attention

We divide the scores by $\\sqrt{d_k}$ before the softmax.
"""

import math


def scale(scores, d_k):
    """
    Scale `scores` by $\\frac{1}{\\sqrt{d_k}}$ so that the attention stays soft.
    """
    # The query and the key give one score
    return scores / math.sqrt(d_k)
'''

GLOSSARY = """# 术语表

| English | 中文 | 说明 |
|---|---|---|
| attention | 注意力 | |
| query / queries | 查询 | |
| key / keys | 键 | “键向量” |
| block (a pair) | 屏蔽 | |
| softmax | softmax | |
"""

HEADING = "<h1>Scaled attention</h1>\n<p>We divide the scores by <span translate=no>_^_0_^_</span> before the softmax.</p>\n"
SCALE = "<p> Scale <span translate=no>_^_0_^_</span> by <span translate=no>_^_1_^_</span> so that the attention stays soft.</p>\n"
QUERY = "<p>The query and the key give one score </p>\n"
HEADING_ZH = "<h1>缩放注意力</h1>\n<p>我们把分数除以 <span translate=no>_^_0_^_</span>，再做 softmax。</p>\n"


def make_project(root: Path, translations: dict | None = None) -> BuildConfig:
    write_tree(root / "src", {"tut/page.py": PAGE})
    write_tree(root / "tr", {"glossary.zh.md": GLOSSARY})
    data = {HEADING: "", SCALE: "", QUERY: "", "Scaled attention": "", "How scores are scaled.": "",
            "<p>An English block that is gone.</p>\n": "<p>一个已经不在的段落。</p>\n"}
    data.update(translations or {})
    (root / "tr/tut").mkdir(parents=True, exist_ok=True)
    (root / "tr/tut/page.zh.json").write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return BuildConfig(source=root / "src", translations=root / "tr", out=root / "site", langs=("en", "zh"))


class Client:
    def __init__(self, port: int, token: str):
        self.port, self.token = port, token

    def request(self, method: str, path: str, body=None, headers: dict | None = None, token: bool = True, host: str | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        sent = {"Host": host or f"127.0.0.1:{self.port}"}
        if token:
            sent["X-Workbench-Token"] = self.token
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        sent.update(headers or {})
        try:
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            payload = response.read()
            return response.status, payload, dict(response.getheaders())
        finally:
            conn.close()

    def json(self, method: str, path: str, body=None, **kw):
        status, payload, _ = self.request(method, path, body, **kw)
        return status, json.loads(payload) if payload else None

    def page(self):
        return self.json("GET", "/__workbench/api/page?url=tut/page.html")

    def save(self, key: str, value: str, expected: str | None = ""):
        return self.json("POST", "/__workbench/api/save", {"url": "tut/page.html", "key": key, "value": value, "expected": expected})
