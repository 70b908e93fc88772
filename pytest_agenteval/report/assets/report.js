/* pytest-agenteval report: the case ledger.
 * Reads the digest from the JSON data block #agenteval-data (see report/digest.py for its
 * format) and renders a filterable list lazily: a page of rows at a time, a row's detail
 * only when it is opened. Every text from the data is set with textContent, never parsed
 * as HTML; the only attribute built from data is a "#case=" link, URI-encoded. */
(function () {
  "use strict";
  var holder = document.getElementById("ledger");
  var dataEl = document.getElementById("agenteval-data");
  var wordsEl = document.getElementById("agenteval-words");
  if (!holder || !dataEl) { return; }
  var D = JSON.parse(dataEl.textContent);
  var W = wordsEl ? JSON.parse(wordsEl.textContent) : {};
  var S = D.s, CASES = D.cases, DIMS = D.dims || [];
  var PAGE = 100;
  var STATUS = {p: "passed", f: "failed", r: "review", e: "error", n: "not_evaluated"};
  var ICON = {p: "\u2713", f: "\u2717", r: "\u25d0", e: "\u2298", n: "\u2013"};
  var TONE = {p: "ok", f: "bad", r: "warn", e: "err", n: "na"};
  var LEVEL = {p: "success", r: "partial", f: "failure"};
  var STATUS_WORD = {};
  Object.keys(W).forEach(function (k) { if (k.indexOf("status.") === 0) { STATUS_WORD[k.slice(7)] = W[k]; } });

  function w(key, fields) {
    var text = W[key] || key;
    if (fields) {
      Object.keys(fields).forEach(function (k) { text = text.split("{" + k + "}").join(String(fields[k])); });
    }
    return text;
  }
  function s(i) { return (i === null || i === undefined) ? "" : S[i] || ""; }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === false) { continue; }
      parent.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return parent;
  }
  function statusWord(code) { return STATUS_WORD[STATUS[code]] || STATUS[code] || code; }
  function badge(code, word) {
    var b = el("span", "badge " + (TONE[code] || "na"));
    add(b, el("span", null, ICON[code] || "\u2022"), " " + (word || statusWord(code)));
    b.firstChild.setAttribute("aria-hidden", "true");
    return b;
  }
  function caseKey(c) { return c.tr === undefined ? c.i : c.i + "[t" + c.tr + "]"; }

  // -- facets and filters ---------------------------------------------------------------------
  var facets = {behavior: {}, priority: {}, family: {}, challenge: {}, layer: {}, status: {}};
  CASES.forEach(function (c) {
    c.b.forEach(function (b) { facets.behavior[s(b)] = (facets.behavior[s(b)] || 0) + 1; });
    [["priority", s(c.p)], ["family", s(c.f)], ["challenge", s(c.c)], ["status", c.s]]
      .forEach(function (kv) { if (kv[1]) { facets[kv[0]][kv[1]] = (facets[kv[0]][kv[1]] || 0) + 1; } });
    c.L.split("").forEach(function (l) { facets.layer[l] = (facets.layer[l] || 0) + 1; });
  });
  var state = {status: {}, layer: "", behavior: "", priority: "", family: "", challenge: "",
               text: "", only: null, shown: PAGE};
  var open = {};

  function haystack(c) {
    if (c._h === undefined) {
      var parts = [c.i, c.t, s(c.lo)];
      c.fr.forEach(function (r) { parts.push(s(r)); });
      c.b.forEach(function (b) { parts.push(s(b)); });
      c.g.forEach(function (g) { parts.push(s(g)); });
      c.T.forEach(function (t) { parts.push(t.in, t.re || ""); if (t.er) { parts.push(t.er[1]); } });
      c.h.forEach(function (m) { parts.push(m[1]); });
      c._h = parts.join("\n").toLowerCase();
    }
    return c._h;
  }
  function matches(c) {
    if (state.only !== null) { return caseKey(c) === state.only || c.i === state.only; }
    var st = Object.keys(state.status).filter(function (k) { return state.status[k]; });
    if (st.length && st.indexOf(c.s) < 0) { return false; }
    if (state.layer && (state.layer === "-" ? c.L !== "" : c.L.indexOf(state.layer) < 0)) { return false; }
    if (state.behavior && !c.b.some(function (b) { return s(b) === state.behavior; })) { return false; }
    if (state.priority && s(c.p) !== state.priority) { return false; }
    if (state.family && s(c.f) !== state.family) { return false; }
    if (state.challenge && s(c.c) !== state.challenge) { return false; }
    if (state.text && haystack(c).indexOf(state.text) < 0) { return false; }
    return true;
  }

  function select(name, values, label, render) {
    var lab = el("label", null, label);
    var sel = el("select");
    sel.setAttribute("data-filter", name);
    add(sel, el("option", null, w("filter.all")));
    sel.firstChild.value = "";
    Object.keys(values).sort().forEach(function (v) {
      var o = el("option", null, (render ? render(v) : v) + " (" + values[v] + ")");
      o.value = v;
      sel.appendChild(o);
    });
    sel.addEventListener("change", function () { state[name] = sel.value; state.only = null; state.shown = PAGE; draw(); });
    return add(lab, sel);
  }

  var bar = el("div", "filters");
  var chips = el("div", "chips");
  ["f", "e", "r", "p"].forEach(function (code) {
    if (!facets.status[code]) { return; }
    var b = el("button");
    b.type = "button";
    b.setAttribute("data-status", STATUS[code]);
    b.setAttribute("aria-pressed", "false");
    add(b, badge(code), " " + facets.status[code]);
    b.addEventListener("click", function () {
      state.status[code] = !state.status[code];
      b.setAttribute("aria-pressed", state.status[code] ? "true" : "false");
      state.only = null; state.shown = PAGE; draw();
    });
    chips.appendChild(b);
  });
  var search = el("input");
  search.type = "search";
  search.placeholder = w("filter.text");
  search.setAttribute("aria-label", w("filter.text"));
  var timer = null;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.text = search.value.trim().toLowerCase(); state.only = null; state.shown = PAGE; draw(); }, 120);
  });
  var expand = el("button", null, w("expand"));
  expand.type = "button";
  expand.setAttribute("data-action", "expand");
  var collapse = el("button", null, w("collapse"));
  collapse.type = "button";
  collapse.setAttribute("data-action", "collapse");
  add(bar, add(el("label", null, w("filter.status")), chips),
      select("layer", facets.layer, w("filter.layer"), function (l) { return w("layer." + (l === "E" ? "E" : "L" + l)); }),
      select("behavior", facets.behavior, w("filter.behavior")),
      select("priority", facets.priority, w("filter.priority")),
      select("family", facets.family, w("filter.family")),
      select("challenge", facets.challenge, w("filter.challenge")),
      add(el("label", null, "\u00a0"), search), expand, collapse);
  var count = el("p", "count");
  count.setAttribute("aria-live", "polite");
  var list = el("div", "rows");
  var more = el("div", "more");
  holder.textContent = "";
  add(holder, bar, count, list, more);

  // -- rows ---------------------------------------------------------------------------------------
  function head(c) {
    var b = el("button", "head");
    b.type = "button";
    b.setAttribute("aria-expanded", open[caseKey(c)] ? "true" : "false");
    var tags = [w("kind." + (c.k === "s" ? "scenario" : "case")), s(c.p), s(c.f)];
    c.b.forEach(function (x) { tags.push(s(x)); });
    if (s(c.c) && s(c.c) !== "none") { tags.push(s(c.c)); }
    if (c.tr !== undefined) { tags.push(w("trial", {n: c.tr})); }
    tags.push(w("ms", {n: Math.round(c.ms)}));
    var idcell = el("span", "id", caseKey(c));
    add(b, badge(c.s), add(el("span"), idcell), el("span", "ttl", c.t),
        el("span", "tags", tags.filter(Boolean).join(" \u00b7 ")));
    if (c.fr.length) {
      b.appendChild(el("span", "fr", "\u2717 " + c.fr.map(s).join(", ")));
      b.lastChild.style.gridColumn = "2 / -1";
    }
    return b;
  }
  function row(c) {
    var r = el("div", "row s-" + c.s);
    r.setAttribute("data-case", caseKey(c));
    r.setAttribute("data-status", STATUS[c.s]);
    var h = head(c);
    r.appendChild(h);
    h.addEventListener("click", function () { toggle(c, r); });
    if (open[caseKey(c)]) { r.appendChild(detail(c)); }
    return r;
  }
  function toggle(c, r, force) {
    var k = caseKey(c);
    var want = force === undefined ? !open[k] : force;
    var d = r.querySelector(".detail");
    if (want && !d) { r.appendChild(detail(c)); }
    if (!want && d) { r.removeChild(d); }
    open[k] = want;
    r.firstChild.setAttribute("aria-expanded", want ? "true" : "false");
  }

  // -- a case's detail ----------------------------------------------------------------------------
  function kv(pairs) {
    var g = el("div", "kv");
    pairs.forEach(function (p) {
      if (p[1] === "" || p[1] === null || p[1] === undefined) { return; }
      add(g, el("div", null, p[0]), typeof p[1] === "string" ? el("div", null, p[1]) : add(el("div"), p[1]));
    });
    return g;
  }
  function pretty(ref) {
    if (ref === null || ref === undefined) { return "null"; }
    var t = s(ref);
    if (!t) { return "{}"; }
    try { return JSON.stringify(JSON.parse(t), null, 2); } catch (e) { return t; }
  }
  function fold(title, text) {
    var d = el("details");
    add(d, el("summary", null, title), el("pre", null, text));
    return d;
  }
  function say(who, text, cls) {
    return add(el("div", "say " + (cls || "")), el("div", "who", who), el("div", "txt", text));
  }
  function rulesTable(rows) {
    var t = el("table", "rules");
    var hd = add(el("tr"), el("th", null, ""), el("th", null, w("rule")), el("th", null, w("type")),
                 el("th", null, w("reason")), el("th", null, w("evidence")), el("th", null, w("trigger")));
    add(t, add(el("thead"), hd));
    var body = el("tbody");
    var hidden = [];
    rows.forEach(function (x) {
      var tr = el("tr", x[2]);
      tr.setAttribute("data-rule", s(x[0]));
      tr.setAttribute("data-status", STATUS[x[2]] || x[2]);
      var idc = el("td", null);
      add(idc, el("code", null, s(x[0])));
      if (x[5] & 1) { add(idc, " ", el("span", "badge bad", w("veto"))); }
      add(tr, add(el("td"), badge(x[2], x[2] === "n" ? (STATUS_WORD.not_applicable || "n/a") : undefined)),
          idc, el("td", null, s(x[1]) + " \u00b7 " + s(x[7])), el("td", null, s(x[3])),
          el("td", "ev", s(x[4])), el("td", "ev", s(x[6])));
      if (x[2] === "n") { hidden.push(tr); } else { body.appendChild(tr); }
    });
    t.appendChild(body);
    if (hidden.length) {
      var foot = el("tr");
      var td = el("td", "t3", w("na_rules", {n: hidden.length}) + " ");
      td.colSpan = 6;
      var b = el("button", null, w("show_na"));
      b.type = "button";
      b.addEventListener("click", function () {
        hidden.forEach(function (tr) { body.insertBefore(tr, foot); });
        body.removeChild(foot);
      });
      add(foot, add(td, b));
      body.appendChild(foot);
    }
    return t;
  }
  function judgeBlock(j) {
    if (!j) { return null; }
    if (j[0] === "n" && !j[1]) { return el("p", "na", statusWord("n") + " \u2014 " + s(j[2])); }
    var box = el("div");
    add(box, kv([[w("judge"), badge(j[0])], [w("reason"), s(j[2])],
                 [w("fact_risk"), j[3] ? "\u2691 " + w("fact_risk") : ""]]));
    if (j[1]) {
      var t = el("table");
      add(t, add(el("thead"), add(el("tr"), el("th", null, w("dimension")), el("th", "num", w("score")), el("th", null, w("reason")))));
      var body = el("tbody");
      j[1].forEach(function (score, i) {
        if (score === undefined) { return; }
        var reason = j[4] ? s(j[4][i]) : "";
        if (score === null && !reason) { return; }
        var tr = el("tr");
        var sc = el("td", "num", score === null ? "n/a" : score);
        if (score !== null && score < 3) { sc.className += " bad-t"; } else if (score !== null && score < 4) { sc.className += " warn-t"; }
        add(tr, el("td", null, DIMS[i]), sc, el("td", null, reason));
        body.appendChild(tr);
      });
      t.appendChild(body);
      box.appendChild(t);
    }
    return box;
  }
  function intentBlock(it) {
    if (!it) { return null; }
    var pairs = [[w("expected"), s(it[0])], [w("predicted"), s(it[1]) || (it[6] ? s(it[6]) : "")]];
    if (it[3] !== null || it[4] !== null) { pairs.push([w("code"), w("expected") + " " + (it[3] === null ? "\u2013" : it[3]) + " \u00b7 " + w("returned") + " " + (it[4] === null ? "\u2013" : it[4])]); }
    var g = kv(pairs);
    if (it[2] === 0 || it[7] === 0) { g.className += " bad-t"; }
    return g;
  }
  function turnBlock(c, t, i) {
    var box = el("div", "turn s-" + t.s);
    box.setAttribute("data-turn", String(i));
    var title = el("h4", null, (c.k === "s" ? w("turn", {n: i + 1}) + " \u00b7 " : "") + w("latency") + " " + w("ms", {n: Math.round(t.ms)}));
    add(box, add(title, " ", badge(t.s)));
    box.appendChild(say(w("input"), t.in, "user"));
    if (t.er) {
      box.appendChild(say(w("error"), s(t.er[0]) + ": " + t.er[1], "err-t"));
    }
    if (t.re !== null && t.re !== undefined) { box.appendChild(say(w("reply"), t.re, "agent")); }
    // a turn's knowledge: shown when it has some, or when a later turn of a scenario has none
    if (t.kn !== 0 && (t.kn !== null || i > 0)) { box.appendChild(fold(w("knowledge"), pretty(t.kn))); }
    if (t.ex) { box.appendChild(fold(w("extra"), pretty(t.ex))); }
    if (t.xp) { box.appendChild(fold(w("expected"), pretty(t.xp))); }
    if (t.fx.length) {
      var ul = el("ul", "fx");
      t.fx.forEach(function (x) { ul.appendChild(el("li", null, s(x))); });
      add(box, el("h4", null, w("failures")), ul);
    }
    var it = intentBlock(t.it);
    if (it) { add(box, el("h4", null, w("intent")), it); }
    if (t.R.length) { add(box, el("h4", null, w("rules") + (t.lg ? " \u00b7 " + s(t.lg[0]) : "")), rulesTable(t.R)); }
    var jb = judgeBlock(t.j);
    if (jb) { add(box, el("h4", null, w("judge")), jb); }
    return box;
  }
  function taskBlock(tk) {
    if (!tk || !tk[3] || !tk[3].length) { return null; }
    var box = el("div");
    add(box, kv([[w("completion"), tk[0] === null ? "\u2013" : Math.round(tk[0] * 100) + "%"],
                 [w("level"), tk[1] ? badge(tk[1], W["level." + LEVEL[tk[1]]] || LEVEL[tk[1]]) : ""], [w("reason"), s(tk[2])]]));
    var t = el("table");
    add(t, add(el("thead"), add(el("tr"), el("th", null, ""), el("th", null, w("part")), el("th", "num", w("turn_col")),
                                el("th", null, w("evidence")), el("th", null, w("decided_by")), el("th", null, w("reason")))));
    var body = el("tbody");
    tk[3].forEach(function (p) {
      var tr = el("tr", p[2]);
      add(tr, add(el("td"), badge(p[2], STATUS_WORD[p[2] === "p" ? "done" : p[2] === "f" ? "missing" : "not_evaluated"])),
          el("td", null, s(p[0]) + " (" + p[1] + ")"), el("td", "num", p[3] === null ? "" : p[3] + 1),
          el("td", "ev", s(p[4])), el("td", null, s(p[5])), el("td", null, s(p[6])));
      body.appendChild(tr);
    });
    t.appendChild(body);
    box.appendChild(t);
    return box;
  }
  function detail(c) {
    var d = el("div", "detail");
    var tags = c.g.map(s).join(", ");
    add(d, kv([[w("id"), caseKey(c)], [w("title"), c.t], [w("file"), s(c.lo)],
               [w("termination"), s(c.te)], ["tags", tags]]));
    if (c.h.length) {
      var hist = el("div");
      c.h.forEach(function (m) { hist.appendChild(say(m[0] === "u" ? w("input") : w("reply"), m[1], m[0] === "u" ? "user" : "agent")); });
      add(d, el("h4", null, w("history")), hist);
    }
    c.T.forEach(function (t, i) { d.appendChild(turnBlock(c, t, i)); });
    var tb = taskBlock(c.tk);
    if (tb) { add(d, el("h4", null, w("task")), tb); }
    if (c.k === "s" && c.j) { add(d, el("h4", null, w("judge")), judgeBlock(c.j)); }
    return d;
  }

  // -- drawing ------------------------------------------------------------------------------------
  var filtered = [];
  function draw() {
    filtered = CASES.filter(matches);
    list.textContent = "";
    var frag = document.createDocumentFragment();
    filtered.slice(0, state.shown).forEach(function (c) { frag.appendChild(row(c)); });
    list.appendChild(frag);
    var shown = Math.min(state.shown, filtered.length);
    count.textContent = filtered.length ? w("shown", {shown: shown, total: CASES.length, matched: filtered.length}) : w("none");
    more.textContent = "";
    if (filtered.length > state.shown) {
      var b = el("button", null, w("more", {n: Math.min(PAGE, filtered.length - state.shown)}));
      b.type = "button";
      b.setAttribute("data-action", "more");
      b.addEventListener("click", function () { state.shown += PAGE; draw(); });
      more.appendChild(b);
    }
    if (state.only !== null) {
      var all = el("button", null, w("filter.all"));
      all.type = "button";
      all.addEventListener("click", function () { state.only = null; history.replaceState(null, "", "#cases"); draw(); });
      more.appendChild(all);
    }
  }
  function each(fn) {
    var rows = list.querySelectorAll(".row");
    for (var i = 0; i < rows.length; i++) {
      var key = rows[i].getAttribute("data-case");
      var c = filtered.filter(function (x) { return caseKey(x) === key; })[0];
      if (c) { fn(c, rows[i]); }
    }
  }
  expand.addEventListener("click", function () { each(function (c, r) { toggle(c, r, true); }); });
  collapse.addEventListener("click", function () { each(function (c, r) { toggle(c, r, false); }); });

  function fromHash() {
    var m = /^#case=(.*)$/.exec(location.hash);
    if (!m) { return false; }
    var id = decodeURIComponent(m[1]);
    state.only = id;
    CASES.forEach(function (c) { if (caseKey(c) === id || c.i === id) { open[caseKey(c)] = true; } });
    draw();
    holder.scrollIntoView();
    return true;
  }
  window.addEventListener("hashchange", fromHash);
  if (!fromHash()) { draw(); }
})();
