// The comparison of two experiments: each datapoint's "A better", "Tie" and "B better" record the
// person's preference at once (picking another changes it); a refusal shows the server's sentence beside
// the buttons and puts them back as they were.
"use strict";
(function () {
  document.querySelectorAll(".preference").forEach((group) => {
    const buttons = Array.from(group.querySelectorAll("button.choice"));
    const status = group.querySelector(".key-status");
    const error = group.querySelector(".error");
    buttons.forEach((button) => {
      button.addEventListener("click", async () => {
        const before = buttons.map((one) => one.getAttribute("aria-pressed"));
        buttons.forEach((one) => one.setAttribute("aria-pressed", one === button ? "true" : "false"));
        status.textContent = "Saving…";
        try {
          await window.redline.save(group.dataset.save, {
            datapoint_id: group.dataset.datapoint,
            choice: button.dataset.choice,
          });
          status.textContent = "Saved.";
          error.hidden = true;
        } catch (failure) {
          buttons.forEach((one, index) => one.setAttribute("aria-pressed", before[index]));
          status.textContent = "";
          error.textContent = failure.message;
          error.hidden = false;
        }
      });
    });
  });
})();
