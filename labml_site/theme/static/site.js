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
    button.addEventListener("click", function () {
      var text = codeText(block);
      var done = function () {
        button.textContent = ui.copied || "Copied";
        setTimeout(function () { button.textContent = ui.copy || "Copy"; }, 1500);
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
  function notebookOf(plan, markdown) {
    var sections = document.querySelectorAll(".page > .section"), cells = [];
    if (plan.intro) { cells.push({cell_type: "markdown", id: "intro", metadata: {}, source: notebookLines(plan.intro)}); }
    plan.cells.forEach(function (cell, i) {
      var prose = cell[1].map(function (part) {
        var text = markdown[part[0]] || "";
        return text && part[1] ? part[1] + "\n\n" + text : text;
      }).filter(Boolean);
      if (prose.length) { cells.push({cell_type: "markdown", id: "c" + i + "-md", metadata: {}, source: notebookLines(prose.join("\n\n"))}); }
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
  function download(plan, markdown) {
    var blob = new Blob([JSON.stringify(notebookOf(plan, markdown), null, 1) + "\n"], {type: "application/x-ipynb+json"});
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
      var ready = function () { download(plan, (window.labmlMarkdown || {})[plan.prose.page] || []); };
      if (window.labmlMarkdown) { ready(); return; }
      // a script, not a fetch, so that it loads from file:// too; if it cannot, the English file
      var script = document.createElement("script");
      script.src = plan.prose.src;
      script.onload = ready;
      script.onerror = function () { window.location.href = a.href; };
      document.head.appendChild(script);
    });
  });

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

  // Bilingual reading: the English original under each translated section. The choice is
  // remembered across pages (and languages) in localStorage.
  var STORE = "labml-site-show-original";
  function remembered() { try { return localStorage.getItem(STORE) === "1"; } catch (e) { return false; } }
  // The English prose is one script per folder (the same for every translation), loaded the
  // first time it is asked for: a script, not a fetch, so that it loads from file:// too.
  var originalsLoading = false;
  function insertOriginals(button) {
    var label = button.dataset.label, originals = (window.labmlOriginals || {})[button.dataset.page] || {};
    document.querySelectorAll(".page > .section[data-original]").forEach(function (section) {
      var html = originals[section.id], docs = section.querySelector(".docs");
      if (!html || !docs || docs.querySelector(".original")) { return; }
      var box = document.createElement("div");
      box.className = "original";
      box.setAttribute("lang", "en");
      var heading = document.createElement("p");
      heading.className = "original-label";
      heading.setAttribute("lang", document.documentElement.lang);
      heading.textContent = label;
      box.appendChild(heading);
      box.insertAdjacentHTML("beforeend", html);  // the builder's own English page prose
      docs.appendChild(box);
    });
  }
  function loadOriginals(button) {
    if (window.labmlOriginals) { insertOriginals(button); return; }
    if (originalsLoading) { return; }
    originalsLoading = true;
    var script = document.createElement("script");
    script.src = button.dataset.src;
    script.onload = function () { insertOriginals(button); };
    document.head.appendChild(script);
  }
  function showOriginal(on) {
    document.documentElement.classList.toggle("show-original", on);
    document.querySelectorAll(".bilingual-toggle").forEach(function (b) {
      b.setAttribute("aria-pressed", on ? "true" : "false");
      if (on) { loadOriginals(b); }
    });
  }
  document.querySelectorAll(".bilingual-toggle").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var on = button.getAttribute("aria-pressed") !== "true";
      try { localStorage.setItem(STORE, on ? "1" : "0"); } catch (e) { /* private mode: this page only */ }
      showOriginal(on);
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
    var mark = function () {
      var section = sectionInView(), link = null;
      // The entry of the nearest section at or above the one in view that has a heading.
      for (var i = Array.prototype.indexOf.call(sections, section); i >= 0 && !link; i--) { link = byId[sections[i].id] || null; }
      if (!link && links.length) { link = links[0]; }
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
