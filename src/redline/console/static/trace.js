// The trace page: rate and comment in place, comment on text selected in a step (saved as a quote with
// the text around it), flag a label error with a note, delete; set the project's human reviews on the
// whole trace and on the span whose panel is open (review_widgets.js; span_tree.js puts a panel in place
// and says so with a "redline:span-panel" event). Every refusal shows the server's sentence.
"use strict";
(function () {
  const root = document.getElementById("trace");
  if (!root) return;
  const traceId = root.dataset.traceId;
  // Characters either side of a selection kept as its prefix and suffix: enough to tell apart two
  // identical phrases in one step (rm-annotations, "Quoted spans").
  const CONTEXT = 32;
  // What the page says of a quote whose step changed since (templates/traces/_trace_macros.html, quote_state).
  const QUOTE_STATES = {
    detached: "the quoted text is no longer in this step",
    fuzzy: "the quoted text has changed in this step",
  };

  function panelOf(node) { return node.closest("section.annotations"); }

  // A step's own part (its text, its annotations), not that of the tool result shown inside a call's step.
  function ownPart(step, selector) {
    return Array.from(step.querySelectorAll(selector)).find((node) => node.closest("article.step") === step) || null;
  }

  function showError(panel, message) {
    const box = panel.querySelector(".error");
    if (!box) return;
    box.textContent = message;
    box.hidden = !message;
  }

  function text(tag, className, content) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (content !== undefined) node.textContent = content;
    return node;
  }

  function linkButton(className, label) {
    const button = text("button", "link " + className, label);
    button.type = "button";
    return button;
  }

  // The same markup the page renders for an annotation (templates/traces/trace.html, annotation_item).
  function item(a) {
    const li = text("li", "annotation" + (a.label_error ? " flagged" : ""));
    li.dataset.id = a.id;
    const line = text("div", "said-line");
    if (a.rating === 1) line.append(text("span", "pill good rating", "+ good"));
    if (a.rating === -1) line.append(text("span", "pill bad rating", "− bad"));
    if (a.quote) {
      line.append(text("q", "quoted", a.quote.text));
      const state = QUOTE_STATES[a.quote.anchor];
      if (state) line.append(" ", text("span", "quote-state " + a.quote.anchor, state));
    }
    li.append(line);
    if (a.comment) li.append(text("p", "comment", a.comment));
    if (a.label_error) {
      const flag = text("p", "label-error");
      flag.append(text("strong", "", "Label error"));
      if (a.label_error_note) { flag.append(": "); flag.append(text("span", "note", a.label_error_note)); }
      li.append(flag);
    }
    const by = text("div", "by muted small", a.author_name + " · " + a.created_at.slice(0, 16).replace("T", " ") + " · ");
    by.append(a.label_error ? linkButton("unflag", "Unflag") : linkButton("flag", "Flag as label error"));
    by.append(" · ");
    by.append(linkButton("delete", "Delete"));
    li.append(by);
    return li;
  }

  // ------------------------------------------------------------------------------------ selection

  function contentOf(node) {
    const element = node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement;
    return element ? element.closest(".content") : null;
  }

  // The selection as a quote of one step's text, or null when it is empty or spans more than one step.
  function quoteOfSelection() {
    const selection = window.getSelection();
    if (!selection || selection.isCollapsed || selection.rangeCount === 0) return null;
    const range = selection.getRangeAt(0);
    const holder = contentOf(range.startContainer);
    if (!holder || holder !== contentOf(range.endContainer)) return null;
    const before = document.createRange();
    before.selectNodeContents(holder);
    before.setEnd(range.startContainer, range.startOffset);
    const content = holder.textContent;
    const from = before.toString().length;
    const to = from + range.toString().length;
    const quoted = content.slice(from, to);
    if (!quoted.trim()) return null;
    return {
      holder: holder,
      quote: { text: quoted, prefix: content.slice(Math.max(0, from - CONTEXT), from), suffix: content.slice(to, to + CONTEXT) },
    };
  }

  function onSelection() {
    const found = quoteOfSelection();
    if (!found) return;
    const panel = ownPart(found.holder.closest("article.step"), "section.annotations");
    if (!panel || !panel.querySelector(".quoting")) return;
    panel.quote = found.quote;
    const preview = panel.querySelector(".quoting");
    preview.querySelector("q").textContent = found.quote.text;
    preview.hidden = false;
    const field = panel.querySelector(".comment-field");
    field.placeholder = "Comment on the selected text";
  }

  function dropQuote(panel) {
    panel.quote = null;
    const preview = panel.querySelector(".quoting");
    if (preview) preview.hidden = true;
  }

  // Marks a just-saved quote in the step's text (the page marks saved quotes itself on the next load).
  function mark(panel, saved) {
    const step = panel.closest("article.step");
    const holder = step && ownPart(step, ".content");
    if (!holder || !saved.quote) return;
    const walker = document.createTreeWalker(holder, NodeFilter.SHOW_TEXT);
    let offset = 0;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const length = node.textContent.length;
      if (saved.quote.start >= offset && saved.quote.end <= offset + length) {
        const range = document.createRange();
        range.setStart(node, saved.quote.start - offset);
        range.setEnd(node, saved.quote.end - offset);
        const highlight = text("mark", "quote");
        highlight.dataset.annotations = saved.id;
        range.surroundContents(highlight);
        return;
      }
      offset += length;
    }
  }

  // ---------------------------------------------------------------------------------------- saves

  async function create(panel, body) {
    showError(panel, "");
    const stepId = panel.dataset.stepId;
    if (stepId) body.step_id = stepId;
    try {
      const saved = await window.redline.save("/ui/traces/" + traceId + "/annotations", body);
      panel.querySelector("ul.said").append(item(saved));
      return saved;
    } catch (error) {
      showError(panel, error.message);
      return null;
    }
  }

  async function comment(panel) {
    const field = panel.querySelector(".comment-field");
    const body = { comment: field.value };
    if (panel.quote) body.quote = { text: panel.quote.text, prefix: panel.quote.prefix, suffix: panel.quote.suffix };
    const saved = await create(panel, body);
    if (!saved) return;
    field.value = "";
    if (saved.quote) mark(panel, saved);
    dropQuote(panel);
  }

  async function change(li, body) {
    const panel = panelOf(li);
    showError(panel, "");
    try {
      const saved = await window.redline.save("/ui/annotations/" + li.dataset.id, body);
      li.replaceWith(item(saved));
    } catch (error) {
      showError(panel, error.message);
    }
  }

  async function remove(li) {
    const panel = panelOf(li);
    showError(panel, "");
    try {
      await window.redline.save("/ui/annotations/" + li.dataset.id + "/delete", {});
      document.querySelectorAll("mark.quote").forEach((highlight) => {
        if (highlight.dataset.annotations.split(" ").includes(li.dataset.id)) highlight.classList.add("gone");
      });
      li.remove();
    } catch (error) {
      showError(panel, error.message);
    }
  }

  // The one flag form, moved under the annotation being flagged.
  const flagForm = document.getElementById("flag-dialog");
  function openFlag(li) {
    li.append(flagForm);
    flagForm.hidden = false;
    const note = flagForm.querySelector("#flag-note");
    note.value = "";
    note.focus();
  }
  function closeFlag() {
    flagForm.hidden = true;
    document.body.append(flagForm);
  }
  async function saveFlag() {
    const li = flagForm.closest("li.annotation");
    if (!li) return;
    const note = flagForm.querySelector("#flag-note").value;
    closeFlag();
    await change(li, { label_error: true, label_error_note: note || null });
  }

  // -------------------------------------------------------------------------------- human reviews
  // Each place's widgets save on it: a span by its id, the whole trace by the trace's own id.
  function bindPlaces(within) {
    within.querySelectorAll("section.review-place").forEach((place) => {
      const url = "/ui/traces/" + traceId + "/spans/" + encodeURIComponent(place.dataset.span) + "/values";
      place.querySelectorAll("fieldset.review-key").forEach((box) => window.redline.reviewKey(box, url));
    });
  }
  bindPlaces(document);
  document.addEventListener("redline:span-panel", (event) => bindPlaces(event.detail));

  // ------------------------------------------------------------------------------------ listeners

  document.addEventListener("mouseup", onSelection);
  document.addEventListener("keyup", (event) => { if (event.shiftKey) onSelection(); });

  document.addEventListener("click", (event) => {
    const target = event.target;
    if (!(target instanceof HTMLElement)) return;
    const panel = panelOf(target);
    const li = target.closest("li.annotation");
    if (target.matches("button[data-rating]") && panel) {
      create(panel, { rating: Number(target.dataset.rating) });
    } else if (target.matches("button.save-comment") && panel) {
      comment(panel);
    } else if (target.matches("button.drop-quote") && panel) {
      dropQuote(panel);
    } else if (target.matches("button.flag") && li) {
      openFlag(li);
    } else if (target.matches("button.unflag") && li) {
      change(li, { label_error: false, label_error_note: null });
    } else if (target.matches("button.delete") && li) {
      remove(li);
    } else if (target.id === "flag-save") {
      saveFlag();
    } else if (target.id === "flag-cancel") {
      closeFlag();
    }
  });

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (!(target instanceof HTMLElement)) return;
    // Ctrl/Cmd+Enter in a comment saves it; Enter in the flag note flags; Escape closes the flag form.
    if (target.matches(".comment-field") && event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      comment(panelOf(target));
    } else if (target.id === "flag-note" && event.key === "Enter") {
      event.preventDefault();
      saveFlag();
    } else if (target.id === "flag-note" && event.key === "Escape") {
      closeFlag();
    }
  });
})();
