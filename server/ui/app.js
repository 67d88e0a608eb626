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
  });
})();
