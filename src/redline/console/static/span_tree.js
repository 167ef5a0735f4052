// The trace page's span tree (templates/traces/_span_tree.html) and span panel: fold and unfold rows, find
// spans by name, jump from error to error, move with the arrow keys (Enter opens, Escape closes), and open
// a span's panel, fetched from the server (GET /ui/traces/{id}/spans/{span}) with the span in the address
// (?span=) so a reload or a shared link opens it again. A step the run says came from a span is linked to
// it both ways: picking the span marks its steps, clicking the step marks its span.
//
// The page writes only the rows no folded span hides: a folded span with children not yet in the page has
// data-fetch, and opening it fetches them (GET /ui/traces/{id}/span-rows?under=). #span-index lists every
// span (id, parent, name, failed), so finding, jumping to errors and revealing a step's span reach spans
// not yet fetched: the rows below their nearest fetched ancestor come first.
"use strict";
(function () {
  const root = document.getElementById("trace");
  const tree = document.getElementById("span-tree");
  const panel = document.getElementById("span-panel");
  if (!root || !panel) return;
  const traceId = root.dataset.traceId;
  const indexNode = document.getElementById("span-index");
  const index = indexNode ? JSON.parse(indexNode.textContent) : [];
  const parentIds = new Map(index.map(([id, parent]) => [id, parent]));
  let rows = [];
  let byId = new Map();
  const search = document.getElementById("span-search");
  const found = document.getElementById("span-found");
  const hint = panel.innerHTML;
  let errorAt = -1;

  function reindex() {
    rows = tree ? Array.from(tree.querySelectorAll(".span-row")) : [];
    byId = new Map(rows.map((row) => [row.dataset.span, row]));
  }
  reindex();

  // ------------------------------------------------------------------------------ rows not yet fetched

  const rowsUrl = "/ui/traces/" + traceId + "/span-rows";

  async function rowsHtml(under) {
    const response = await fetch(under ? rowsUrl + "?under=" + encodeURIComponent(under) : rowsUrl, {
      credentials: "same-origin",
      headers: { Accept: "text/html" },
    });
    if (!response.ok) throw new Error("The server answered " + response.status + ".");
    return response.text();
  }

  function say(message) { if (found) found.textContent = message; }

  const loading = new Map();
  // Fetches the rows below `row` when the page does not have them yet; resolves once they are in place.
  function load(row) {
    if (!row.hasAttribute("data-fetch")) return Promise.resolve();
    const spanId = row.dataset.span;
    if (!loading.has(spanId)) {
      loading.set(spanId, rowsHtml(spanId).then((html) => {
        row.insertAdjacentHTML("afterend", html);
        row.removeAttribute("data-fetch");
        reindex();
      }).catch((error) => {
        say("The spans below " + row.querySelector(".span-name").textContent + " could not be fetched: " + error.message);
      }).finally(() => loading.delete(spanId)));
    }
    return loading.get(spanId);
  }

  // The nearest ancestor of a span the page has, or null when it has the span itself.
  function fetchedAncestor(spanId) {
    if (byId.has(spanId)) return null;
    for (let at = parentIds.get(spanId); at; at = parentIds.get(at)) {
      if (byId.has(at)) return byId.get(at);
    }
    return null;
  }

  // Every row, with the folding it has now: what "Expand all" and a broad search need.
  let whole = null;
  function loadAll() {
    if (!rows.some((row) => row.hasAttribute("data-fetch"))) return Promise.resolve();
    if (!whole) {
      whole = rowsHtml(null).then((html) => {
        const open = new Map(rows.map((row) => [row.dataset.span, row.getAttribute("aria-expanded")]));
        const selected = rows.find((row) => row.classList.contains("selected"));
        const focused = rows.find((row) => row.tabIndex === 0);
        tree.innerHTML = html;
        reindex();
        rows.forEach((row) => {
          const was = open.get(row.dataset.span);
          if (was && row.hasAttribute("aria-expanded")) setExpanded(row, was === "true");
        });
        if (selected && byId.has(selected.dataset.span)) markRow(byId.get(selected.dataset.span));
        const keep = focused && byId.get(focused.dataset.span);
        rows.forEach((row, at) => { row.tabIndex = (keep ? row === keep : at === 0) ? 0 : -1; });
      }).catch((error) => {
        say("The spans could not be fetched: " + error.message);
      }).finally(() => { whole = null; });
    }
    return whole;
  }

  // Makes sure the page has the rows of `spanIds`, in as few requests as it can; more than a few
  // branches to fetch take every row at once.
  async function have(spanIds) {
    const branches = new Set();
    spanIds.forEach((spanId) => {
      const ancestor = fetchedAncestor(spanId);
      if (ancestor) branches.add(ancestor);
    });
    if (branches.size > 8) return loadAll();
    await Promise.all(Array.from(branches, load));
  }

  async function rowOf(spanId) {
    await have([spanId]);
    return byId.get(spanId) || null;
  }

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

  async function unfold(row) {
    setExpanded(row, true);
    await load(row);
    refresh();
  }

  function queryText() { return search ? search.value.trim().toLowerCase() : ""; }

  // Rows are in tree order: a row shows when no ancestor is folded, or, while finding, when it or one
  // of its descendants matches.
  function refresh() {
    const query = queryText();
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
      say(matches === 1 ? "1 span matches." : matches + " spans match.");
      return;
    }
    say("");
    const folded = [];
    rows.forEach((row) => {
      const depth = Number(row.dataset.depth);
      while (folded.length && folded[folded.length - 1] >= depth) folded.pop();
      row.classList.remove("match");
      row.hidden = folded.length > 0;
      if (!expanded(row)) folded.push(depth);
    });
  }

  // Finds spans by name in the whole run: the rows of matches the page does not have yet come first.
  let finding = 0;
  async function find() {
    const ticket = ++finding;
    const query = queryText();
    if (query) {
      await have(index.filter(([, , name]) => name.toLowerCase().includes(query)).map(([id]) => id));
      if (ticket !== finding) return;
    }
    refresh();
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

  // The run's failed spans in tree order, from the index: those below a folded span too.
  const failed = index.filter(([, , , error]) => error).map(([id]) => id);

  async function nextError() {
    if (!failed.length) return;
    if (search && search.value) { search.value = ""; refresh(); }
    errorAt = (errorAt + 1) % failed.length;
    const row = await rowOf(failed[errorAt]);
    if (!row) return;
    open(row);
    row.scrollIntoView({ block: "center" });
  }

  // ---------------------------------------------------------------------------------------- listeners

  if (tree) {
    tree.addEventListener("click", (event) => {
      const target = event.target;
      if (!(target instanceof Element)) return;
      const row = target.closest(".span-row");
      if (!row) return;
      if (target.closest(".twisty")) {
        focusRow(row);
        if (expanded(row)) {
          setExpanded(row, false);
          refresh();
        } else {
          unfold(row);
        }
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
        unfold(row);
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
  if (expandAll) {
    expandAll.addEventListener("click", async () => {
      await loadAll();
      rows.forEach((row) => setExpanded(row, true));
      refresh();
    });
  }
  const collapseAll = document.getElementById("collapse-all");
  if (collapseAll) collapseAll.addEventListener("click", () => { rows.forEach((row) => setExpanded(row, false)); refresh(); });
  const errorJump = document.getElementById("next-error");
  if (errorJump) errorJump.addEventListener("click", nextError);
  const errorCount = document.getElementById("errors-jump");
  if (errorCount) errorCount.addEventListener("click", nextError);
  if (search) {
    search.addEventListener("input", find);
    search.addEventListener("keydown", async (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        await find();
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
    if (link && parentIds.has(link.dataset.span) && !(event.ctrlKey || event.metaKey || event.shiftKey)) {
      event.preventDefault();
      rowOf(link.dataset.span).then((row) => {
        if (!row) return;
        open(row);
        row.scrollIntoView({ block: "nearest" });
      });
      return;
    }
    // Clicking a step (not its controls, not while selecting text in it) marks the span it came from.
    const step = target.closest("article.step");
    if (!step || target.closest("button, a, textarea, input, summary, .annotations")) return;
    const selection = window.getSelection();
    if (selection && !selection.isCollapsed) return;
    document.querySelectorAll("article.step.linked").forEach((one) => one.classList.remove("linked"));
    rows.forEach((row) => row.classList.remove("linked"));
    if (!parentIds.has(step.dataset.span)) return;
    step.classList.add("linked");
    rowOf(step.dataset.span).then((row) => {
      if (!row || !step.classList.contains("linked")) return;
      reveal(row);
      row.classList.add("linked");
      row.scrollIntoView({ block: "nearest" });
    });
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
