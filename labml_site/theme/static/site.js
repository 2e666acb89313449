// labml_site: small progressive enhancements. The pages work without JavaScript.
(function () {
  "use strict";
  var ui = document.documentElement.dataset;

  // Copy buttons on code: copy the code text without the CSS-generated line numbers.
  function codeText(block) {
    return Array.prototype.map.call(block.querySelectorAll(".line"), function (l) {
      // Empty source lines are rendered as a single space so the row keeps its height.
      return l.textContent === " " ? "" : l.textContent;
    }).join("\n");
  }

  function selectText(node) {
    var range = document.createRange();
    range.selectNodeContents(node);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  document.querySelectorAll(".section > .code").forEach(function (block) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy-button";
    button.textContent = ui.copy || "Copy";
    button.title = ui.copy || "Copy";
    button.addEventListener("click", function () {
      var text = codeText(block);
      var done = function () {
        button.textContent = ui.copied || "Copied";
        button.setAttribute("data-done", "");
        setTimeout(function () { button.textContent = ui.copy || "Copy"; button.removeAttribute("data-done"); }, 1500);
      };
      // Where the clipboard is not available, select the code so the reader can copy it.
      var fallback = function () { selectText(block.querySelector("code") || block); };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, fallback);
      } else {
        fallback();
      }
    });
    block.appendChild(button);
  });

  // A translation's notebook, made when the reader asks for it (no file per page and language):
  // the English notebook's cells (data-notebook says which sections make each), each section's
  // prose as Markdown with TeX (made by the builder, as for page.md: one script per folder and
  // language, loaded on the first click), the code exactly as on the page. Without JavaScript
  // the link downloads the English notebook.
  function notebookLines(text) {  // nbformat's form: lines keeping their newline, but the last
    if (!text) { return []; }
    var parts = text.split("\n"), lines = parts.slice(0, -1).map(function (l) { return l + "\n"; });
    if (parts[parts.length - 1]) { lines.push(parts[parts.length - 1]); }
    return lines;
  }
  // A figure is embedded in the cell that shows it (the builder wrote `attachment:name` there).
  function markdownCell(id, text, attachments) {
    var cell = {cell_type: "markdown", id: id, metadata: {}, source: notebookLines(text)}, used = {}, any = false;
    Object.keys(attachments).forEach(function (name) {
      if (text.indexOf("(attachment:" + name + ")") >= 0) { used[name] = attachments[name]; any = true; }
    });
    if (any) { cell.attachments = used; }
    return cell;
  }
  function notebookOf(plan, markdown, attachments) {
    var sections = document.querySelectorAll(".page > .section"), cells = [];
    if (plan.intro) { cells.push({cell_type: "markdown", id: "intro", metadata: {}, source: notebookLines(plan.intro)}); }
    plan.cells.forEach(function (cell, i) {
      var prose = cell[1].map(function (part) {
        var text = markdown[part[0]] || "";
        return text && part[1] ? part[1] + "\n\n" + text : text;
      }).filter(Boolean);
      if (prose.length) { cells.push(markdownCell("c" + i + "-md", prose.join("\n\n"), attachments)); }
      if (cell[0].length) {
        var code = cell[0].map(function (index) { return codeText(sections[index].querySelector(".code")); }).join("\n");
        cells.push({cell_type: "code", id: "c" + i + "-code", metadata: {}, execution_count: null, outputs: [], source: notebookLines(code)});
      }
    });
    return {
      nbformat: 4, nbformat_minor: 5,
      metadata: {kernelspec: {name: "python3", display_name: "Python 3", language: "python"}, language_info: {name: "python"}, title: plan.title},
      cells: cells
    };
  }
  function download(plan, markdown, attachments) {
    var blob = new Blob([JSON.stringify(notebookOf(plan, markdown, attachments), null, 1) + "\n"], {type: "application/x-ipynb+json"});
    var link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = plan.name;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(function () { URL.revokeObjectURL(link.href); }, 60000);
  }
  document.querySelectorAll("a[data-notebook]").forEach(function (a) {
    a.addEventListener("click", function (event) {
      var plan;
      try { plan = JSON.parse(a.dataset.notebook); } catch (e) { return; }  // the English file, then
      if (!plan.prose) { return; }
      event.preventDefault();
      var ready = function () { download(plan, (window.labmlMarkdown || {})[plan.prose.page] || [], (window.labmlAttachments || {})[plan.prose.page] || {}); };
      // scripts, not fetches, so that they load from file:// too; if one cannot, the English file
      var load = function (src, loaded, then) {
        if (!src || loaded) { then(); return; }
        var script = document.createElement("script");
        script.src = src;
        script.onload = then;
        script.onerror = function () { window.location.href = a.href; };
        document.head.appendChild(script);
      };
      load(plan.prose.src, window.labmlMarkdown, function () {  // the prose, then the page's figures
        load(plan.figures, (window.labmlAttachments || {})[plan.prose.page], ready);
      });
    });
  });

  // A wrapped code line continues at its own indentation (style.css's hanging indent): each
  // line's leading spaces, as --indent (tabs as the tab size, 4).
  document.querySelectorAll("pre.code .line").forEach(function (line) {
    var lead = /^[ \t]*/.exec(line.textContent)[0], n = 0;
    for (var i = 0; i < lead.length; i++) { n += lead[i] === "\t" ? 4 - (n % 4) : 1; }
    if (n && n < line.textContent.length) { line.style.setProperty("--indent", String(n)); }
  });

  // A figure's facts: an SVG's <title> that says more than the image's alt text (numbers a plot
  // carries, as the learned-attention page's heads) is shown under the figure, since an <img>
  // never shows it. The figure is the site's own (same origin, already loaded, so from the
  // cache); opened from file://, where it cannot be read, the page stays as it is.
  function squash(text) { return (text || "").replace(/\s+/g, " ").trim(); }
  if (location.protocol !== "file:" && window.fetch && window.DOMParser) {
    document.querySelectorAll(".docs img[src$='.svg']").forEach(function (img) {
      fetch(img.src).then(function (r) { return r.ok ? r.text() : ""; }).then(function (text) {
        if (!text) { return; }
        var doc = new DOMParser().parseFromString(text, "image/svg+xml");
        var title = doc.documentElement && doc.documentElement.querySelector(":scope > title");
        var facts = squash(title && title.textContent), alt = squash(img.alt);
        var block = img.closest("p, figure, li, div") || img.parentElement;
        // Nothing to add: the title is the alt text, or the page already says it beside the figure.
        if (!facts || facts === alt || facts.length <= alt.length || squash(block.textContent).indexOf(facts) >= 0) { return; }
        var next = block.nextElementSibling;
        if (next && squash(next.textContent).indexOf(facts) >= 0) { return; }
        var caption = document.createElement("span");
        caption.className = "figure-facts";
        caption.textContent = facts;
        img.after(caption);
      }).catch(function () { /* the figure stays as it is */ });
    });
  }

  // Only boxes that scroll sideways need to be tab stops, to scroll them with the arrow keys:
  // code blocks (focusable in the HTML, for readers without JavaScript) and wide display
  // formulas on narrow screens.
  function tabStops() {
    document.querySelectorAll(".section > .code > pre.code, .docs math[display=block]").forEach(function (box) {
      var scrolls = box.scrollWidth > box.clientWidth + 1;
      if (scrolls) { box.setAttribute("tabindex", "0"); } else { box.removeAttribute("tabindex"); }
      box.classList.toggle("scrolls", scrolls);
    });
  }
  tabStops();
  // What scrolls changes when the layout settles: the web fonts arrive, the contents panel opens.
  if (document.fonts && document.fonts.ready) { document.fonts.ready.then(tabStops); }
  window.addEventListener("load", tabStops);
  var resizing = null;
  window.addEventListener("resize", function () { clearTimeout(resizing); resizing = setTimeout(tabStops, 150); });

  // Clicking a name in the code highlights its other uses on the page; Escape clears.
  var NAME = ".code .n, .code .nc, .code .nf, .code .fm, .code .nn, .code .nb";
  var names = null;
  var current = null;
  function highlight(name) {
    names = names || document.querySelectorAll(NAME);
    current = name;
    Array.prototype.forEach.call(names, function (el) {
      el.classList.toggle("use-highlight", name !== null && el.textContent === name);
    });
  }
  document.addEventListener("click", function (e) {
    var el = e.target.closest ? e.target.closest(NAME) : null;
    if (!el) { return; }
    var link = el.closest("a.def-link");
    // A second click on a plain name clears; a link always keeps the highlight it navigates with.
    highlight(!link && current === el.textContent ? null : el.textContent);
  });
  document.addEventListener("focusin", function (e) {
    var link = e.target.closest ? e.target.closest("a.def-link") : null;
    if (link) { highlight(link.textContent); }
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && current !== null && !(e.target.closest && e.target.closest(".search"))) {
      highlight(null);
    }
  });

  // Bilingual reading: the English of each translated block under that block, when asked for.
  // The builder marks where each translated block starts (a comment, `<!--en:N-->`, N the block's
  // place in its section); the English comes from one script per folder (the same for every
  // translation: each section's blocks' English), loaded the first time it is asked for (a
  // script, not a fetch, so that it loads from file:// too). What needs no translation is not
  // repeated: figures, display formulas and code; an English heading is shown as a paragraph,
  // so the outline keeps one h1 and the reader's language's headings only.
  // The choice is remembered across pages (and languages) in localStorage.
  var STORE = "labml-site-show-original";
  function remembered() { try { return localStorage.getItem(STORE) === "1"; } catch (e) { return false; } }
  var originalsLoading = false;
  var MARK = /^en:(\d+)$/;
  function blocksOf(docs) {  // [block index, its elements] in the order of the prose
    var found = [], current = null;
    Array.prototype.forEach.call(docs.childNodes, function (node) {
      var m = node.nodeType === 8 ? MARK.exec(node.data) : null;
      if (m) { current = [parseInt(m[1], 10), []]; found.push(current); return; }
      if (node.nodeType !== 1 || !current) { return; }
      // an untranslated block (shown in English already) ends the translated one before it
      if (node.classList.contains("untranslated") || node.classList.contains("original")) { current = null; return; }
      current[1].push(node);
    });
    return found;
  }
  var REPEATS = "img, svg, picture, figure, pre, math[display='block'], .katex-display";
  function englishOf(element) {  // what of an English element to show: null for nothing
    var copy = element.cloneNode(true);
    copy.querySelectorAll(REPEATS).forEach(function (e) { e.remove(); });
    if (copy.matches(REPEATS)) { return null; }
    var words = copy.textContent.replace(/\s+/g, "");
    if (!words && !copy.querySelector("math")) { return null; }  // a figure's or a formula's paragraph
    if (/^H[1-6]$/.test(copy.tagName)) {
      var p = document.createElement("p");
      p.className = "original-heading";
      while (copy.firstChild) { p.appendChild(copy.firstChild); }
      copy = p;
    }
    copy.querySelectorAll("[id]").forEach(function (e) { e.removeAttribute("id"); });  // ids stay unique
    copy.removeAttribute("id");
    return copy;
  }
  function englishBox(elements) {
    var box = document.createElement("div");
    box.className = "original";
    box.setAttribute("lang", "en");
    box.setAttribute("dir", "ltr");
    elements.forEach(function (e) { box.appendChild(e); });
    return box;
  }
  function insertOriginals(button) {
    var originals = (window.labmlOriginals || {})[button.dataset.page] || {};
    document.querySelectorAll(".page > .section[data-original]").forEach(function (section) {
      var english = originals[section.id], docs = section.querySelector(".docs");
      if (!english || !docs || docs.querySelector(".original")) { return; }
      blocksOf(docs).forEach(function (block) {
        var html = english[block[0]], shown = block[1];
        if (!html || !shown.length) { return; }
        var holder = document.createElement("div");
        holder.innerHTML = html;  // the builder's own English page prose
        var parts = Array.prototype.slice.call(holder.children);
        if (parts.length === shown.length) {  // element by element: each under its translation
          parts.forEach(function (part, i) {
            var e = englishOf(part);
            if (e) { shown[i].after(englishBox([e])); }
          });
        } else {  // the translation is cut otherwise: the block's English after the block
          var kept = parts.map(englishOf).filter(Boolean);
          if (kept.length) { shown[shown.length - 1].after(englishBox(kept)); }
        }
      });
    });
    tabStops();
  }
  function loadOriginals(button) {
    if (window.labmlOriginals) { insertOriginals(button); return; }
    if (originalsLoading) { return; }
    originalsLoading = true;
    var script = document.createElement("script");
    script.src = button.dataset.src;
    script.onload = function () { insertOriginals(button); keepPlace(); };
    document.head.appendChild(script);
  }
  // Showing or hiding the English moves everything below the header: keep the block being read
  // where it was on screen.
  var anchor = null;
  function notePlace() {
    var line = window.innerHeight / 5;
    anchor = null;
    var blocks = document.querySelectorAll(".page > .section .docs > :not(.original)");
    for (var i = 0; i < blocks.length; i++) {
      var r = blocks[i].getBoundingClientRect();
      if (r.bottom > line) { anchor = [blocks[i], r.top]; break; }
    }
  }
  function keepPlace() {
    if (!anchor || window.scrollY === 0) { return; }
    window.scrollBy(0, anchor[0].getBoundingClientRect().top - anchor[1]);
  }
  function showOriginal(on) {
    document.documentElement.classList.toggle("show-original", on);
    document.querySelectorAll(".bilingual-toggle").forEach(function (b) {
      // The label says what a click will do (so no aria-pressed, which would contradict it).
      b.textContent = on ? b.dataset.hide : b.dataset.show;
      b.dataset.on = on ? "true" : "false";
      if (on) { loadOriginals(b); }
    });
  }
  document.querySelectorAll(".bilingual-toggle").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var on = button.dataset.on !== "true";
      try { localStorage.setItem(STORE, on ? "1" : "0"); } catch (e) { /* private mode: this page only */ }
      notePlace();
      showOriginal(on);
      keepPlace();
    });
  });
  if (document.querySelector(".bilingual-toggle")) { showOriginal(remembered()); }

  // The section being read: the last one whose top is above a fifth of the window.
  var sections = document.querySelectorAll(".page > .section[id]");
  function sectionInView() {
    var line = window.innerHeight / 5, found = null;
    for (var i = 0; i < sections.length; i++) {
      if (sections[i].getBoundingClientRect().top <= line) { found = sections[i]; } else { break; }
    }
    return found;
  }

  // The language switcher keeps the section: ids are the same in every language. Without a
  // fragment in the address, the section in view is the one to land on.
  // On phones the header scrolls away: the section last read (where the reader stayed a second,
  // past the first screen) stands in when the switcher is reached by scrolling back to the top.
  var lastRead = null, dwell = null;
  window.addEventListener("scroll", function () {
    clearTimeout(dwell);
    dwell = setTimeout(function () { if (window.scrollY > window.innerHeight) { lastRead = sectionInView(); } }, 1000);
  }, {passive: true});
  document.querySelectorAll(".languages a[hreflang]").forEach(function (a) {
    function keep() {
      var section = window.scrollY > window.innerHeight / 2 ? sectionInView() : lastRead;
      var hash = location.hash || (section ? "#" + section.id : "");
      a.href = a.href.split("#")[0] + hash;
    }
    a.addEventListener("click", keep);
    a.addEventListener("auxclick", keep);
    a.addEventListener("contextmenu", keep);
  });

  // Table of contents: open as a side panel on wide screens, folded on narrow ones; the entry
  // of the section in view is marked (aria-current) as the reader scrolls.
  var toc = document.querySelector(".toc");
  if (toc) {
    var details = toc.querySelector("details");
    var wide = window.matchMedia("(min-width: 1200px)");
    var fit = function () { details.open = wide.matches; tabStops(); };
    fit();
    if (wide.addEventListener) { wide.addEventListener("change", fit); }
    toc.querySelector("summary").addEventListener("click", function (e) { if (wide.matches) { e.preventDefault(); } });
    var links = toc.querySelectorAll("a[href^='#']");
    var byId = {};
    Array.prototype.forEach.call(links, function (link) { byId[link.getAttribute("href").slice(1)] = byId[link.getAttribute("href").slice(1)] || link; });
    var marked = null;
    var header = document.querySelector(".site-header");
    // The section reached: the last whose top has come up to the header's foot (where a link to
    // it puts it); none at the top of the page, where nothing has been read yet. At the end of
    // the page, where the last sections cannot come up so far, the last whose top is in the
    // upper half of the window.
    var reached = function () {
      var foot = header && getComputedStyle(header).position === "sticky" ? header.getBoundingClientRect().bottom : 0;
      var line = foot + 24, found = -1, i;
      for (i = 0; i < sections.length && sections[i].getBoundingClientRect().top <= line; i++) { found = i; }
      if (found >= 0 && window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 2) {
        for (i = found + 1; i < sections.length && sections[i].getBoundingClientRect().top <= window.innerHeight / 2; i++) { found = i; }
      }
      return found;
    };
    var mark = function () {
      var link = null;
      // The entry of the nearest section at or above the one reached that has a heading.
      for (var i = reached(); i >= 0 && !link; i--) { link = byId[sections[i].id] || null; }
      if (link === marked) { return; }
      if (marked) { marked.removeAttribute("aria-current"); }
      if (link) { link.setAttribute("aria-current", "location"); }
      marked = link;
      if (link && wide.matches && toc.scrollHeight > toc.clientHeight) {
        var t = link.offsetTop - toc.scrollTop;
        if (t < 0 || t > toc.clientHeight - 24) { toc.scrollTop = link.offsetTop - toc.clientHeight / 3; }
      }
    };
    var pending = false;
    window.addEventListener("scroll", function () {
      if (!pending) { pending = true; requestAnimationFrame(function () { pending = false; mark(); }); }
    }, {passive: true});
    window.addEventListener("hashchange", mark);
    Array.prototype.forEach.call(links, function (link) {
      link.addEventListener("click", function () { if (!wide.matches) { details.open = false; } });
    });
    mark();
  }
})();
