// The queue rule editor (templates/corrections/rules.html): as you edit, it asks the preview route what the
// rule as typed would have queued from the project's recent runs, and says its share in words. Requests
// wait for a pause in typing, and an answer to an older edit never overwrites a newer one.
"use strict";
(function () {
  const form = document.querySelector("form.rule-editor");
  if (!form) return;
  const previewWords = form.querySelector("[data-preview-words]");
  const shareWords = form.querySelector("[data-share]");
  const PAUSE_MS = 300;
  let timer = null;
  let asked = 0;

  function query() {
    const params = new URLSearchParams();
    for (const [name, value] of new FormData(form)) {
      if (!["csrf", "view", "project"].includes(name)) params.append(name, value);
    }
    return params.toString();
  }

  async function refresh() {
    const mine = ++asked;
    previewWords.classList.add("pending");
    try {
      const response = await fetch(form.dataset.preview + "&" + query(), {
        headers: { "Accept": "application/json" },
        credentials: "same-origin",
      });
      const answer = await response.json();
      if (mine !== asked) return;
      previewWords.textContent = response.ok ? answer.preview : answer.message;
      if (response.ok) shareWords.textContent = answer.share;
    } catch (_) {
      if (mine === asked) previewWords.textContent = "The preview could not be read: try again.";
    } finally {
      if (mine === asked) previewWords.classList.remove("pending");
    }
  }

  function later() {
    clearTimeout(timer);
    timer = setTimeout(refresh, PAUSE_MS);
  }

  form.addEventListener("input", later);
  form.addEventListener("change", later);
})();
