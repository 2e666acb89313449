/* The translation editor, added to each page by `labml-site translate` (never to a built site).

Each prose block of the page becomes a `.wb-block` showing its state; clicking one (or Enter on
it) opens the panel: the English, the placeholders (math and code, shown rendered, inserted as
atomic chips), the fuzzy suggestion, the glossary's terms, the findings of the checks as you
type, the translation memory's suggestions and a concordance search, and Save. Keys:
  Alt+N / Alt+↓   next block that is not translated      Alt+↑  previous one
  Ctrl+Enter      save, then open the next untranslated   Ctrl+S save and stay
  Alt+A           accept the fuzzy suggestion            Alt+0…8 insert placeholder N
  Alt+9           the placeholder picker: type a number or the formula's text, Enter inserts
  Alt+P           insert the next unused placeholder     Alt+R  mark reviewed
  Alt+M           use the best translation-memory match  Alt+F  the concordance search
  Tab / Shift+Tab select the next / previous run of words between tags and placeholders
  Escape          close the picker, then the panel
Nothing typed is lost: every open editor keeps a draft in localStorage (per page, entry and
language), offered again when the block is reopened after a reload or a restart of the server; a
save that fails on the network or the server is shown with a retry, and one refused because the
entry changed on disk (409) shows the text on disk beside yours: keep mine, take theirs, or edit
both, then save.
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

  // Every answer is {status, data}; a request that gets none (the server is gone, or took longer
  // than `wait` ms) is {status: 0}, so that no caller waits forever.
  function api(path, body, wait) {
    var opts = {method: body ? "POST" : "GET", headers: {"X-Workbench-Token": TOKEN}, cache: "no-store"};
    if (body) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
    var controller = window.AbortController ? new AbortController() : null, timer = null;
    if (controller) { opts.signal = controller.signal; timer = setTimeout(function () { controller.abort(); }, wait || 20000); }
    return fetch("/__workbench/api/" + path, opts).then(function (r) {
      return r.json().catch(function () { return {error: "the server answered " + r.status + " without a message"}; })
        .then(function (data) { return {status: r.status, data: data || {}}; });
    }, function (e) {
      return {status: 0, data: {error: e && e.name === "AbortError" ? "the server did not answer in time" : "the server cannot be reached"}};
    }).then(function (r) { clearTimeout(timer); return r; });
  }

  // -----------------------------------------------------------------------------------------
  // Drafts: what is typed in an open editor, kept in this browser until it is saved.

  var SESSION = (function () {
    try {
      var id = sessionStorage.getItem("labml-wb-session");
      if (!id) { id = String(Date.now()) + "-" + Math.random().toString(36).slice(2, 8); sessionStorage.setItem("labml-wb-session", id); }
      return id;
    } catch (e) { return "no-storage"; }
  })();

  function hash(text) {  // FNV-1a: a short name for a long key (the key itself is stored and compared)
    var h = 0x811c9dc5;
    for (var i = 0; i < text.length; i++) { h ^= text.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; }
    return h.toString(16);
  }

  function draftName(key) { return "labml-wb-draft:" + (state ? state.lang : "") + ":" + PAGE + ":" + hash(key) + ":" + key.length; }

  function loadDraft(key) {
    try {
      var d = JSON.parse(localStorage.getItem(draftName(key)) || "null");
      return d && d.key === key && typeof d.value === "string" ? d : null;
    } catch (e) { return null; }
  }

  function keepDraft(b, value) {
    try {
      if (value === b.opened) { localStorage.removeItem(draftName(b.key)); return; }  // nothing typed yet
      localStorage.setItem(draftName(b.key), JSON.stringify({key: b.key, value: value, expected: b.expected,
        session: SESSION, at: Date.now()}));
    } catch (e) { /* storage full or off: the text is still in the editor */ }
  }

  function dropDraft(key) { try { localStorage.removeItem(draftName(key)); } catch (e) {} }

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
    if (b.reviewed && b.reviewed.current) badge.textContent += b.reviewed.status === "rejected" ? " · rejected" : " · reviewed";
    if (loadDraft(b.key)) { badge.textContent += " · draft"; div.setAttribute("data-draft", "yes"); } else div.removeAttribute("data-draft");
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
    var c = state.counts, total = c.total;  // the page's total, as the build and `stats` count it
    bar.appendChild(el("strong", "", "Translating · " + state.lang));
    bar.appendChild(el("code", "wb-file", state.file));
    bar.appendChild(el("span", "wb-counts", (c.translated || 0) + "/" + total + " translated · " +
      (c.repaired || 0) + " repaired · " + (c.untranslated || 0) + " untranslated · " + (c.fuzzy || 0) + " fuzzy · " +
      (c.invalid || 0) + " invalid · " + (c.stale || 0) + " stale"));
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
    var drafts = state.blocks.filter(function (b) { var d = loadDraft(b.key); return d && d.value !== b.value; });
    if (drafts.length) {
      var d = el("button", "wb-drafts", drafts.length + (drafts.length === 1 ? " unsaved draft" : " unsaved drafts"));
      d.addEventListener("click", function () { open(drafts[0]); });
      bar.appendChild(d);
    }
    var line = el("span", "wb-connection");
    line.setAttribute("role", "status");
    bar.appendChild(line);
    showConnection();
  }

  var connection = null;  // null: the server answers; else what is wrong
  function showConnection() {
    var line = bar && bar.querySelector(".wb-connection");
    if (!line) return;
    line.textContent = connection ? connection + " Your typing is kept as a draft in this browser." : "";
    line.setAttribute("data-kind", connection ? "error" : "ok");
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

  // Quotes written as entities are shown (and saved) as the characters they are, outside tags
  // only (in an attribute they would end it); the server reads both forms as the same text.
  var QUOTE_ENTITY = /&(?:quot|apos|#x0*27|#0*39|#x0*22|#0*34);/gi;
  function shownText(text) {
    return text.split(/(<[^<>]*>)/).map(function (part, i) {
      return i % 2 ? part : part.replace(QUOTE_ENTITY, function (e) { return /quot|22|34/i.test(e) ? '"' : "'"; });
    }).join("");
  }

  function fragmentOf(text, b) {
    var frag = document.createDocumentFragment(), last = 0, m;
    PH.lastIndex = 0;
    while ((m = PH.exec(text)) !== null) {
      if (m.index > last) frag.appendChild(document.createTextNode(shownText(text.slice(last, m.index))));
      frag.appendChild(chip(parseInt(m[1], 10), b));
      last = m.index + m[0].length;
    }
    if (last < text.length) frag.appendChild(document.createTextNode(shownText(text.slice(last))));
    return frag;
  }

  // A finding's message with each placeholder it quotes shown as the chip the editor shows.
  function messageFragment(text, b) {
    var frag = document.createDocumentFragment(), last = 0, m;
    var re = new RegExp("`?" + MARKUP.placeholder.pattern + "`?|placeholder (\\d+)", "g");
    while ((m = re.exec(text)) !== null) {
      var n = parseInt(m[1] !== undefined ? m[1] : m[2], 10);
      if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
      if (m[2] !== undefined) frag.appendChild(document.createTextNode("placeholder "));
      if (b && b.placeholders[n] !== undefined) frag.appendChild(chip(n, b));
      else frag.appendChild(el("span", "wb-ph wb-ph-missing", "#" + n));
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
    var value = out.join("");
    return value.trim() ? value : "";  // emptied: "" (not translated yet), never a stray "\n"
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

  // The picker (Alt+9): every placeholder of the block; type its number or words of what it
  // shows (the formula's characters, the code), ↑/↓ choose, Enter inserts, Escape goes back.
  var picker = null, pickerRange = null;
  function placeholderText(n) {
    var d = document.createElement("div");
    d.innerHTML = current.placeholders[n];
    return (d.textContent || "").replace(/\s+/g, " ").trim();
  }

  function openPicker(start) {
    if (!current || !current.placeholders.length) { flash("This block has no placeholders."); return; }
    var sel = window.getSelection();
    pickerRange = sel.rangeCount && editor.contains(sel.getRangeAt(0).commonAncestorContainer) ? sel.getRangeAt(0).cloneRange() : null;
    closePicker(false);
    picker = el("div", "wb-picker");
    picker.setAttribute("role", "dialog");
    picker.setAttribute("aria-label", "Insert a placeholder");
    var input = el("input", "wb-picker-filter");
    input.type = "text";
    input.setAttribute("aria-label", "Placeholder number or text");
    input.placeholder = "number or text of the placeholder";
    input.value = start || "";
    var list = el("ul", "wb-picker-list");
    list.setAttribute("role", "listbox");
    picker.appendChild(input);
    picker.appendChild(list);
    editor.parentNode.insertBefore(picker, editor.nextSibling);
    var chosen = 0, shown = [], used = usedPlaceholders();
    function render() {
      var q = input.value.trim().toLowerCase();
      shown = current.placeholders.map(function (_, n) { return n; }).filter(function (n) {
        return !q || String(n).indexOf(q) === 0 || placeholderText(n).toLowerCase().indexOf(q) >= 0;
      });
      if (/^\d+$/.test(q)) shown.sort(function (a, b) { return (String(a) === q ? -1 : 0) - (String(b) === q ? -1 : 0) || a - b; });
      chosen = Math.min(chosen, Math.max(shown.length - 1, 0));
      list.textContent = "";
      shown.forEach(function (n, i) {
        var li = el("li", "wb-picker-item");
        li.setAttribute("role", "option");
        li.setAttribute("data-n", String(n));
        li.setAttribute("aria-selected", i === chosen ? "true" : "false");
        li.appendChild(el("kbd", "", String(n)));
        li.appendChild(chip(n, current));
        if (used[String(n)]) li.appendChild(el("span", "wb-picker-used", "used"));
        li.addEventListener("mousedown", function (e) { e.preventDefault(); choose(n); });
        list.appendChild(li);
      });
      if (!shown.length) list.appendChild(el("li", "wb-none", "No placeholder matches."));
    }
    function choose(n) {
      closePicker(true);
      insertPlaceholder(n);
    }
    input.addEventListener("input", function () { chosen = 0; render(); });
    input.addEventListener("keydown", function (e) {
      if (e.key === "ArrowDown") { e.preventDefault(); chosen = Math.min(chosen + 1, shown.length - 1); render(); }
      else if (e.key === "ArrowUp") { e.preventDefault(); chosen = Math.max(chosen - 1, 0); render(); }
      else if (e.key === "Enter") { e.preventDefault(); e.stopPropagation(); if (shown.length) choose(shown[chosen]); }
      else if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); closePicker(true); }
    });
    render();
    input.focus();
  }

  function closePicker(back) {
    if (picker && picker.parentNode) picker.parentNode.removeChild(picker);
    picker = null;
    if (back && editor) {
      editor.focus();
      if (pickerRange) { var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(pickerRange); }
    }
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
    if (current && editor) keepDraft(current, getValue());
    closePicker(false);
    if (current && current.node) current.node.classList.remove("wb-current");
    current = b;
    if (b.expected === undefined) b.expected = b.value;  // what a save is checked against on disk
    if (b.node) {
      b.node.classList.add("wb-current");
      b.node.scrollIntoView({block: "center"});
    }
    document.body.classList.add("wb-panel-open");
    panel.setAttribute("data-index", String(b.index));
    panel.textContent = "";
    panel.scrollTop = 0;
    var head = el("header", "wb-head");
    head.appendChild(el("h2", "", b.plain ? b.label : "Block " + (b.index + 1)));
    var status = el("span", "wb-status", LABELS[b.status]);
    status.setAttribute("data-status", b.status);
    head.appendChild(status);
    if (b.reviewed) head.appendChild(el("span", "wb-reviewed", (b.reviewed.status === "rejected" ? (b.reviewed.current ? "rejected by " : "rejection outdated: ") : b.reviewed.current ? "reviewed by " : "review outdated: ") + b.reviewed.by + ", " + b.reviewed.date));
    var close = el("button", "wb-close", "×");
    close.setAttribute("aria-label", "Close (Escape)");
    close.addEventListener("click", closePanel);
    head.appendChild(close);
    panel.appendChild(head);

    // The English and the translation side by side (each scrolls on its own, so that a long
    // block keeps the editor in view); everything else below.
    var work = el("div", "wb-work");
    panel.appendChild(work);
    var english = el("section", "wb-part wb-english-part");
    english.appendChild(el("h2", "wb-label", "English"));
    var en = el("div", "wb-english");
    en.setAttribute("lang", "en");
    en.innerHTML = b.english;
    english.appendChild(en);
    work.appendChild(english);

    var edit = el("section", "wb-part wb-edit");
    edit.appendChild(el("h2", "wb-label", "Translation (" + state.lang + ")"));
    work.appendChild(edit);
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
    b.opened = getValue();
    editor.addEventListener("input", function () { keepDraft(b, getValue()); scheduleCheck(); });
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
    var message = el("div", "wb-message");
    message.setAttribute("role", "status");
    edit.appendChild(message);
    edit.appendChild(el("div", "wb-actions"));  // draft, conflict, confirmation, retry
    edit.appendChild(el("div", "wb-conflict"));

    if (b.placeholders.length) {
      var phs = section("Placeholders (click; Alt+0…8; Alt+9 picks by number or text; Alt+P: the next one)", "wb-palette");
      b.placeholders.forEach(function (_, n) {
        var button = el("button", "wb-ph-button");
        button.appendChild(el("kbd", "", String(n)));
        button.appendChild(chip(n, b));
        button.addEventListener("mousedown", function (e) { e.preventDefault(); });  // keep the cursor
        button.addEventListener("click", function () { insertPlaceholder(n); });
        phs.appendChild(button);
      });
    }
    section("Checks", "wb-checks").appendChild(el("ul", "wb-findings"));

    if (b.suggestion) {
      var sug = section("Fuzzy suggestion (translated a similar older English)", "wb-suggestion");
      var text = el("div", "wb-suggestion-text");
      text.appendChild(fragmentOf(b.suggestion.value, b));
      sug.appendChild(text);
      var accept = el("button", "wb-accept", "Accept suggestion (Alt+A)");
      accept.addEventListener("click", acceptSuggestion);
      sug.appendChild(accept);
    }

    var memory = section("Translation memory (Alt+M: use the best)", "wb-memory");
    memory.appendChild(el("ul", "wb-memory-list")).appendChild(el("li", "wb-none", "Looking…"));
    var conc = section("Concordance: how was it translated before? (Alt+F)", "wb-concordance");
    var form = el("form", "wb-concordance-form");
    form.setAttribute("role", "search");
    var box = el("input", "wb-concordance-q");
    box.type = "search";
    box.setAttribute("aria-label", "Search the English and the translations");
    box.placeholder = "a word or phrase, in English or " + state.lang;
    form.appendChild(box);
    var go = el("button", "wb-concordance-go", "Search");
    go.type = "submit";
    form.appendChild(go);
    form.addEventListener("submit", function (e) { e.preventDefault(); concordance(box.value); });
    box.addEventListener("keydown", function (e) {
      if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); editor.focus(); }
    });
    conc.appendChild(form);
    conc.appendChild(el("ul", "wb-concordance-list"));

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
        use.addEventListener("click", function () { setValue(entry.value, b); changed(); editor.focus(); });
        row.appendChild(use);
        details.appendChild(row);
      });
      stale.appendChild(details);
    }
    var preview = section("Preview", "wb-preview-part");
    preview.appendChild(el("div", "wb-preview"));
    section("Glossary", "wb-glossary-part").appendChild(el("ul", "wb-glossary"));
    showGlossary(b.glossary);
    showFindings(b.findings);
    editor.focus();
    placeCursorAtFirstWord();
    offerDraft(b);
    runCheck();
    loadMemory(b);
  }

  // A draft left from before (a reload, a restarted server, another block opened) is offered.
  function offerDraft(b) {
    var d = loadDraft(b.key);
    if (!d || d.value === getValue()) return;
    var box = actions("wb-draft");
    var when = new Date(d.at);
    box.appendChild(el("span", "", "Unsaved draft from " + when.toLocaleTimeString() +
      (d.session === SESSION ? " (this session)" : " (an earlier session)") + ": "));
    var keep = el("button", "wb-draft-restore", "Restore the draft");
    keep.addEventListener("click", function () {
      setValue(d.value, b);
      if (typeof d.expected === "string") b.expected = d.expected;  // a change on disk since then is a conflict
      clearActions();
      changed();
      editor.focus();
    });
    var drop = el("button", "wb-draft-discard", "Discard it");
    drop.addEventListener("click", function () { dropDraft(b.key); clearActions(); if (b.node) blockElement(b); renderBar(); editor.focus(); });
    box.appendChild(keep);
    box.appendChild(drop);
  }

  function actions(kind) {
    var box = panel.querySelector(".wb-actions");
    box.textContent = "";
    box.setAttribute("data-kind", kind);
    return box;
  }

  function clearActions() {
    var box = panel && panel.querySelector(".wb-actions");
    if (box) { box.textContent = ""; box.removeAttribute("data-kind"); }
    var conflict = panel && panel.querySelector(".wb-conflict");
    if (conflict) conflict.textContent = "";
  }

  function changed() {
    keepDraft(current, getValue());
    runCheck();
  }

  // -----------------------------------------------------------------------------------------
  // Translation memory and concordance (entries from other files: shown as text, never as HTML)

  function plainWithMarks(text) {
    var frag = document.createDocumentFragment();
    text.split("\u2058").forEach(function (part, i) {
      if (i) frag.appendChild(el("span", "wb-ph wb-ph-mark", "▢"));
      frag.appendChild(document.createTextNode(part));
    });
    return frag;
  }

  function loadMemory(b, tries) {
    api("memory", {url: PAGE, key: b.key}).then(function (r) {
      if (current !== b) return;
      var list = panel.querySelector(".wb-memory-list");
      if (r.status !== 200) { list.textContent = ""; list.appendChild(el("li", "wb-none", r.data.error || "no answer")); return; }
      if (!r.data.ready) {
        if ((tries || 0) < 30) setTimeout(function () { loadMemory(b, (tries || 0) + 1); }, 500);
        return;
      }
      b.memory = r.data.suggestions;
      list.textContent = "";
      if (!b.memory.length) list.appendChild(el("li", "wb-none", "No similar English among " + r.data.size + " translated entries."));
      b.memory.forEach(function (m, i) {
        var li = el("li", "wb-memory-item");
        li.setAttribute("data-percent", String(m.percent));
        li.appendChild(el("strong", "wb-memory-percent", m.percent + " %"));
        var en = el("div", "wb-memory-en");
        en.setAttribute("lang", "en");
        en.appendChild(plainWithMarks(m.english));
        li.appendChild(en);
        var tr = el("div", "wb-memory-tr");
        tr.setAttribute("lang", state.lang);
        tr.appendChild(plainWithMarks(m.translation));
        li.appendChild(tr);
        li.appendChild(el("small", "wb-memory-source", m.source));
        var use = el("button", "wb-memory-use", i === 0 ? "Use (Alt+M)" : "Use");
        use.addEventListener("click", function () { useMemory(m); });
        li.appendChild(use);
        list.appendChild(li);
      });
    });
  }

  function useMemory(m) {
    if (!current || !m) return;
    setValue(m.value, current);
    editor.focus();
    changed();
    flash("Copied from the memory (" + m.percent + " %, " + m.source + "): check it against the English, then save.");
  }

  function marked(text, q) {  // the text, with the phrase searched for in <mark>
    var frag = document.createDocumentFragment(), low = text.toLowerCase(), at = q ? low.indexOf(q.toLowerCase()) : -1;
    if (at < 0) { frag.appendChild(plainWithMarks(text)); return frag; }
    frag.appendChild(plainWithMarks(text.slice(0, at)));
    frag.appendChild(el("mark", "", text.slice(at, at + q.length)));
    frag.appendChild(plainWithMarks(text.slice(at + q.length)));
    return frag;
  }

  function concordance(q) {
    var list = panel.querySelector(".wb-concordance-list");
    q = q.replace(/\s+/g, " ").trim();
    list.textContent = "";
    if (q.length < 2) { list.appendChild(el("li", "wb-none", "Type at least two characters.")); return; }
    api("concordance", {q: q}).then(function (r) {
      if (!current) return;
      list.textContent = "";
      if (r.status !== 200) { list.appendChild(el("li", "wb-none", r.data.error || "no answer")); return; }
      if (!r.data.ready) { list.appendChild(el("li", "wb-none", "The memory is still being read; search again in a moment.")); return; }
      if (!r.data.hits.length) list.appendChild(el("li", "wb-none", "“" + q + "” is in none of " + r.data.size + " translated entries."));
      r.data.hits.forEach(function (h) {
        var li = el("li", "wb-concordance-item");
        li.setAttribute("data-where", h.where);
        var en = el("div", "wb-concordance-en");
        en.setAttribute("lang", "en");
        en.appendChild(h.where === "english" ? marked(h.english, q) : plainWithMarks(h.english));
        var tr = el("div", "wb-concordance-tr");
        tr.setAttribute("lang", state.lang);
        tr.appendChild(h.where === "translation" ? marked(h.translation, q) : plainWithMarks(h.translation));
        li.appendChild(en);
        li.appendChild(tr);
        li.appendChild(el("small", "wb-memory-source", h.source));
        list.appendChild(li);
      });
    });
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
    if (current && editor) keepDraft(current, getValue());
    closePicker(false);
    if (current && current.node) blockElement(current);
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
      li.appendChild(document.createTextNode(" "));
      li.appendChild(messageFragment(f.message, current));
      li.appendChild(document.createTextNode(" "));
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

  // Checks follow the typing: each change is sent at once, and while one check is on its way
  // only the latest text waits for the next (no fixed delay; the server answers in a few ms).
  var checking = false, checkAgain = false, typedAt = 0;
  function scheduleCheck() {
    typedAt = performance.now();
    if (checking) { checkAgain = true; return; }
    runCheck();
  }

  function runCheck() {
    if (!current) return;
    var b = current, value = getValue(), started = typedAt || performance.now();
    checking = true;
    checkAgain = false;
    api("check", {url: PAGE, key: b.key, value: value}, 10000).then(function (r) {
      checking = false;
      if (current !== b) return;
      if (checkAgain) { runCheck(); return; }  // the text changed meanwhile: this answer is old
      if (r.status !== 200) {
        if (r.status === 0 || r.status >= 500) { connection = "The editor's server does not answer (" + r.data.error + ")."; showConnection(); }
        return;
      }
      showFindings(r.data.findings);
      showGlossary(r.data.glossary);
      // How long the findings took to follow the last keystroke (benchmarks/workbench_bench.py).
      panel.setAttribute("data-check-ms", String(Math.round(performance.now() - started)));
      var preview = panel.querySelector(".wb-preview");
      if (r.data.preview !== null) preview.innerHTML = r.data.preview;  // sanitised by the server
      else preview.textContent = r.data.status === "untranslated" ? "(empty: the page shows the English)" : "(fails a check: the page would show the English)";
      if (typeof r.data.repaired === "string") {  // shown only repaired: not saved as it is
        var take = el("button", "wb-take-repaired", "Not saved as typed: use the repaired form");
        take.addEventListener("click", function () { setValue(r.data.repaired, b); editor.focus(); changed(); });
        preview.appendChild(take);
      }
    });
  }

  function saved(b, r, andNext) {
    var fresh = r.data.block;
    fresh.node = b.node;
    fresh.index = b.index;
    fresh.expected = fresh.value;
    state.blocks[b.index] = fresh;
    state.counts = r.data.counts;
    state.build = r.data.build;
    dropDraft(b.key);
    if (fresh.node) blockElement(fresh);
    renderBar();
    if (andNext && goNext(1)) return;
    current = fresh;
    fresh.opened = getValue();
    if (fresh.node) fresh.node.classList.add("wb-current");
    clearActions();
    flash("Saved to " + (r.data.written.join(", ") || state.file + " (unchanged)") +
      (andNext ? ". Every block of this page is translated." : ""), "ok");
    showFindings(fresh.findings);
  }

  // Save what the editor holds (or `value`), checked against `b.expected`, the entry as it was
  // on disk when it was opened (or as the translator last chose in a conflict).
  function doSave(andNext, options) {
    if (!current) return;
    options = options || {};
    var b = current, value = options.value !== undefined ? options.value : getValue();
    keepDraft(b, value);
    flash("Saving…");
    var body = {url: PAGE, key: b.key, value: value, expected: b.expected};
    if (options.sameAsEnglish) body.same_as_english = true;
    api("save", body).then(function (r) {
      if (current !== b) return;
      if (r.status === 200) {
        connection = null;
        if (options.value !== undefined) setValue(value, b);
        saved(b, r, andNext);
        return;
      }
      if (r.data.findings) showFindings(r.data.findings);
      var text = r.data.error || "not saved";
      if (r.status === 409 && typeof r.data.current === "string") { conflict(b, value, r.data.current, andNext); flash(text, "error"); return; }
      if (r.status === 422 && r.data.same_as_english) { confirmEnglish(b, value, andNext); flash(text, "error"); return; }
      if (r.status === 0 || r.status >= 500 || r.status === 403) {
        connection = r.status === 403
          ? "This page's session has ended (the editor's server was restarted): open the address it printed."
          : "The editor's server does not answer (" + text + ").";
        showConnection();
        var box = actions("wb-retry");
        box.appendChild(el("span", "", "Not saved: " + text + ". Your text is kept as a draft. "));
        var retry = el("button", "wb-retry-button", "Retry the save");
        retry.addEventListener("click", function () { doSave(andNext, options); });
        box.appendChild(retry);
        flash("Not saved: " + (r.status === 403 ? connection : text), "error");
        return;
      }
      flash(text, "error");
    });
  }

  // The English unchanged is saved as a translation only when the translator says so.
  function confirmEnglish(b, value, andNext) {
    var box = actions("wb-confirm");
    box.appendChild(el("span", "", "This is still the English. Translate it, or keep these words in English: "));
    var yes = el("button", "wb-confirm-english", "Save the English as the translation");
    yes.addEventListener("click", function () { clearActions(); doSave(andNext, {value: value, sameAsEnglish: true}); });
    box.appendChild(yes);
    yes.focus();  // Enter confirms; typing goes on in the editor after a click there
  }

  // A 409: the entry changed on disk since it was opened. Both texts are shown; nothing is lost.
  function conflict(b, mine, theirs, andNext) {
    var box = panel.querySelector(".wb-conflict");
    box.textContent = "";
    box.appendChild(el("h2", "wb-label", "Changed on disk since you opened it"));
    var pair = el("div", "wb-conflict-pair");
    var left = el("div", "wb-conflict-side");
    left.appendChild(el("h3", "", "Yours (in the editor)"));
    var yours = el("div", "wb-conflict-mine");
    yours.appendChild(fragmentOf(mine, b));
    left.appendChild(yours);
    var right = el("div", "wb-conflict-side");
    right.appendChild(el("h3", "", "On disk now"));
    var disk = el("div", "wb-conflict-theirs");
    disk.appendChild(fragmentOf(theirs, b));
    right.appendChild(disk);
    pair.appendChild(left);
    pair.appendChild(right);
    box.appendChild(pair);
    var buttons = el("div", "wb-buttons");
    var keepMine = el("button", "wb-keep-mine", "Keep mine (save over it)");
    keepMine.addEventListener("click", function () { b.expected = theirs; box.textContent = ""; doSave(andNext, {value: getValue()}); });
    var takeTheirs = el("button", "wb-take-theirs", "Take theirs");
    takeTheirs.addEventListener("click", function () {
      b.expected = theirs;
      setValue(theirs, b);
      box.textContent = "";
      dropDraft(b.key);
      flash("The editor now holds the text on disk.", "ok");
      runCheck();
      editor.focus();
    });
    var both = el("button", "wb-edit-both", "Edit both");
    both.addEventListener("click", function () {
      // Theirs becomes editable beside yours: take from either, then save the editor.
      b.expected = theirs;
      disk.contentEditable = "true";
      disk.setAttribute("role", "textbox");
      disk.setAttribute("aria-label", "The text on disk (editable)");
      var useIt = el("button", "wb-use-theirs", "Put this one in the editor");
      useIt.addEventListener("click", function () {
        var keep = editor;
        editor = disk;
        var value = getValue();
        editor = keep;
        setValue(value, b);
        changed();
        editor.focus();
      });
      right.appendChild(useIt);
      both.disabled = true;
      flash("Edit either text; the editor's is what Ctrl+S saves (over the text on disk).");
      editor.focus();
    });
    buttons.appendChild(keepMine);
    buttons.appendChild(takeTheirs);
    buttons.appendChild(both);
    box.appendChild(buttons);
  }

  function acceptSuggestion() {
    if (!current || !current.suggestion) return;
    setValue(current.suggestion.value, current);
    editor.focus();
    changed();
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
    if (picker && picker.contains(e.target) && !(e.ctrlKey || e.metaKey)) return;
    var mod = e.ctrlKey || e.metaKey;
    if (mod && e.key === "Enter") { e.preventDefault(); doSave(true); return; }
    if (mod && (e.key === "s" || e.key === "S")) { e.preventDefault(); doSave(false); return; }
    if (e.altKey && !mod) {
      if (e.code === "KeyN" || e.key === "ArrowDown") { e.preventDefault(); goNext(1); return; }
      if (e.key === "ArrowUp") { e.preventDefault(); goNext(-1); return; }
      if (e.code === "KeyA") { e.preventDefault(); acceptSuggestion(); return; }
      if (e.code === "KeyP") { e.preventDefault(); insertNextPlaceholder(); return; }
      if (e.code === "KeyR") { e.preventDefault(); markReviewed(); return; }
      if (e.code === "KeyM" && current) { e.preventDefault(); useMemory((current.memory || [])[0]); return; }
      if (e.code === "KeyF" && current) { e.preventDefault(); panel.querySelector(".wb-concordance-q").focus(); return; }
      var digit = /^Digit(\d)$/.exec(e.code);
      if (digit && current) {
        e.preventDefault();
        if (digit[1] === "9") openPicker("");
        else insertPlaceholder(parseInt(digit[1], 10));
        return;
      }
    }
    if (e.key === "Escape" && picker) { e.preventDefault(); closePicker(true); return; }
    if (e.key === "Escape" && current && !(e.target.closest && e.target.closest(".wb-concordance"))) { e.preventDefault(); closePanel(); return; }
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
    api("build", null, 5000).then(function (r) {
      var was = connection;
      connection = r.status === 200 ? null : r.status === 403
        ? "This page's session has ended (the editor's server was restarted): open the address it printed."
        : "The editor's server does not answer (" + (r.data.error || r.status) + "); trying again every 2 s.";
      if (was !== connection) showConnection();
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
        state.blocks.forEach(function (b) { b.expected = b.value; });
        state.blocks.forEach(function (b, i) { b.node = nodes[i]; });
        renderBlocks();
        if (open !== null && state.blocks[open] && state.blocks[open].node) state.blocks[open].node.classList.add("wb-current");
      });
    }).catch(function () {}).then(function () { setTimeout(follow, 2000); });
  }

  api("page?url=" + encodeURIComponent(PAGE)).then(function (r) {
    if (r.status !== 200) { console.error("workbench:", r.data.error); return; }
    r.data.blocks.forEach(function (b) { b.expected = b.value; });
    state = r.data;
    renderBlocks();
    document.documentElement.setAttribute("data-workbench", "ready");
    setTimeout(follow, 2000);
  });
})();
