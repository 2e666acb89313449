/* The translation editor, added to each page by `labml-site translate` (never to a built site).

Each prose block of the page becomes a `.wb-block` showing its state; clicking one (or Enter on
it) opens the panel: the English, the placeholders (math and code, shown rendered, inserted as
atomic chips), the fuzzy suggestion, the glossary's terms, the findings of the checks as you
type, and Save. Keys:
  Alt+N / Alt+↓   next block that is not translated      Alt+↑  previous one
  Ctrl+Enter      save, then open the next untranslated   Ctrl+S save and stay
  Alt+A           accept the fuzzy suggestion            Alt+0…9 insert placeholder N
  Alt+P           insert the next unused placeholder     Alt+R  mark reviewed
  Tab / Shift+Tab select the next / previous run of words between tags and placeholders
  Escape          close the panel
The editor holds the translation's HTML as text, with each placeholder as one non-editable chip:
what is saved is exactly the text, with the placeholder for each chip. The placeholder's form and
pattern come from `markup.js`, generated from labml_site/read/markup.py and loaded first. */
(function () {
  "use strict";
  var tokenMeta = document.querySelector('meta[name="labml-workbench-token"]');
  var pageMeta = document.querySelector('meta[name="labml-workbench-page"]');
  if (!tokenMeta || !pageMeta) return;
  var TOKEN = tokenMeta.content, PAGE = pageMeta.content;
  var MARKUP = window.labmlMarkup;
  if (!MARKUP) return;
  var PH = MARKUP.placeholder.regExp();
  var state = null, current = null, editor = null, checkTimer = null, panel = null, bar = null;

  function api(path, body) {
    var opts = {method: body ? "POST" : "GET", headers: {"X-Workbench-Token": TOKEN}, cache: "no-store"};
    if (body) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
    return fetch("/__workbench/api/" + path, opts).then(function (r) {
      return r.json().then(function (data) { return {status: r.status, data: data}; });
    });
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // The states of an entry's verdict (labml_site/translate/verdict.py), as the server sends them.
  var LABELS = {translated: "translated", repaired: "repaired", fuzzy: "fuzzy", untranslated: "untranslated", invalid: "invalid"};

  // ---------------------------------------------------------------------------------------
  // The page's blocks

  function blockElement(b) {
    var div = b.node || el("div", "wb-block");
    b.node = div;
    div.setAttribute("data-status", b.status);
    div.setAttribute("data-index", String(b.index));
    div.tabIndex = 0;
    div.innerHTML = b.html;  // the build's HTML: sanitised translation or the English
    var badge = el("span", "wb-badge", LABELS[b.status] || b.status);
    if (b.reviewed && b.reviewed.current) badge.textContent += " · reviewed";
    div.insertBefore(badge, div.firstChild);
    return div;
  }

  function renderBlocks() {
    state.sections.forEach(function (s) {
      var section = document.getElementById(s.id);
      var docs = section && section.querySelector(".docs");
      if (!docs) return;
      Array.prototype.slice.call(docs.childNodes).forEach(function (n) {
        if (!(n.classList && n.classList.contains("section-link"))) docs.removeChild(n);
      });
      s.blocks.forEach(function (i) { docs.appendChild(blockElement(state.blocks[i])); });
    });
    renderBar();
  }

  function renderBar() {
    if (!bar) {
      bar = el("div", "wb-bar");
      bar.setAttribute("role", "toolbar");
      document.body.appendChild(bar);
      document.body.classList.add("wb-on");
    }
    bar.textContent = "";
    var c = state.counts, total = state.blocks.length;
    bar.appendChild(el("strong", "", "Translating · " + state.lang));
    bar.appendChild(el("code", "wb-file", state.file));
    bar.appendChild(el("span", "wb-counts", (c.translated || 0) + "/" + total + " translated · " +
      (c.repaired || 0) + " repaired · " + (c.untranslated || 0) + " untranslated · " + (c.fuzzy || 0) + " fuzzy · " +
      (c.invalid || 0) + " invalid · " + state.stale.length + " stale"));
    var next = el("button", "wb-next", "Next untranslated (Alt+N)");
    next.addEventListener("click", function () { goNext(1); });
    bar.appendChild(next);
    state.blocks.filter(function (b) { return b.plain; }).forEach(function (b) {
      var meta = el("button", "wb-meta", b.label + (b.label === "Figure" ? " “" + b.key + "”" : "") + ": " + LABELS[b.status]);
      meta.setAttribute("data-status", b.status);
      meta.addEventListener("click", function () { open(b); });
      bar.appendChild(meta);
    });
    state.file_findings.forEach(function (f) { bar.appendChild(el("span", "wb-file-finding", f.severity + ": " + f.message)); });
  }

  function untranslated(b) { return b.status !== "translated"; }

  // The page's blocks in reading order, then its title and summary (not shown in the page).
  function reading() {
    return state.blocks.filter(function (b) { return !b.plain; }).concat(state.blocks.filter(function (b) { return b.plain; }));
  }

  function goNext(step) {
    var order = reading(), n = order.length, here = current ? order.indexOf(state.blocks[current.index]) : -1;
    var start = here >= 0 ? here : (step > 0 ? -1 : n);
    for (var k = 1; k <= n; k++) {
      var i = ((start + step * k) % n + n) % n;
      if (untranslated(order[i]) && order[i] !== state.blocks[current ? current.index : -1]) { open(order[i]); return true; }
    }
    flash("Every block of this page is translated.");
    return false;
  }

  // ---------------------------------------------------------------------------------------
  // The editor: text with atomic placeholder chips

  function chip(n, b) {
    var c = el("span", "wb-ph");
    c.contentEditable = "false";
    c.setAttribute("data-n", String(n));
    c.title = "placeholder " + n + " (math or code; Alt+" + n + " inserts it)";
    var inner = el("span", "wb-ph-body");
    inner.innerHTML = b.placeholders[n] !== undefined ? b.placeholders[n] : "?";
    c.appendChild(inner);
    return c;
  }

  function fragmentOf(text, b) {
    var frag = document.createDocumentFragment(), last = 0, m;
    PH.lastIndex = 0;
    while ((m = PH.exec(text)) !== null) {
      if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
      frag.appendChild(chip(parseInt(m[1], 10), b));
      last = m.index + m[0].length;
    }
    if (last < text.length) frag.appendChild(document.createTextNode(text.slice(last)));
    return frag;
  }

  function setValue(text, b) {
    editor.textContent = "";
    editor.appendChild(fragmentOf(text, b));
  }

  function getValue() {
    var out = [];
    function walk(node, top) {
      node.childNodes.forEach(function (n, i) {
        if (n.nodeType === 3) out.push(n.nodeValue);
        else if (n.nodeType === 1 && n.classList.contains("wb-ph")) {
          out.push(MARKUP.placeholder.make(n.getAttribute("data-n")));
        } else if (n.nodeName === "BR") out.push("\n");
        else if (n.nodeType === 1) {  // a line the browser wrapped in a <div>
          if (n.nodeName === "DIV" && (i > 0 || !top)) out.push("\n");
          walk(n, false);
        }
      });
    }
    walk(editor, true);
    return out.join("");
  }

  function insertAtCursor(node) {
    var sel = window.getSelection(), range = sel.rangeCount ? sel.getRangeAt(0) : null;
    if (!range || !editor.contains(range.commonAncestorContainer)) {
      range = document.createRange();
      range.selectNodeContents(editor);
      range.collapse(false);
    }
    range.deleteContents();
    var lastNode = node.nodeType === 11 ? node.lastChild : node;
    range.insertNode(node);
    if (lastNode) {
      range = document.createRange();
      range.setStartAfter(lastNode);
      range.collapse(true);
      sel.removeAllRanges();
      sel.addRange(range);
    }
    editor.focus();
    scheduleCheck();
  }

  function usedPlaceholders() {
    var used = {};
    editor.querySelectorAll(".wb-ph").forEach(function (c) { used[c.getAttribute("data-n")] = true; });
    return used;
  }

  function insertPlaceholder(n) {
    if (!current || current.placeholders[n] === undefined) return;
    insertAtCursor(chip(n, current));
  }

  function insertNextPlaceholder() {
    if (!current) return;
    var used = usedPlaceholders(), m;
    PH.lastIndex = 0;
    while ((m = PH.exec(current.key)) !== null) {
      if (!used[m[1]]) { insertPlaceholder(parseInt(m[1], 10)); return; }
    }
    flash("Every placeholder of the English is in the translation.");
  }

  // ---------------------------------------------------------------------------------------
  // The panel

  function section(title, cls) {
    var s = el("section", "wb-part " + (cls || ""));
    s.appendChild(el("h2", "wb-label", title));
    panel.appendChild(s);
    return s;
  }

  function open(b) {
    if (!panel) {
      panel = el("aside", "wb-panel");
      panel.setAttribute("aria-label", "Translation editor");
      document.body.appendChild(panel);
    }
    if (current && current.node) current.node.classList.remove("wb-current");
    current = b;
    if (b.node) {
      b.node.classList.add("wb-current");
      b.node.scrollIntoView({block: "center"});
    }
    document.body.classList.add("wb-panel-open");
    panel.setAttribute("data-index", String(b.index));
    panel.textContent = "";
    var head = el("header", "wb-head");
    head.appendChild(el("h2", "", b.plain ? b.label : "Block " + (b.index + 1)));
    var status = el("span", "wb-status", LABELS[b.status]);
    status.setAttribute("data-status", b.status);
    head.appendChild(status);
    if (b.reviewed) head.appendChild(el("span", "wb-reviewed", (b.reviewed.current ? "reviewed by " : "review outdated: ") + b.reviewed.by + ", " + b.reviewed.date));
    var close = el("button", "wb-close", "×");
    close.setAttribute("aria-label", "Close (Escape)");
    close.addEventListener("click", closePanel);
    head.appendChild(close);
    panel.appendChild(head);

    var english = section("English", "wb-english-part");
    var en = el("div", "wb-english");
    en.setAttribute("lang", "en");
    en.innerHTML = b.english;
    english.appendChild(en);

    if (b.placeholders.length) {
      var phs = section("Placeholders (click, or Alt+number; Alt+P: the next one)", "wb-palette");
      b.placeholders.forEach(function (_, n) {
        var button = el("button", "wb-ph-button");
        button.appendChild(el("kbd", "", String(n)));
        button.appendChild(chip(n, b));
        button.addEventListener("mousedown", function (e) { e.preventDefault(); });  // keep the cursor
        button.addEventListener("click", function () { insertPlaceholder(n); });
        phs.appendChild(button);
      });
    }

    if (b.suggestion) {
      var sug = section("Fuzzy suggestion (translated a similar older English)", "wb-suggestion");
      var text = el("div", "wb-suggestion-text");
      text.appendChild(fragmentOf(b.suggestion.value, b));
      sug.appendChild(text);
      var accept = el("button", "wb-accept", "Accept suggestion (Alt+A)");
      accept.addEventListener("click", acceptSuggestion);
      sug.appendChild(accept);
    }

    if (!b.plain && state.stale.length && b.status !== "translated") {
      // Translations whose English is gone from the page (the stale entries): text to reuse.
      var stale = section("Stale translations of this page (their English is gone)", "wb-stale");
      var details = el("details");
      details.appendChild(el("summary", "", state.stale.length + " stale " + (state.stale.length === 1 ? "entry" : "entries")));
      state.stale.forEach(function (entry) {
        var row = el("div", "wb-stale-entry");
        row.appendChild(el("div", "wb-stale-en", entry.key.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim()));
        row.appendChild(el("div", "wb-stale-value", entry.value));
        var use = el("button", "wb-use", "Use");
        use.addEventListener("click", function () { setValue(entry.value, b); runCheck(); editor.focus(); });
        row.appendChild(use);
        details.appendChild(row);
      });
      stale.appendChild(details);
    }

    var edit = section("Translation (" + state.lang + ")", "wb-edit");
    editor = el("div", "wb-editor");
    editor.contentEditable = "true";
    editor.spellcheck = true;
    editor.setAttribute("role", "textbox");
    editor.setAttribute("aria-multiline", "true");
    editor.setAttribute("lang", state.lang);
    editor.setAttribute("aria-label", "Translation (" + state.lang + ")");
    // An untranslated block starts as a copy of the English: its tags, placeholders and edge
    // whitespace are already right, and the words are typed over.
    setValue(b.value.trim() ? b.value : b.key, b);
    editor.addEventListener("input", scheduleCheck);
    editor.addEventListener("keydown", editorKey);
    editor.addEventListener("paste", function (e) {
      e.preventDefault();
      insertAtCursor(fragmentOf((e.clipboardData || window.clipboardData).getData("text/plain"), b));
    });
    edit.appendChild(editor);
    var buttons = el("div", "wb-buttons");
    var save = el("button", "wb-save", "Save (Ctrl+S) · and next (Ctrl+Enter)");
    save.addEventListener("click", function () { doSave(false); });
    buttons.appendChild(save);
    if (!b.plain) {
      var review = el("button", "wb-review", "Mark reviewed (Alt+R)");
      review.addEventListener("click", markReviewed);
      buttons.appendChild(review);
    }
    edit.appendChild(buttons);
    panel.appendChild(el("div", "wb-message")).setAttribute("role", "status");
    var preview = section("Preview", "wb-preview-part");
    preview.appendChild(el("div", "wb-preview"));
    section("Checks", "wb-checks").appendChild(el("ul", "wb-findings"));
    section("Glossary", "wb-glossary-part").appendChild(el("ul", "wb-glossary"));
    showGlossary(b.glossary);
    showFindings(b.findings);
    editor.focus();
    placeCursorAtFirstWord();
    runCheck();
  }

  // The runs of words between tags and placeholders, in order: [text node, start, end].
  function textRuns() {
    var runs = [], walker = document.createTreeWalker(editor, NodeFilter.SHOW_TEXT, null), node;
    while ((node = walker.nextNode())) {
      if (node.parentNode.closest && node.parentNode.closest(".wb-ph")) continue;
      var re = /[^<>]+/g, m, text = node.nodeValue;
      while ((m = re.exec(text)) !== null) {
        if (!m[0].trim() || text.charAt(m.index - 1) === "<") continue;  // blank, or inside a tag
        // The run with its spaces (what sits between the tags and placeholders), not its line breaks.
        var lead = /^\s*\n/.exec(m[0]), trail = /\n\s*$/.exec(m[0]);
        runs.push([node, m.index + (lead ? lead[0].length : 0), m.index + (trail ? trail.index : m[0].length)]);
      }
    }
    return runs;
  }

  function selectRun(run) {
    var range = document.createRange();
    range.setStart(run[0], run[1]);
    range.setEnd(run[0], run[2]);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  // Tab: select the next run of words (what is left to translate), Shift+Tab the previous one.
  function selectNextRun(back) {
    var runs = textRuns(), sel = window.getSelection();
    if (!runs.length) return;
    var here = sel.rangeCount ? sel.getRangeAt(0) : null;
    var ordered = back ? runs.slice().reverse() : runs;
    for (var i = 0; i < ordered.length; i++) {
      var r = document.createRange();
      r.setStart(ordered[i][0], ordered[i][1]);
      if (!here) { selectRun(ordered[i]); return; }
      var cmp = r.compareBoundaryPoints(Range.START_TO_START, here);
      if (back ? cmp < 0 : cmp > 0) { selectRun(ordered[i]); return; }
    }
    selectRun(ordered[0]);
  }

  function placeCursorAtFirstWord() {
    var runs = textRuns();
    if (runs.length) selectRun(runs[0]);
  }

  function closePanel() {
    if (current && current.node) { current.node.classList.remove("wb-current"); current.node.focus(); }
    current = null;
    document.body.classList.remove("wb-panel-open");
    if (panel) panel.textContent = "";
  }

  function flash(text, kind) {
    var box = panel && panel.querySelector(".wb-message");
    if (!box) { if (bar) bar.setAttribute("data-message", text); return; }
    box.textContent = text;
    box.setAttribute("data-kind", kind || "info");
  }

  function showFindings(findings) {
    var list = panel && panel.querySelector(".wb-findings");
    if (!list) return;
    list.textContent = "";
    if (!findings.length) list.appendChild(el("li", "wb-ok", "No problems."));
    findings.forEach(function (f) {
      var li = el("li", "wb-finding");
      li.setAttribute("data-severity", f.severity);
      li.setAttribute("data-code", f.code);
      li.appendChild(el("strong", "", f.severity));
      li.appendChild(document.createTextNode(" " + f.message + " "));
      li.appendChild(el("code", "", f.code));
      list.appendChild(li);
    });
  }

  function showGlossary(terms) {
    var list = panel && panel.querySelector(".wb-glossary");
    if (!list) return;
    list.textContent = "";
    if (!terms.length) list.appendChild(el("li", "wb-none", "No glossary term in this block."));
    terms.forEach(function (t) {
      var li = el("li", "wb-term");
      li.setAttribute("data-used", t.used ? "yes" : "no");
      li.appendChild(el("span", "wb-term-en", t.english));
      li.appendChild(document.createTextNode(" → "));
      li.appendChild(el("strong", "wb-term-expected", t.expected.join(" / ")));
      if (t.note) li.appendChild(el("span", "wb-term-note", " " + t.note));
      list.appendChild(li);
    });
  }

  function scheduleCheck() {
    clearTimeout(checkTimer);
    checkTimer = setTimeout(runCheck, 250);
  }

  function runCheck() {
    if (!current) return;
    var b = current, value = getValue();
    api("check", {url: PAGE, key: b.key, value: value}).then(function (r) {
      if (current !== b || r.status !== 200) return;
      showFindings(r.data.findings);
      showGlossary(r.data.glossary);
      var preview = panel.querySelector(".wb-preview");
      if (r.data.preview !== null) preview.innerHTML = r.data.preview;  // sanitised by the server
      else preview.textContent = r.data.status === "untranslated" ? "(empty: the page shows the English)" : "(fails a check: the page would show the English)";
      if (typeof r.data.repaired === "string") {  // shown only repaired: not saved as it is
        var take = el("button", "wb-take-repaired", "Not saved as typed: use the repaired form");
        take.addEventListener("click", function () { setValue(r.data.repaired, b); editor.focus(); runCheck(); });
        preview.appendChild(take);
      }
    });
  }

  function doSave(andNext) {
    if (!current) return;
    var b = current, value = getValue();
    flash("Saving…");
    api("save", {url: PAGE, key: b.key, value: value, expected: b.value}).then(function (r) {
      if (r.status === 200) {
        var fresh = r.data.block;
        fresh.node = b.node;
        state.blocks[b.index] = fresh;
        state.counts = r.data.counts;
        state.build = r.data.build;
        if (fresh.node) blockElement(fresh);
        renderBar();
        if (andNext && goNext(1)) return;
        current = fresh;
        if (fresh.node) fresh.node.classList.add("wb-current");
        flash("Saved to " + (r.data.written.join(", ") || state.file + " (unchanged)") +
          (andNext ? ". Every block of this page is translated." : ""), "ok");
        showFindings(fresh.findings);
      } else {
        if (r.data.findings) showFindings(r.data.findings);
        var text = r.data.error || "not saved";
        if (r.status === 409 && typeof r.data.current === "string") {
          text += " — on disk now: " + r.data.current;
          b.conflict = r.data.current;
        }
        flash(text, "error");
      }
    });
  }

  function acceptSuggestion() {
    if (!current || !current.suggestion) return;
    setValue(current.suggestion.value, current);
    editor.focus();
    runCheck();
    flash("Suggestion copied into the editor: check it against the English, then save.");
  }

  function markReviewed() {
    if (!current) return;
    var b = current;
    api("review", {url: PAGE, key: b.key}).then(function (r) {
      if (r.status === 200) {
        b.reviewed = r.data.reviewed;
        if (b.node) blockElement(b);
        flash("Marked reviewed by " + b.reviewed.by, "ok");
      } else flash(r.data.error || "not marked", "error");
    });
  }

  function editorKey(e) {
    if (e.key === "Tab" && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      selectNextRun(e.shiftKey);
      return;
    }
    if (e.key === "Enter" && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      insertAtCursor(document.createTextNode("\n"));
    }
  }

  document.addEventListener("keydown", function (e) {
    if (!state) return;
    var mod = e.ctrlKey || e.metaKey;
    if (mod && e.key === "Enter") { e.preventDefault(); doSave(true); return; }
    if (mod && (e.key === "s" || e.key === "S")) { e.preventDefault(); doSave(false); return; }
    if (e.altKey && !mod) {
      if (e.code === "KeyN" || e.key === "ArrowDown") { e.preventDefault(); goNext(1); return; }
      if (e.key === "ArrowUp") { e.preventDefault(); goNext(-1); return; }
      if (e.code === "KeyA") { e.preventDefault(); acceptSuggestion(); return; }
      if (e.code === "KeyP") { e.preventDefault(); insertNextPlaceholder(); return; }
      if (e.code === "KeyR") { e.preventDefault(); markReviewed(); return; }
      var digit = /^Digit(\d)$/.exec(e.code);
      if (digit) { e.preventDefault(); insertPlaceholder(parseInt(digit[1], 10)); return; }
    }
    if (e.key === "Escape" && current) { e.preventDefault(); closePanel(); return; }
    if (e.key === "Enter" && !current && e.target.classList && e.target.classList.contains("wb-block")) {
      e.preventDefault();
      open(state.blocks[parseInt(e.target.getAttribute("data-index"), 10)]);
    }
  });

  document.addEventListener("click", function (e) {
    var block = e.target.closest && e.target.closest(".wb-block");
    if (block && !e.target.closest("a")) open(state.blocks[parseInt(block.getAttribute("data-index"), 10)]);
  });

  // After an outside change (a hand edit, git, another editor) the server rebuilds: the blocks'
  // states follow. An open editor keeps what you typed, and still saves against the value it
  // opened with, so a conflicting change is reported rather than overwritten.
  function follow() {
    api("build").then(function (r) {
      if (r.status !== 200 || r.data.build === state.build) return;
      return api("page?url=" + encodeURIComponent(PAGE)).then(function (p) {
        if (p.status !== 200) return;
        var same = p.data.blocks.length === state.blocks.length && p.data.blocks.every(function (b, i) {
          return b.key === state.blocks[i].key;
        });
        if (!same) {  // the English changed: the page itself is another one now
          if (!current) location.reload();
          return;
        }
        var nodes = state.blocks.map(function (b) { return b.node; });
        var open = current ? current.index : null;
        state = p.data;
        state.blocks.forEach(function (b, i) { b.node = nodes[i]; });
        renderBlocks();
        if (open !== null && state.blocks[open] && state.blocks[open].node) state.blocks[open].node.classList.add("wb-current");
      });
    }).catch(function () {}).then(function () { setTimeout(follow, 2000); });
  }

  api("page?url=" + encodeURIComponent(PAGE)).then(function (r) {
    if (r.status !== 200) { console.error("workbench:", r.data.error); return; }
    state = r.data;
    renderBlocks();
    document.documentElement.setAttribute("data-workbench", "ready");
    setTimeout(follow, 2000);
  });
})();
