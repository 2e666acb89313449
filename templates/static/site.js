// labml_site: small progressive enhancements. The pages work without JavaScript.
(function () {
  "use strict";
  var ui = document.documentElement.dataset;

  // Copy buttons on code: copy the code text without the CSS-generated line numbers.
  document.querySelectorAll(".section .code").forEach(function (block) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy-button";
    button.textContent = ui.copy || "Copy";
    button.addEventListener("click", function () {
      var text = Array.prototype.map.call(block.querySelectorAll(".line"), function (l) { return l.textContent; }).join("\n");
      var done = function () { button.textContent = ui.copied || "Copied"; setTimeout(function () { button.textContent = ui.copy || "Copy"; }, 1500); };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, done);
      } else { done(); }
    });
    block.appendChild(button);
  });
})();
