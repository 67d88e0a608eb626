// New decisions arrive as rendered cards from /ui/events; the page reads
// without this script.
(function () {
  var list = document.getElementById("decisions");
  if (!list || !window.EventSource) return;
  var q = new URLSearchParams(list.dataset.query || "");
  q.set("after", list.dataset.after || "");
  var es = new EventSource("/ui/events?" + q.toString());
  es.addEventListener("decision", function (e) {
    var empty = list.querySelector(".empty");
    if (empty) empty.remove();
    list.insertAdjacentHTML("afterbegin", e.data);
    var card = list.firstElementChild;
    if (card && card.dataset.awaiting === "input") addInputs(card.dataset.run, card.dataset.call, 5);
  });

  // A call suspended for input while the page is open: its form is added,
  // and the forms a person may be typing in are left as they are.
  // The request is kept just after the suspension is stored: a few tries.
  function addInputs(run, call, tries) {
    var section = document.getElementById("inputs");
    if (!section || !window.fetch) return;
    var iq = new URLSearchParams();
    if (q.get("run")) iq.set("run", q.get("run"));
    fetch("/ui/inputs?" + iq.toString(), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : ""; })
      .then(function (html) {
        var t = document.createElement("template");
        t.innerHTML = html;
        t.content.querySelectorAll("article.input-request").forEach(function (a) {
          var sel = 'article.input-request[data-run="' + CSS.escape(a.dataset.run) + '"][data-call="' + CSS.escape(a.dataset.call) + '"]';
          if (!section.querySelector(sel)) section.appendChild(a);
        });
        if (section.querySelector("article.input-request")) section.hidden = false;
        var sel = 'article.input-request[data-run="' + CSS.escape(run) + '"][data-call="' + CSS.escape(call) + '"]';
        if (!section.querySelector(sel) && tries > 1) setTimeout(function () { addInputs(run, call, tries - 1); }, 300);
      });
  }
})();
