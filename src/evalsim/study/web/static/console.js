// evalsim console: the operator, mirror and review pages. Data goes into the page with
// textContent only (never through HTML parsing), so a note or a name can never become markup.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const page = $("app") ? $("app").dataset.page : "";
  let state = null;
  let running = null;      // {t0, trial} while the timer runs
  let stopped = null;      // {trial, seconds} after Stop
  let pending = null;      // {trial, id} of an outcome being sent (one id, however many clicks)
  let busy = false;
  let tick = null;

  function newId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID().replace(/-/g, "");
    return Date.now().toString(36) + Math.random().toString(36).slice(2, 12);
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function status(msg) { const s = $("status"); if (s) s.textContent = msg || ""; }

  async function post(path, body, tries) {
    // a dropped connection is retried with the same body (the same client id): stored once
    tries = tries || 4;
    for (let i = 0; ; i++) {
      try {
        const r = await fetch(path, {
          method: "POST", credentials: "same-origin",
          headers: { "content-type": "application/json" }, body: JSON.stringify(body),
        });
        const data = await r.json().catch(() => ({}));
        if (!r.ok) throw Object.assign(new Error(data.error || ("HTTP " + r.status)), { http: r.status });
        return data;
      } catch (e) {
        if (e.http || i + 1 >= tries) throw e;
        await new Promise((res) => setTimeout(res, 250 * (i + 1)));
      }
    }
  }

  function drawGrid(svg, positions, here) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    if (!positions.length) return;
    const xs = positions.map((p) => p.x_cm), ys = positions.map((p) => p.y_cm);
    const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
    const sx = (x) => 8 + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * 104;
    const sy = (y) => 76 - (y1 > y0 ? (y - y0) / (y1 - y0) : 0.5) * 68;
    for (const p of positions) {
      const c = document.createElementNS("http://www.w3.org/2000/svg", "circle");
      c.setAttribute("cx", sx(p.x_cm).toFixed(1));
      c.setAttribute("cy", sy(p.y_cm).toFixed(1));
      c.setAttribute("r", p.name === here ? 6 : 3.5);
      if (p.name === here) c.setAttribute("class", "here");
      const t = document.createElementNS("http://www.w3.org/2000/svg", "title");
      t.textContent = p.name;
      c.appendChild(t);
      svg.appendChild(c);
    }
  }

  function outcomeText(o) {
    if (!o) return "";
    return o.success ? "success" : "failure" + (o.failure ? " (" + o.failure + ")" : "");
  }

  function renderCommon(s) {
    $("progress-fill").style.width = (s.total ? (100 * s.done / s.total) : 0) + "%";
    $("progress-text").textContent = s.done + " / " + s.total + " trials";
    $("operator-name").textContent = s.session ? "operator: " + s.session.operator : "";
    const stop = $("stop-banner");
    stop.hidden = !s.stopped;
    stop.textContent = s.stop_message || "";
    const c = s.current;
    $("trial").hidden = !c;
    $("done").hidden = !!c;
    if (c) {
      $("trial-id").textContent = c.trial;
      $("code").textContent = c.code;
      $("position").textContent = c.position;
      $("coords").textContent = "(" + c.x_cm + ", " + c.y_cm + ") cm";
      $("block").textContent = c.block;
      drawGrid($("grid"), s.positions, c.position);
      const run = c.run;
      let info = "";
      if (run) {
        info = run.ok ? "runner: done in " + run.duration_s + " s"
          + (run.suggested_outcome ? "; suggests " + (run.suggested_outcome === "success"
            ? "success" : (run.suggested_failure || "failure")) : "")
          : "runner failed (exit " + run.exit_code + (run.timed_out ? ", timed out" : "")
            + "): press Start to run it again";
        if (run.output_tail) info += "\n" + run.output_tail.split("\n").slice(-2).join("\n");
      } else if (c.has_runner) {
        info = "the runner starts the policy on Start";
      }
      $("run-info").textContent = info;
    }
    const list = $("recent");
    while (list.firstChild) list.removeChild(list.firstChild);
    for (const r of s.recent) {
      const li = el("li", r.trial + " · " + r.code + " · " + r.position + " · " + outcomeText(r.outcome)
        + (r.outcome && r.outcome.note ? " · " + r.outcome.note : ""));
      list.appendChild(li);
    }
  }

  // ---------------------------------------------------------------- operator
  function suggestion(c) {
    if (!c || !c.run || !c.run.ok || !c.run.suggested_outcome) return null;
    return c.run.suggested_outcome === "success" ? "success" : (c.run.suggested_failure || "failure");
  }

  function renderOperator(s) {
    renderCommon(s);
    const c = s.current;
    if (running && (!c || running.trial !== c.trial)) { running = null; clearInterval(tick); }
    if (stopped && (!c || stopped.trial !== c.trial)) stopped = null;
    if (pending && (!c || pending.trial !== c.trial)) { pending = null; $("note").value = ""; }
    $("session").hidden = !!s.session;
    if (!s.session) buildChecklist(s.checklist);
    $("paused").hidden = !s.paused;
    const box = $("outcomes");
    const want = ["success"].concat(s.failure_types.length ? s.failure_types : ["failure"]);
    if (box.dataset.types !== want.join("|")) {
      while (box.firstChild) box.removeChild(box.firstChild);
      want.forEach((name, i) => {
        const b = el("button", name, name === "success" ? "success" : "failure");
        b.type = "button";
        b.dataset.outcome = name;
        const k = el("kbd", i === 0 ? "1/s" : String(i + 1));
        b.appendChild(k);
        b.addEventListener("click", () => submit(name));
        box.appendChild(b);
      });
      box.dataset.types = want.join("|");
    }
    const sug = suggestion(c);
    for (const b of box.querySelectorAll("button")) {
      b.disabled = busy || !c || s.paused || !!running;
      b.classList.toggle("suggested", sug === b.dataset.outcome);
    }
    const ss = $("startstop");
    ss.disabled = busy || !c || s.paused;
    ss.firstChild.textContent = running ? "Stop " : "Start ";
    ss.className = "big " + (running ? "stop" : "start");
    if (!running) $("timer").textContent = (stopped ? stopped.seconds : 0).toFixed(1) + " s";
    $("undo").disabled = busy || !s.last_outcome;
    $("pause").disabled = busy;
    $("pause").firstChild.textContent = s.paused ? "Resume " : "Pause ";
  }

  function buildChecklist(items) {
    const box = $("checklist");
    if (box.dataset.items === items.join("|")) return;
    while (box.firstChild) box.removeChild(box.firstChild);
    items.forEach((item) => {
      const lab = el("label");
      const cb = document.createElement("input");
      cb.type = "checkbox";
      cb.value = item;
      lab.appendChild(cb);
      lab.appendChild(el("span", item));
      box.appendChild(lab);
    });
    box.dataset.items = items.join("|");
  }

  async function act(fn) {
    if (busy) return;
    busy = true;
    if (state) renderOperator(state);
    try { await fn(); status(""); } catch (e) { status(e.message); }
    finally { busy = false; await refresh(); }
  }

  async function startStop() {
    const c = state && state.current;
    if (!c || state.paused) return;
    if (running) {
      const seconds = (performance.now() - running.t0) / 1000;
      stopped = { trial: c.trial, seconds: seconds };
      running = null;
      clearInterval(tick);
      renderOperator(state);
      return;
    }
    running = { t0: performance.now(), trial: c.trial };
    stopped = null;
    clearInterval(tick);
    tick = setInterval(() => {
      if (running) $("timer").textContent = ((performance.now() - running.t0) / 1000).toFixed(1) + " s";
    }, 100);
    renderOperator(state);
    if (c.has_runner) {
      $("run-info").textContent = "runner: running…";
      try {
        await post("/api/run", { id: newId(), trial: c.trial });
        status("");
      } catch (e) { status(e.message); }
      await refresh();
    }
  }

  function submit(name) {
    const c = state && state.current;
    if (!c || busy || running) return;
    if (!pending || pending.trial !== c.trial) pending = { trial: c.trial, id: newId() };
    const body = {
      id: pending.id, trial: c.trial, success: name === "success",
      failure: name === "success" ? null : (name === "failure" ? null : name),
      note: $("note").value, operator: state.session ? state.session.operator : null,
      duration_s: stopped && stopped.trial === c.trial ? Math.round(stopped.seconds * 1000) / 1000 : null,
    };
    act(async () => { await post("/api/outcome", body); $("note").value = ""; });
  }

  function undo() {
    if (!state || !state.last_outcome) return;
    act(() => post("/api/undo", { id: newId(), expected: state.last_outcome.event }));
  }

  function pause() {
    if (!state) return;
    act(() => post("/api/pause", { id: newId(), paused: !state.paused }));
  }

  function keys(ev) {
    const tag = (ev.target && ev.target.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA") {
      if (ev.key === "Escape") ev.target.blur();
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (!state || !state.session) return;
    const k = ev.key.toLowerCase();
    if (k === "p") { ev.preventDefault(); pause(); return; }
    if (state.paused) return;
    if (k === " " || k === "enter") { ev.preventDefault(); startStop(); }
    else if (k === "s" || k === "1") { ev.preventDefault(); submit("success"); }
    else if (/^[2-9]$/.test(k)) {
      const t = state.failure_types[Number(k) - 2];
      if (t) { ev.preventDefault(); submit(t); }
    } else if (k === "u") { ev.preventDefault(); undo(); }
    else if (k === "n") { ev.preventDefault(); $("note").focus(); }
  }

  function setupOperator() {
    $("startstop").addEventListener("click", startStop);
    $("undo").addEventListener("click", undo);
    $("pause").addEventListener("click", pause);
    $("resume").addEventListener("click", pause);
    document.addEventListener("keydown", keys);
    $("session-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const boxes = Array.from($("checklist").querySelectorAll("input[type=checkbox]"));
      if (!boxes.every((b) => b.checked)) { $("session-status").textContent = "check every item first"; return; }
      const body = { id: newId(), operator: $("session-operator").value, checklist: boxes.map((b) => b.value) };
      post("/api/session", body).then(() => { $("session-status").textContent = ""; refresh(); },
        (e) => { $("session-status").textContent = e.message; });
    });
  }

  // ---------------------------------------------------------------- review
  async function loadReview() {
    const r = await fetch("/api/review", { credentials: "same-origin" });
    const data = await r.json();
    const box = $("items");
    while (box.firstChild) box.removeChild(box.firstChild);
    let labelled = 0;
    for (const it of data.items) {
      if (it.label) labelled++;
      const card = el("article", null, "item");
      card.dataset.key = it.key;
      card.appendChild(el("h3", "item " + it.key));
      card.appendChild(el("p", "position " + it.position + " (" + it.x_cm + ", " + it.y_cm + ") cm · block " + it.block));
      if (it.note) card.appendChild(el("p", "note: " + it.note));
      if (it.output) card.appendChild(el("pre", it.output));
      for (const a of it.artefacts) {
        const link = el("a", a);
        link.href = "/artefact/" + a.split("/").map(encodeURIComponent).join("/");
        link.target = "_blank";
        link.rel = "noopener";
        card.appendChild(link);
        card.appendChild(document.createElement("br"));
      }
      if (it.label) card.appendChild(el("p", "your label: " + outcomeText(it.label) + " (" + it.label.by + ")", "labelled"));
      const row = el("div", null, "outcomes");
      ["success"].concat(data.failure_types).forEach((name) => {
        const b = el("button", name, name === "success" ? "success" : "failure");
        b.type = "button";
        b.disabled = !!it.label;
        b.addEventListener("click", async () => {
          const who = $("reviewer").value.trim();
          if (!who) { status("type the reviewer's name first"); return; }
          b.disabled = true;
          try {
            await post("/api/review", { id: newId(), key: it.key, success: name === "success",
              failure: name === "success" ? null : name, reviewer: who });
            status("");
          } catch (e) { status(e.message); }
          loadReview();
        });
        row.appendChild(b);
      });
      card.appendChild(row);
      box.appendChild(card);
    }
    $("review-progress").textContent = labelled + " / " + data.items.length + " scored";
  }

  // ---------------------------------------------------------------- updates
  async function refresh() {
    try {
      const r = await fetch("/api/state", { credentials: "same-origin" });
      if (!r.ok) { status("server: " + r.status); return; }
      apply(await r.json());
    } catch (e) { status("connection lost; retrying…"); }
  }

  function apply(s) {
    state = s;
    if (page === "operator") renderOperator(s); else renderCommon(s);
    if (page === "mirror") {
      $("paused-note").hidden = !s.paused;
      $("live").textContent = "live";
    }
  }

  function stream() {
    // server-sent events: the browser reconnects by itself after a drop; if it gives up
    // (the server was down when it retried), a new stream is opened a second later
    const es = new EventSource("/api/stream");
    es.onmessage = (m) => { try { apply(JSON.parse(m.data)); if (page === "operator") status(""); } catch (e) { /* keep */ } };
    es.onerror = () => {
      if ($("live")) $("live").textContent = "reconnecting…";
      if (es.readyState === EventSource.CLOSED) setTimeout(stream, 1000);
    };
  }

  if (page === "operator") { setupOperator(); refresh(); stream(); }
  else if (page === "mirror") { refresh(); stream(); }
  else if (page === "review") { loadReview(); }
})();
