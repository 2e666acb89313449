// labml_site search: lower-cased substring search over the current language's index.
// The index (search-index.js) is a script that assigns window.labmlSearchIndex, so it also loads
// from file://, where fetching JSON fails. It is loaded on first use, not with every page.
(function () {
  "use strict";
  var input = document.getElementById("search-input");
  if (!input) { return; }
  var list = document.getElementById("search-results");
  var status = document.getElementById("search-status");
  var ui = document.documentElement.dataset;
  var root = input.getAttribute("data-root") || "";
  var waiting = null;
  var prepared = null;
  // The menu shows the first few of the same ranked list the search page shows in full, and
  // says how many there are in all: the two never disagree about a count.
  var MAX_MENU = 8;
  var MAX_PAGE = 500;

  function load(callback) {
    if (window.labmlSearchIndex) { callback(prepare(window.labmlSearchIndex)); return; }
    if (waiting) { waiting.push(callback); return; }
    waiting = [callback];
    var script = document.createElement("script");
    script.src = input.getAttribute("data-index");
    script.onload = function () {
      var callbacks = waiting;
      waiting = null;
      callbacks.forEach(function (cb) { cb(prepare(window.labmlSearchIndex || { titles: [], entries: [] })); });
    };
    script.onerror = function () { waiting = null; };
    document.head.appendChild(script);
  }

  // Case-folded text; "ё" and "е" are one letter to most Russian readers.
  function fold(text) {
    return text.toLowerCase().replace(/ё/g, "е");
  }

  function prepare(index) {
    if (prepared) { return prepared; }
    prepared = index.entries.map(function (row) {
      var title = index.titles[row[0]];
      return {
        title: title, url: row[1], section: row[2], heading: row[3], text: row[4], names: row[5],
        fTitle: fold(title), fHeading: fold(row[3]), fText: fold(row[4]), fNames: fold(row[5].join(" "))
      };
    });
    return prepared;
  }

  function terms(query) {
    var folded = fold(query.normalize ? query.normalize("NFKC") : query);
    return folded.split(/\s+/).filter(function (t) { return t.length > 0; });
  }

  // Every term must occur somewhere; titles, headings and defined names weigh more than text.
  function search(entries, query) {
    var ts = terms(query);
    if (!ts.length) { return []; }
    var found = [];
    entries.forEach(function (e, order) {
      var score = 0;
      for (var i = 0; i < ts.length; i++) {
        var t = ts[i];
        var inTitle = e.fTitle.indexOf(t) >= 0;
        var inHeading = e.fHeading.indexOf(t) >= 0;
        var inNames = e.fNames.indexOf(t) >= 0;
        var inText = e.fText.indexOf(t) >= 0;
        if (!(inTitle || inHeading || inNames || inText)) { return; }
        score += (inTitle ? (e.section ? 2 : 10) : 0) + (inHeading ? 6 : 0) + (inNames ? 6 : 0) + (inText ? 1 : 0);
      }
      found.push({ entry: e, score: score, order: order });
    });
    found.sort(function (a, b) { return b.score - a.score || a.order - b.order; });
    return found.map(function (f) { return f.entry; });
  }

  function href(e) {
    if (e.more) { return e.more; }
    return root + e.url + (e.section ? "#" + e.section : "");
  }

  // Text around the first match, with matches marked; built from DOM nodes, never from HTML.
  function snippet(e, ts, into) {
    var text = e.text;
    var folded = e.fText;
    var at = -1;
    for (var i = 0; i < ts.length && at < 0; i++) { at = folded.indexOf(ts[i]); }
    if (!text) { return; }
    var start = Math.max(0, at - 40);
    var end = Math.min(text.length, (at < 0 ? 0 : at) + 120);
    var part = (start > 0 ? "…" : "") + text.slice(start, end) + (end < text.length ? "…" : "");
    mark(part, ts, into);
  }

  function mark(text, ts, into) {
    var folded = fold(text);
    var pos = 0;
    while (pos < text.length) {
      var next = -1, len = 0;
      ts.forEach(function (t) {
        var at = folded.indexOf(t, pos);
        if (at >= 0 && (next < 0 || at < next)) { next = at; len = t.length; }
      });
      if (next < 0) { break; }
      into.appendChild(document.createTextNode(text.slice(pos, next)));
      var m = document.createElement("mark");
      m.textContent = text.slice(next, next + len);
      into.appendChild(m);
      pos = next + len;
    }
    into.appendChild(document.createTextNode(text.slice(pos)));
  }

  function label(e) {
    return e.heading ? e.title + " › " + e.heading : e.title;
  }

  function countText(count) {
    return count ? (ui.results || "Results: {count}").replace("{count}", count) : (ui.noResults || "No results");
  }
  function announce(node, count) {
    if (node) { node.textContent = countText(count); }
  }
  function pageHref(query) {
    return root + "search.html?q=" + encodeURIComponent(query);
  }

  // --- The header box: a combobox with a list of suggestions --------------------------------
  var results = [];
  var active = -1;
  input.setAttribute("role", "combobox");
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-controls", "search-results");
  input.setAttribute("aria-expanded", "false");

  function close() {
    list.hidden = true;
    list.textContent = "";
    results = [];
    active = -1;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }

  function select(i) {
    var items = list.querySelectorAll("[role=option]");
    if (active >= 0 && items[active]) { items[active].setAttribute("aria-selected", "false"); }
    active = i;
    if (active >= 0 && items[active]) {
      items[active].setAttribute("aria-selected", "true");
      input.setAttribute("aria-activedescendant", items[active].id);
      items[active].scrollIntoView({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  }

  function render(entries, query) {
    var ts = terms(query);
    var all = search(entries, query);
    results = all.slice(0, MAX_MENU);
    list.textContent = "";
    active = -1;
    input.removeAttribute("aria-activedescendant");
    if (!ts.length) { close(); status.textContent = ""; return; }
    if (!results.length) {
      var empty = document.createElement("li");
      empty.setAttribute("role", "none");
      empty.className = "search-empty";
      empty.textContent = ui.noResults || "No results";
      list.appendChild(empty);
    }
    results.forEach(function (e, i) {
      var li = document.createElement("li");
      li.setAttribute("role", "none");
      var a = document.createElement("a");
      a.setAttribute("role", "option");
      a.setAttribute("aria-selected", "false");
      a.id = "search-result-" + i;
      a.tabIndex = -1;
      a.href = href(e);
      var title = document.createElement("span");
      title.className = "search-result-title";
      mark(label(e), ts, title);
      a.appendChild(title);
      var small = document.createElement("small");
      snippet(e, ts, small);
      a.appendChild(small);
      li.appendChild(a);
      list.appendChild(li);
    });
    if (all.length > results.length) {  // the rest: on the search page, with the same count
      var more = document.createElement("li");
      more.setAttribute("role", "none");
      var link = document.createElement("a");
      link.setAttribute("role", "option");
      link.setAttribute("aria-selected", "false");
      link.id = "search-result-" + results.length;
      link.tabIndex = -1;
      link.className = "search-more";
      link.href = pageHref(query);
      link.textContent = (ui.allResults || "All {count} results").replace("{count}", all.length);
      more.appendChild(link);
      list.appendChild(more);
      results = results.concat([{ more: link.href }]);
    }
    list.hidden = false;
    // The list opens under the box toward the side with room: the header may wrap the box left.
    list.classList.toggle("align-left", input.getBoundingClientRect().right < list.offsetWidth + 8);
    input.setAttribute("aria-expanded", "true");
    announce(status, all.length);
  }

  function update() {
    var query = input.value;
    load(function (entries) { if (input.value === query) { render(entries, query); } });
  }

  input.addEventListener("focus", function () { load(function () {}); });
  input.addEventListener("input", update);
  input.addEventListener("keydown", function (e) {
    if (e.key === "ArrowDown") {
      if (list.hidden && input.value) { update(); return; }
      if (results.length) { e.preventDefault(); select(Math.min(active + 1, results.length - 1)); }
    } else if (e.key === "ArrowUp") {
      if (results.length) { e.preventDefault(); select(Math.max(active - 1, -1)); }
    } else if (e.key === "Enter") {
      if (active >= 0 && results[active]) { e.preventDefault(); location.href = href(results[active]); close(); }
      // Otherwise the form submits to search.html?q=…, which lists every result.
    } else if (e.key === "Escape") {
      if (!list.hidden) { e.preventDefault(); close(); } else if (input.value) { e.preventDefault(); input.value = ""; }
    }
  });
  // Keep focus in the box while a result is clicked, and close when focus leaves the search.
  list.addEventListener("mousedown", function (e) { e.preventDefault(); });
  input.addEventListener("blur", function () { setTimeout(close, 150); });

  // --- search.html: every result for ?q=… --------------------------------------------------
  var pageInput = document.getElementById("search-page-input");
  var pageList = document.getElementById("search-page-results");
  var pageStatus = document.getElementById("search-page-status");
  if (pageInput && pageList) {
    var renderPage = function (entries) {
      var query = pageInput.value;
      var ts = terms(query);
      pageList.textContent = "";
      if (!ts.length) { pageStatus.textContent = ""; return; }
      var all = search(entries, query), found = all.slice(0, MAX_PAGE);
      found.forEach(function (e) {
        var li = document.createElement("li");
        var a = document.createElement("a");
        a.href = href(e);
        mark(label(e), ts, a);
        li.appendChild(a);
        var p = document.createElement("p");
        snippet(e, ts, p);
        li.appendChild(p);
        pageList.appendChild(li);
      });
      announce(pageStatus, all.length);
    };
    var params = new URLSearchParams(location.search);
    pageInput.value = params.get("q") || "";
    load(renderPage);
    pageInput.addEventListener("input", function () {
      load(renderPage);
      try {  // keep the address shareable; some browsers refuse this on file://
        history.replaceState(null, "", "?q=" + encodeURIComponent(pageInput.value));
      } catch (err) { /* the results are shown either way */ }
    });
  }
})();
