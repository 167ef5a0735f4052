// A dialog the address opened (templates/corrections/_sheet.html) is rendered open, so it works without
// JavaScript; here it becomes modal (focus stays in it, the page behind is inert), and Esc goes where its
// close link goes: the page's address without the dialog.
"use strict";
(function () {
  const sheet = document.querySelector("dialog.sheet[open]");
  if (!sheet || typeof sheet.showModal !== "function") return;
  const backdrop = document.querySelector(".sheet-backdrop");
  sheet.close();
  sheet.showModal();
  if (backdrop) backdrop.remove();
  sheet.addEventListener("cancel", (event) => {
    event.preventDefault();
    window.location.assign(sheet.dataset.close);
  });
  // The first field, else the safe way out (Keep it, Cancel, Close) before the action that changes things.
  const first =
    sheet.querySelector("[autofocus], input:not([type=hidden]), select, textarea") ||
    sheet.querySelector("a.button") ||
    sheet.querySelector("button");
  if (first) first.focus();
})();
