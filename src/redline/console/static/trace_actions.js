// The traces list's action bar: the checkbox in the header ticks every row of the page, shift+click ticks
// a run of rows, and the bar says how many are ticked. Ticking a row chooses "the selected traces"; the
// form works the same without this script, it only counts and ticks.
"use strict";
(function () {
  const form = document.getElementById("trace-actions");
  const all = document.getElementById("select-page");
  if (!form || !all) return;
  const boxes = Array.from(document.querySelectorAll('input[name="trace"][form="trace-actions"]'));
  const count = document.getElementById("selected-count");
  const selectedScope = form.querySelector('input[name="scope"][value="selected"]');
  let last = null;

  function show() {
    const ticked = boxes.filter((box) => box.checked).length;
    count.textContent = ticked === 0 ? "The selected traces (none yet)"
      : ticked === 1 ? "The 1 selected trace" : "The " + ticked + " selected traces";
    all.checked = ticked === boxes.length && ticked > 0;
    all.indeterminate = ticked > 0 && ticked < boxes.length;
    boxes.forEach((box) => box.closest("tr").classList.toggle("picked", box.checked));
  }

  all.addEventListener("change", () => {
    boxes.forEach((box) => { box.checked = all.checked; });
    if (all.checked) selectedScope.checked = true;
    show();
  });
  boxes.forEach((box) => box.addEventListener("click", (event) => {
    if (event.shiftKey && last !== null) {
      const [from, to] = [boxes.indexOf(last), boxes.indexOf(box)].sort((a, b) => a - b);
      boxes.slice(from, to + 1).forEach((one) => { one.checked = box.checked; });
    }
    last = box;
    selectedScope.checked = true;
    show();
  }));
  show();
})();
