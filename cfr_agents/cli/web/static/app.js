"use strict";
// cfr-agents in the browser: the explorer of a policy's betting tree and a human's seat at the table.
// The explorer reads its views from the page itself (a static report) or from the server (cfr-agents serve).

const $ = (id) => document.getElementById(id);

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (name === "style") node.style.cssText = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function colour(action) {
  const name = action.toLowerCase();
  if (name === "fold" || name === "pass") return "var(--fold)";
  if (name === "call" || name === "check") return "var(--call)";
  if (name === "raise" || name === "bet") return "var(--raise)";
  return "var(--other)";
}

function number(value, digits) {
  return value === null || value === undefined ? "–" : value.toFixed(digits === undefined ? 3 : digits);
}

async function api(path, body) {
  const response = await fetch(path, body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({ error: `the server answered ${response.status}` }));
  if (!response.ok) throw new Error(data.error || `the server answered ${response.status}`);
  return data;
}

// --- the explorer -------------------------------------------------------------------------------------------

class Explorer {
  constructor(source) {
    this.source = source; // { summary, view(path) -> Promise }
  }

  async show(path) {
    const view = await this.source.view(path);
    renderCrumbs(view, (p) => this.show(p));
    renderChildren(view, (p) => this.show(p));
    renderPanels(view);
    document.body.dataset.path = view.path;
  }
}

function renderSummary(summary) {
  const box = $("summary");
  box.replaceChildren();
  const size = summary.infosets === null ? "" : ` — ${summary.infosets.toLocaleString()} infosets`;
  box.append(el("strong", {}, `${summary.game_name}`), `${size}, values in ${summary.units}. `);
  if (summary.note) box.append(el("div", { class: "note" }, summary.note));
  for (const policy of summary.policies) {
    if (policy.exploitability === null) continue;
    box.append(el("div", { class: "note" },
      `${policy.name}: exploitability ${number(policy.exploitability, 5)} ${summary.units}; ` +
      `value against ${policy.against} ${number(policy.value, 4)} per hand (seat 0 ${number(policy.seat_values[0], 4)}, seat 1 ${number(policy.seat_values[1], 4)})`));
  }
}

function renderCrumbs(view, go) {
  const list = $("crumbs");
  list.replaceChildren(el("li", {}, el("a", { onclick: () => go(""), "data-path": "" }, "start")));
  const ids = view.path === "" ? [] : view.path.split(".");
  view.line.forEach((step, i) => {
    const path = ids.slice(0, i + 1).join(".");
    const who = step.player < 0 ? "board" : `P${step.player}`;
    list.append(el("li", {}, el("a", { onclick: () => go(path), "data-path": path }, `${who}: ${step.text}`)));
  });
}

function renderChildren(view, go) {
  const list = $("children");
  list.replaceChildren();
  $("moves-title").textContent = view.kind === "terminal" ? "The hand is over" :
    view.kind === "chance" ? "Public card" : `Player ${view.player} acts`;
  for (const move of view.moves) {
    list.append(el("li", {}, el("a", { onclick: () => go(move.path), "data-path": move.path, class: "move" }, move.name)));
  }
}

function legend(actions) {
  return el("div", { class: "legend" }, ...actions.map((a) => el("span", {}, el("span", { class: "swatch", style: `background:${colour(a)}` }), a)));
}

function mixSpans(actions, probabilities) {
  return actions.map((a, i) => el("span", { style: `width:${(100 * probabilities[i]).toFixed(2)}%;background:${colour(a)}`, title: `${a} ${number(probabilities[i])}` }));
}

const RANKS = "AKQJT98765432";

function holdemHands(hands) {
  return hands.every((hand) => hand.split(" ").length === 2);
}

function grid(view, policy) {
  // 13x13 (or as many ranks as the deck has): pairs on the diagonal, suited above, offsuit below.
  const ranks = [...new Set(view.hands.flatMap((h) => h.split(" ").map((c) => c[0])))]
    .sort((a, b) => RANKS.indexOf(a) - RANKS.indexOf(b));
  const cells = new Map();
  view.hands.forEach((hand, h) => {
    const [first, second] = hand.split(" ");
    let i = ranks.indexOf(first[0]);
    let j = ranks.indexOf(second[0]);
    if (i > j) [i, j] = [j, i];
    const suited = first[1] === second[1];
    const key = i === j ? `${i},${i}` : suited ? `${i},${j}` : `${j},${i}`;
    const weight = policy.share[h] || 0;
    const entry = cells.get(key) || { mix: view.actions.map(() => 0), weight: 0, count: 0, hands: [] };
    const w = weight > 0 ? weight : 1e-12;
    policy.strategy[h].forEach((p, a) => { entry.mix[a] += w * p; });
    entry.weight += w; entry.count += 1; entry.hands.push(hand);
    cells.set(key, entry);
  });
  const box = el("div", { class: "grid", style: `grid-template-columns:repeat(${ranks.length}, 1fr);max-width:${Math.min(36, 3.4 * ranks.length)}rem` });
  for (let r = 0; r < ranks.length; r++) {
    for (let c = 0; c < ranks.length; c++) {
      const name = r === c ? ranks[r] + ranks[c] : r < c ? `${ranks[r]}${ranks[c]}s` : `${ranks[c]}${ranks[r]}o`;
      const entry = cells.get(`${r},${c}`);
      if (!entry) { box.append(el("div", { class: "cell empty" }, el("b", {}, name))); continue; }
      const mix = entry.mix.map((m) => m / entry.weight);
      box.append(el("div", { class: "cell", title: `${name} (${entry.hands.join(", ")}): ` + view.actions.map((a, i) => `${a} ${number(mix[i], 2)}`).join(", ") },
        ...mixSpans(view.actions, mix), el("b", {}, name)));
    }
  }
  return box;
}

function bars(view, policy) {
  const box = el("div", { class: "bars" });
  view.hands.forEach((hand, h) => {
    box.append(el("span", {}, hand), el("div", { class: "bar-track", "data-hand": hand }, ...mixSpans(view.actions, policy.strategy[h])));
  });
  return box;
}

function numbers(view, policy) {
  const head = el("tr", {}, el("th", {}, "hand"), el("th", {}, "reach"), el("th", {}, "share"),
    ...view.actions.map((a) => el("th", {}, `${a} p`)), ...view.actions.map((a) => el("th", {}, `${a} value`)),
    el("th", {}, "BR plays"), el("th", {}, "BR gain"));
  const table = el("table", { class: "numbers" }, el("thead", {}, head));
  const body = el("tbody");
  view.hands.forEach((hand, h) => {
    const best = policy.best_response[h];
    const values = policy.values[h] || null;
    const row = el("tr", { class: best && best.deviates ? "deviates" : "", "data-key": view.keys[h] },
      el("td", {}, hand), el("td", {}, number(policy.reach[h])), el("td", {}, number(policy.share[h])),
      ...policy.strategy[h].map((p) => el("td", { class: "probability" }, number(p, 4))),
      ...view.actions.map((_, a) => el("td", {}, values ? number(values[a]) : "–")),
      el("td", {}, best ? view.actions[best.action] : "–"), el("td", {}, best ? number(best.gain, 4) : "–"));
    body.append(row);
  });
  table.append(body);
  return table;
}

function renderPanels(view) {
  const panels = $("panels");
  panels.replaceChildren();
  if (view.kind !== "decision") {
    panels.append(el("div", { class: "panel chance" }, view.kind === "chance" ?
      "A public card is dealt: choose it on the left." : "The hand is over here."));
    return;
  }
  for (const policy of view.policies) {
    const picture = holdemHands(view.hands) ? grid(view, policy) : bars(view, policy);
    panels.append(el("div", { class: "panel", "data-policy": policy.name },
      el("h3", {}, policy.name),
      el("div", { class: "note" }, policy.against === null ? `player ${view.player} to act; ${view.note}` :
        `player ${view.player} to act; values against ${policy.against}; rows in amber: the best response plays otherwise`),
      legend(view.actions), picture, el("div", { class: "scroll" }, numbers(view, policy))));
  }
}

async function openExplorer(source) {
  $("explorer").hidden = false;
  renderSummary(source.summary);
  const explorer = new Explorer(source);
  await explorer.show("");
  return explorer;
}

function serverSource(opened) {
  return {
    summary: opened.summary,
    view: (path) => api(`api/explore/${opened.id}/node?path=${encodeURIComponent(path)}`),
  };
}

function staticSource(data) {
  return {
    summary: data.summary,
    view: async (path) => {
      const view = data.views[path];
      if (!view) throw new Error(`no public node ${path}`);
      return view;
    },
  };
}

// --- play ---------------------------------------------------------------------------------------------------

let session = null;

function showStep(step) {
  const log = $("play-log");
  for (const text of step.outcomes) log.textContent = `${text}\n\n${log.textContent}`;
  const moves = $("play-moves");
  moves.replaceChildren();
  if (step.view) {
    $("play-hand").textContent = step.view.text;
    for (const [action, name] of step.view.legal) {
      moves.append(el("button", { type: "button", style: `background:${colour(name)}`, "data-action": String(action),
        onclick: () => move(action) }, `${name}`));
    }
  }
  if (step.ended) {
    $("play-hand").textContent = step.summary || step.ended;
    session = null;
    document.body.dataset.play = "over";
  } else {
    document.body.dataset.play = "waiting";
  }
}

async function move(action) {
  if (!session) return;
  $("play-error").textContent = "";
  try { showStep(await api(`api/play/${session}/move`, { action })); } catch (error) { $("play-error").textContent = error.message; }
}

function setUpPlay() {
  $("play-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("play-error").textContent = "";
    $("play-log").textContent = "";
    try {
      const started = await api("api/play/new", {
        game: $("play-game").value, agent: $("play-agent").value, seat: $("play-seat").value, seed: Number($("play-seed").value),
      });
      session = started.session;
      $("play-table").hidden = false;
      showStep(started.step);
    } catch (error) { $("play-error").textContent = error.message; }
  });
  $("play-quit").addEventListener("click", async () => {
    if (!session) return;
    try { showStep(await api(`api/play/${session}/quit`, {})); } catch (error) { $("play-error").textContent = error.message; }
  });
}

// --- the page -----------------------------------------------------------------------------------------------

function selectTab(name) {
  for (const tab of document.querySelectorAll(".tab")) tab.hidden = tab.id !== name;
  for (const button of document.querySelectorAll("#tabs button")) button.classList.toggle("active", button.dataset.tab === name);
}

async function setUpServer() {
  for (const button of document.querySelectorAll("#tabs button")) button.addEventListener("click", () => selectTab(button.dataset.tab));
  setUpPlay();
  const listing = await api("api/files");
  for (const game of listing.games) $("game-list").append(el("option", { value: game }));
  for (const agent of listing.agents) $("agent-list").append(el("option", { value: agent }));
  for (const file of listing.files) {
    $("explore-file").append(el("option", { value: file }, file));
    $("explore-vs").append(el("option", { value: file }, file));
    $("agent-list").append(el("option", { value: file }));
  }
  $("explore-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("explore-error").textContent = "";
    const files = [$("explore-file").value, $("explore-vs").value].filter((f) => f);
    try {
      const opened = await api("api/explore/open", { files, against: $("explore-against").value });
      await openExplorer(serverSource(opened));
    } catch (error) { $("explore-error").textContent = error.message; }
  });
  selectTab("play");
  document.body.dataset.ready = "yes";
}

async function start() {
  const embedded = $("report-data");
  if (embedded) {
    $("tabs").hidden = true;
    $("explore-form").hidden = true;
    selectTab("explore");
    await openExplorer(staticSource(JSON.parse(embedded.textContent)));
    document.body.dataset.ready = "yes";
  } else {
    await setUpServer();
  }
}

start().catch((error) => { document.body.dataset.ready = "error"; $("explore-error").textContent = error.message; });
