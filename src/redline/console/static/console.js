// Redline console: what every page shares. In-place saves send the session's CSRF secret as a header
// and show the server's own sentence when it refuses.
"use strict";
(function () {
  const csrf = () => document.querySelector('meta[name="csrf-token"]').content;

  async function save(url, body, method) {
    const response = await fetch(url, {
      method: method || "POST",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrf() },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    let answer = {};
    try { answer = await response.json(); } catch (_) { answer = {}; }
    if (!response.ok) {
      const error = new Error(answer.message || ("The server answered " + response.status + "."));
      error.status = response.status;
      throw error;
    }
    return answer;
  }

  function typingInField(event) {
    const target = event.target;
    return target instanceof HTMLElement &&
      (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
  }

  window.redline = { save, typingInField };
})();
