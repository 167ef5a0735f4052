// A human review's widget (templates/_review_widgets.html), on the review screen and the trace page: picking
// an option, letting go of the slider or pressing Enter in the text saves at once as {key, value}; picking
// the chosen option again, Clear on the slider or an emptied text sends null, which takes the value back.
// A refusal shows the server's sentence in the box and puts the buttons back as they were.
"use strict";
(function () {
  function report(box, message, failed) {
    const status = box.querySelector(".key-status");
    const error = box.querySelector(".key-error");
    if (status) status.textContent = failed ? "" : message;
    if (error) { error.textContent = failed ? message : ""; error.hidden = !failed; }
  }

  // Binds one box (a fieldset.review-key) to save at `url`; `saved` is given each answer. Returns the
  // box's pick(button), for pages whose keys pick options.
  function bind(box, url, saved) {
    // A box's saves go one after another, in the order made, so the last value chosen is the one kept
    // (a slider moved with the arrow keys saves at each step); "Saved." waits for the last of them.
    let queue = Promise.resolve(true);
    let pending = 0;

    async function post(value) {
      try {
        const answer = await window.redline.save(url, { key: box.dataset.key, value: value });
        if (saved) saved(answer);
        if (pending === 1) report(box, value === null ? "Removed." : "Saved.", false);
        return true;
      } catch (error) {
        report(box, error.message, true);
        return false;
      } finally {
        pending -= 1;
      }
    }

    function send(value) {
      pending += 1;
      report(box, "Saving…", false);
      queue = queue.then(() => post(value));
      return queue;
    }

    async function pick(button) {
      const buttons = Array.from(box.querySelectorAll("button.option"));
      const before = buttons.map((one) => one.getAttribute("aria-pressed"));
      let value;
      if (box.dataset.multiple === "true") {
        button.setAttribute("aria-pressed", button.getAttribute("aria-pressed") === "true" ? "false" : "true");
        value = buttons.filter((one) => one.getAttribute("aria-pressed") === "true").map((one) => one.dataset.value);
        if (value.length === 0) value = null;
      } else {
        const wasOn = button.getAttribute("aria-pressed") === "true";
        buttons.forEach((one) => one.setAttribute("aria-pressed", "false"));
        button.setAttribute("aria-pressed", wasOn ? "false" : "true");
        value = wasOn ? null : button.dataset.value;
      }
      if (!(await send(value))) {
        buttons.forEach((one, index) => one.setAttribute("aria-pressed", before[index]));
      }
    }

    box.querySelectorAll("button.option").forEach((button) => {
      button.addEventListener("click", () => pick(button));
    });
    const slider = box.querySelector('input[type="range"]');
    if (slider) {
      const shown = box.querySelector("output");
      const clear = box.querySelector(".clear-range");
      slider.addEventListener("input", () => { shown.textContent = slider.value; });
      slider.addEventListener("change", async () => {
        if (await send(Number(slider.value))) clear.hidden = false;
      });
      clear.addEventListener("click", async () => {
        if (!(await send(null))) return;
        shown.textContent = "not set";
        slider.value = slider.min;
        clear.hidden = true;
        slider.focus();
      });
    }
    const text = box.querySelector(".text-value input");
    if (text) {
      const sendText = () => send(text.value.trim() === "" ? null : text.value);
      text.addEventListener("keydown", (event) => {
        if (event.key === "Enter") { event.preventDefault(); sendText(); }
      });
      box.querySelector(".save-text").addEventListener("click", sendText);
    }
    return pick;
  }

  window.redline.reviewKey = bind;
})();
