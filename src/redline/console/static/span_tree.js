// The trace page's span tree (templates/traces/_span_tree.html) and span panel: fold and unfold rows, find
// spans by name, jump from error to error, move with the arrow keys (Enter opens, Escape closes), and open
// a span's panel, fetched from the server (GET /ui/traces/{id}/spans/{span}) with the span in the address
// (?span=) so a reload or a shared link opens it again. A step the run says came from a span is linked to
// it both ways: picking the span marks its steps, clicking the step marks its span.
"use strict";
(function () {
  const root = document.getElementById("trace");
  const tree = document.getElementById("span-tree");
  const panel = document.getElementById("span-panel");
  if (!root || !panel) return;
  const traceId = root.dataset.traceId;
  const rows = tree ? Array.from(tree.querySelectorAll(".span-row")) : [];
  const byId = new Map(rows.map((row) => [row.dataset.span, row]));
  const search = document.getElementById("span-search");
  const found = document.getElementById("span-found");
  const hint = panel.innerHTML;
  let errorAt = -1;

  // ------------------------------------------------------------------------------ folding and finding

  function parentOf(row) { return byId.get(row.dataset.parent) || null; }

  function expanded(row) { return row.getAttribute("aria-expanded") !== "false"; }

  function setExpanded(row, open) {
    if (!row.hasAttribute("aria-expanded")) return;
    row.setAttribute("aria-expanded", open ? "true" : "false");
    const twisty = row.querySelector(".twisty");
    const name = row.querySelector(".span-name").textContent;
    if (twisty) twisty.setAttribute("aria-label", (open ? "Collapse " : "Expand ") + name);
  }

  // Rows are in tree order: a row shows when no ancestor is folded, or, while finding, when it or one
  // of its descendants matches.
  function refresh() {
    const query = search ? search.value.trim().toLowerCase() : "";
    if (query) {
      const shown = new Set();
      let matches = 0;
      rows.forEach((row) => {
        const hit = row.querySelector(".span-name").textContent.toLowerCase().includes(query);
        row.classList.toggle("match", hit);
        if (!hit) return;
        matches += 1;
        for (let at = row; at; at = parentOf(at)) shown.add(at);
      });
      rows.forEach((row) => { row.hidden = !shown.has(row); });
      if (found) found.textContent = matches === 1 ? "1 span matches." : matches + " spans match.";
      return;
    }
    if (found) found.textContent = "";
    const folded = [];
    rows.forEach((row) => {
      const depth = Number(row.dataset.depth);
      while (folded.length && folded[folded.length - 1] >= depth) folded.pop();
      row.classList.remove("match");
      row.hidden = folded.length > 0;
      if (!expanded(row)) folded.push(depth);
    });
  }

  // Unfolds every ancestor of `row`, so it can be seen.
  function reveal(row) {
    for (let at = parentOf(row); at; at = parentOf(at)) setExpanded(at, true);
    refresh();
  }

  function visible() { return rows.filter((row) => !row.hidden); }

  // ---------------------------------------------------------------------------------------- selection

  function focusRow(row) {
    rows.forEach((one) => { one.tabIndex = one === row ? 0 : -1; });
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" });
  }

  function markSteps(spanId) {
    let first = null;
    document.querySelectorAll("article.step").forEach((step) => {
      const linked = Boolean(spanId) && step.dataset.span === spanId;
      step.classList.toggle("linked", linked);
      if (linked && !first) first = step;
    });
    return first;
  }

  function markRow(row) {
    rows.forEach((one) => {
      const on = one === row;
      one.classList.toggle("selected", on);
      one.setAttribute("aria-selected", on ? "true" : "false");
    });
  }

  function setAddress(spanId) {
    const url = new URL(window.location.href);
    if (spanId) url.searchParams.set("span", spanId); else url.searchParams.delete("span");
    window.history.replaceState(null, "", url.pathname + url.search + url.hash);
  }

  function placed(html) {
    panel.innerHTML = html;
    document.dispatchEvent(new CustomEvent("redline:span-panel", { detail: panel }));
  }

  let asked = 0;
  async function open(row, options) {
    const spanId = row.dataset.span;
    reveal(row);
    markRow(row);
    focusRow(row);
    setAddress(spanId);
    const step = markSteps(spanId);
    if (step && options && options.toStep) step.scrollIntoView({ block: "nearest", behavior: "smooth" });
    const ticket = ++asked;
    panel.setAttribute("aria-busy", "true");
    try {
      const response = await fetch("/ui/traces/" + traceId + "/spans/" + encodeURIComponent(spanId), {
        credentials: "same-origin",
        headers: { Accept: "text/html" },
      });
      const html = await response.text();
      if (ticket !== asked) return;
      if (!response.ok) throw new Error("The server answered " + response.status + ".");
      placed(html);
    } catch (error) {
      if (ticket !== asked) return;
      panel.innerHTML = "";
      const message = document.createElement("p");
      message.className = "error";
      message.textContent = "This span could not be opened: " + error.message;
      panel.append(message);
    } finally {
      if (ticket === asked) panel.removeAttribute("aria-busy");
    }
  }

  function close() {
    asked += 1;
    markRow(null);
    markSteps(null);
    setAddress(null);
    placed(hint);
  }

  function nextError() {
    const failed = rows.filter((row) => row.classList.contains("failed"));
    if (!failed.length) return;
    if (search && search.value) { search.value = ""; refresh(); }
    errorAt = (errorAt + 1) % failed.length;
    open(failed[errorAt]);
    failed[errorAt].scrollIntoView({ block: "center" });
  }

  // ---------------------------------------------------------------------------------------- listeners

  if (tree) {
    tree.addEventListener("click", (event) => {
      const target = event.target;
      if (!(target instanceof Element)) return;
      const row = target.closest(".span-row");
      if (!row) return;
      if (target.closest(".twisty")) {
        setExpanded(row, !expanded(row));
        refresh();
        focusRow(row);
        return;
      }
      // A name is a link, so it opens in a new tab as links do; a plain click opens the panel here.
      if (event.ctrlKey || event.metaKey || event.shiftKey) return;
      event.preventDefault();
      open(row, { toStep: true });
    });

    tree.addEventListener("keydown", (event) => {
      const row = event.target instanceof Element ? event.target.closest(".span-row") : null;
      if (!row) return;
      const shown = visible();
      const at = shown.indexOf(row);
      if (event.key === "ArrowDown" && at < shown.length - 1) {
        event.preventDefault();
        focusRow(shown[at + 1]);
      } else if (event.key === "ArrowUp" && at > 0) {
        event.preventDefault();
        focusRow(shown[at - 1]);
      } else if (event.key === "Home" && shown.length) {
        event.preventDefault();
        focusRow(shown[0]);
      } else if (event.key === "End" && shown.length) {
        event.preventDefault();
        focusRow(shown[shown.length - 1]);
      } else if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        open(row, { toStep: true });
      } else if (event.key === "ArrowRight" && row.hasAttribute("aria-expanded")) {
        event.preventDefault();
        setExpanded(row, true);
        refresh();
      } else if (event.key === "ArrowLeft") {
        event.preventDefault();
        if (row.hasAttribute("aria-expanded") && expanded(row)) {
          setExpanded(row, false);
          refresh();
        } else if (parentOf(row)) {
          focusRow(parentOf(row));
        }
      }
    });
  }

  const expandAll = document.getElementById("expand-all");
  if (expandAll) expandAll.addEventListener("click", () => { rows.forEach((row) => setExpanded(row, true)); refresh(); });
  const collapseAll = document.getElementById("collapse-all");
  if (collapseAll) collapseAll.addEventListener("click", () => { rows.forEach((row) => setExpanded(row, false)); refresh(); });
  const errorJump = document.getElementById("next-error");
  if (errorJump) errorJump.addEventListener("click", nextError);
  const errorCount = document.getElementById("errors-jump");
  if (errorCount) errorCount.addEventListener("click", nextError);
  if (search) {
    search.addEventListener("input", refresh);
    search.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        const first = rows.find((row) => row.classList.contains("match"));
        if (first) open(first);
      } else if (event.key === "Escape") {
        search.value = "";
        refresh();
      }
    });
  }

  document.addEventListener("click", (event) => {
    const target = event.target;
    if (!(target instanceof Element)) return;
    if (target.closest(".close-panel")) {
      close();
      return;
    }
    const more = target.closest(".show-all");
    if (more) {
      const box = more.parentElement.querySelector(".clamped") || more.parentElement;
      box.classList.remove("clamped");
      more.remove();
      return;
    }
    // A link to a span (a step's, the panel's parent) opens it here.
    const link = target.closest("a.step-span, a.span-link");
    if (link && byId.has(link.dataset.span) && !(event.ctrlKey || event.metaKey || event.shiftKey)) {
      event.preventDefault();
      open(byId.get(link.dataset.span));
      byId.get(link.dataset.span).scrollIntoView({ block: "nearest" });
      return;
    }
    // Clicking a step (not its controls, not while selecting text in it) marks the span it came from.
    const step = target.closest("article.step");
    if (!step || target.closest("button, a, textarea, input, summary, .annotations")) return;
    const selection = window.getSelection();
    if (selection && !selection.isCollapsed) return;
    document.querySelectorAll("article.step.linked").forEach((one) => one.classList.remove("linked"));
    rows.forEach((row) => row.classList.remove("linked"));
    const row = byId.get(step.dataset.span);
    if (!row) return;
    step.classList.add("linked");
    reveal(row);
    row.classList.add("linked");
    row.scrollIntoView({ block: "nearest" });
  });

  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || window.redline.typingInField(event)) return;
    if (panel.querySelector(".span-detail")) {
      const selected = rows.find((row) => row.classList.contains("selected"));
      close();
      if (selected) focusRow(selected);
    }
  });

  // A span the address names was rendered open with the page: show it in the tree and its steps.
  refresh();
  const chosen = rows.find((row) => row.classList.contains("selected"));
  if (chosen) {
    reveal(chosen);
    focusRow(chosen);
    markSteps(chosen.dataset.span);
  }
})();
