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

  // Only boxes that scroll sideways need to be tab stops, to scroll them with the arrow keys:
  // code blocks (focusable in the HTML, for readers without JavaScript) and wide display
  // formulas on narrow screens.
  function tabStops() {
    document.querySelectorAll(".section > .code > pre.code, .docs math[display=block]").forEach(function (box) {
      if (box.scrollWidth > box.clientWidth + 1) { box.setAttribute("tabindex", "0"); } else { box.removeAttribute("tabindex"); }
    });
  }
  tabStops();
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

  // The language switcher keeps the section: ids are the same in every language.
  document.querySelectorAll(".languages a[hreflang]").forEach(function (a) {
    a.addEventListener("click", function () {
      if (location.hash) { a.href = a.href.split("#")[0] + location.hash; }
    });
  });
})();
