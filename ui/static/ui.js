// regatta web UI: follow the live stream and swap <main id="main"> when
// the view moved, without a reload. Time-travel pages stay as they are.
(function () {
  "use strict";
  if (!window.EventSource || !window.fetch) return;
  var busy = false, again = false;

  function frame() { return document.getElementById("frame"); }
  function main() { return document.getElementById("main"); }

  // remember the filter form's focused field, its value and selection
  function saveFocus() {
    var el = document.activeElement, form = document.getElementById("filters");
    if (!el || !form || !form.contains(el) || !el.name) return null;
    var same = form.querySelectorAll("[name='" + el.name + "']");
    var s = { name: el.name, index: Array.prototype.indexOf.call(same, el), value: el.value };
    try { s.start = el.selectionStart; s.end = el.selectionEnd; } catch (e) { /* select */ }
    return s;
  }

  function restoreFocus(s) {
    var form = document.getElementById("filters");
    if (!s || !form) return;
    var el = form.querySelectorAll("[name='" + s.name + "']")[s.index];
    if (!el) return;
    el.value = s.value;
    el.focus();
    try { if (s.start != null) el.setSelectionRange(s.start, s.end); } catch (e) { /* select */ }
  }

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { headers: { "X-Regatta-Fragment": "main" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html == null) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var next = doc.getElementById("main"), cur = main();
        if (!next || !cur) return;
        var focus = saveFocus();
        cur.replaceWith(document.adoptNode(next));
        if (next.dataset.title) document.title = next.dataset.title;
        restoreFocus(focus);
      })
      .catch(function () { /* the next move tries again */ })
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }

  function start() {
    var f = frame();
    if (f && f.dataset.timeTravel === "true") return;
    var es = new EventSource("/-/stream");
    es.addEventListener("moved", function (e) {
      var m = main();
      if (m && m.dataset.version !== e.data) refresh();
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
