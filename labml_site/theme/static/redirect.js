// A redirect page's meta refresh drops the fragment of the URL it was opened at: an old deep link
// (old/page.html#section-3) is sent to the same section of the page it points at (its canonical link).
(function () {
  "use strict";
  var link = document.querySelector('link[rel="canonical"]');
  if (link && location.hash && link.href.indexOf("#") < 0) {
    location.replace(link.href + location.hash);
  }
})();
