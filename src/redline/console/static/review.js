// The review screens, a queue's and an experiment's (templates/_review_screen.html): J/K (and the up/down
// buttons) step to the next or previous item or response; picking a value saves it at once and marks it
// reviewed; 1-9 pick the first categorical review's options. On a queue's screen only, the pencil opens a
// correction popover for an evaluator result, a comment saves on the trace and "Add to dataset" sends the
// trace to a dataset: each part binds only where its controls are on the page.
// Every refusal shows the server's own sentence beside the control that caused it.
"use strict";
(function () {
  const root = document.getElementById("review");
  if (!root) return;
  const base = root.dataset.save;
  const canWrite = root.dataset.canWrite === "true";

  function showProgress(answer) {
    // A queue's save answers the hold line as it now reads (the saver's part, who is done): put in place,
    // keeping the Skip button's address (it says which items the screen steps through). Once the saver's
    // part is done on a blind queue, the screen shows the item again, now with the others' values.
    if (answer.hold_line !== undefined) {
      if (answer.mine === "reviewed" && document.getElementById("blind-note") && root.dataset.here) {
        window.location.replace(root.dataset.here);
        return;
      }
      const line = document.getElementById("hold-line");
      if (line) {
        const skip = line.querySelector("form");
        line.outerHTML = answer.hold_line;
        const again = document.querySelector("#hold-line form");
        if (skip && again) again.action = skip.action;
      }
    }
    const count = document.getElementById("reviewed-count");
    if (count && typeof answer.reviewed === "number") count.textContent = answer.reviewed + " reviewed";
    const state = document.getElementById("item-state");
    if (state && answer.item_reviewed !== undefined) {
      state.textContent = answer.item_reviewed ? "Reviewed" : "Not reviewed yet";
      state.classList.toggle("good", Boolean(answer.item_reviewed));
    }
  }

  // ------------------------------------------------------------------------------------ review values
  // Each review's widget saves on the item or result (review_widgets.js); its answer carries the progress.
  const pickers = new Map();
  root.querySelectorAll("fieldset.review-key").forEach((box) => {
    pickers.set(box, redline.reviewKey(box, base + "/review", showProgress));
  });

  // ---------------------------------------------------------------------------------------- comment
  const comment = document.getElementById("comment");
  if (comment) {
    const box = comment.closest(".comment-box");
    const send = async () => {
      const said = comment.value.trim();
      if (!said) return;
      const status = document.getElementById("comment-status");
      const error = document.getElementById("comment-error");
      try {
        const answer = await redline.save(base + "/comment", { comment: said });
        const line = document.createElement("li");
        const who = document.createElement("span");
        who.className = "muted";
        who.textContent = answer.author + ": ";
        line.append(who, document.createTextNode(answer.comment));
        document.getElementById("comments").append(line);
        comment.value = "";
        status.textContent = "Comment saved.";
        error.hidden = true;
      } catch (failure) {
        error.textContent = failure.message;
        error.hidden = false;
        status.textContent = "";
      }
    };
    document.getElementById("save-comment").addEventListener("click", send);
    comment.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); send(); }
    });
    void box;
  }

  // ------------------------------------------------------------------------- evaluator corrections
  function parseTyped(text) {
    // What a person types, as JSON where it reads as JSON (true, 0.8), else as the text itself: the server
    // decides whether it fits the evaluator's type and says so when it does not.
    try { return JSON.parse(text); } catch (_) { return text; }
  }

  root.querySelectorAll(".evaluation").forEach((result) => {
    const pencil = result.querySelector(".pencil");
    const popover = result.querySelector(".popover");
    if (!pencil || !popover) return;
    const field = popover.querySelector(".fix-value");
    const why = popover.querySelector(".fix-why");
    const error = popover.querySelector(".error");
    const close = () => { popover.hidden = true; pencil.setAttribute("aria-expanded", "false"); pencil.focus(); };
    pencil.addEventListener("click", () => {
      const opening = popover.hidden;
      popover.hidden = !opening;
      pencil.setAttribute("aria-expanded", opening ? "true" : "false");
      if (opening) field.focus();
    });
    popover.addEventListener("keydown", (event) => {
      if (event.key === "Escape") { event.preventDefault(); close(); }
      if (event.key === "Enter" && event.target === field) { event.preventDefault(); save(); }
    });
    popover.querySelector(".fix-cancel").addEventListener("click", close);
    async function save() {
      try {
        const answer = await redline.save(base + "/correction", {
          result_id: result.dataset.result,
          span_id: result.dataset.span,
          value: parseTyped(field.value.trim()),
          explanation: why.value.trim() || null,
        });
        const line = document.createElement("li");
        line.append("Corrected to ");
        const strong = document.createElement("strong");
        strong.textContent = typeof answer.value === "string" ? answer.value : JSON.stringify(answer.value);
        line.append(strong, " by " + answer.author + (answer.explanation ? ": " + answer.explanation : ""));
        const list = result.querySelector(".corrections");
        list.replaceChildren(line);
        error.hidden = true;
        close();
      } catch (failure) {
        error.textContent = failure.message;
        error.hidden = false;
      }
    }
    popover.querySelector(".fix-save").addEventListener("click", save);
  });

  // ---------------------------------------------------------------------------------- add to dataset
  const adder = document.getElementById("add-to-dataset");
  if (adder) {
    adder.addEventListener("click", async () => {
      const status = document.getElementById("dataset-status");
      const error = document.getElementById("dataset-error");
      try {
        const answer = await redline.save(base + "/dataset", { dataset_id: document.getElementById("dataset").value });
        status.replaceChildren(answer.message + " ");
        const link = document.createElement("a");
        link.href = answer.url;
        link.textContent = "Open the dataset";
        status.append(link);
        error.hidden = true;
      } catch (failure) {
        error.textContent = failure.message;
        error.hidden = false;
        status.textContent = "";
      }
    });
  }

  // ---------------------------------------------------------------------------------------- keyboard
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || redline.typingInField(event)) return;
    const key = event.key.toLowerCase();
    if (key === "j" && root.dataset.next) { event.preventDefault(); window.location.assign(root.dataset.next); return; }
    if (key === "k" && root.dataset.previous) { event.preventDefault(); window.location.assign(root.dataset.previous); return; }
    if (!canWrite || !/^[1-9]$/.test(event.key)) return;
    // Number keys pick the options of the review whose control has focus, else of the first categorical one.
    const focused = document.activeElement && document.activeElement.closest("fieldset.review-key[data-type='categorical']");
    const box = focused || root.querySelector("fieldset.review-key[data-numbered='true']");
    if (!box) return;
    const button = box.querySelectorAll("button.option")[Number(event.key) - 1];
    if (button) { event.preventDefault(); pickers.get(box)(button); }
  });
})();
