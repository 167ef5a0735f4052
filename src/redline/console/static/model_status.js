// A reward model's page while it is queued or training: ask for its status every two seconds and show
// it (status, its sentence, how far training has got); when training ends, load the page again, which
// then shows the metrics or the reason it failed. Without this script, reloading the page does the same.
"use strict";
(function () {
  const pill = document.getElementById("model-status");
  const url = pill && pill.dataset.follow;
  if (!url) return;
  const EVERY_MS = 2000;

  function show(answer) {
    pill.textContent = answer.status;
    let detail = document.getElementById("status-detail");
    if (!detail) {
      detail = document.createElement("span");
      detail.id = "status-detail";
      pill.after(" ", detail);
    }
    detail.textContent = answer.detail || "";
    const bar = document.querySelector("#training-progress progress");
    if (bar && answer.progress) bar.value = answer.progress[0];
  }

  async function follow() {
    try {
      const response = await fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin" });
      if (response.ok) {
        const answer = await response.json();
        if (answer.status !== "queued" && answer.status !== "training") {
          window.location.reload();
          return;
        }
        show(answer);
      }
    } catch (_) { /* the server is restarting: ask again later */ }
    window.setTimeout(follow, EVERY_MS);
  }
  window.setTimeout(follow, EVERY_MS);
})();
