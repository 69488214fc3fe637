// What every page shares: calls to the JSON API, the error line, and drawing a card.
// No framework and no build step: the pages are plain files the server sends as they are.
"use strict";

const api = {
  game: null,   // the page's game name (hex, holdem, ...)
  id: null,     // the id of the game being played
  view: null,   // the last view the server sent
  moving: false, // a move is on its way: a key or click meanwhile is dropped (it would be a stale 409)

  async call(method, path, body) {
    const options = { method, headers: {} };
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    const response = await fetch(path, options);
    const type = response.headers.get("Content-Type") || "";
    const data = type.includes("json") ? await response.json() : await response.text();
    if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
    return data;
  },

  // start a game with the options; draw(view) shows it
  async start(options, draw) {
    const data = await guarded(() => this.call("POST", `/api/${this.game}/new`, options), "Starting (the first game compiles: seconds) ...");
    if (!data) return;
    this.id = data.id;
    this.view = data.view;
    history.replaceState(null, "", "#" + data.id);   // the address names the game: a reload shows it again
    draw(data.view);
  },

  // the game named in the address (#id), if any: a reload shows the same position
  async resume(draw) {
    const id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    const view = await guarded(() => this.call("GET", `/api/${this.game}/${encodeURIComponent(id)}`), "Loading the game ...");
    if (!view) { history.replaceState(null, "", location.pathname); return; }   // dropped: the error line says so
    this.id = id;
    this.view = view;
    draw(view);
  },

  // play a move; the version makes a move from a stale page a 409, not a wrong move
  async move(body, draw) {
    if (!this.id || this.moving) return;
    this.moving = true;
    let view;
    try {
      view = await guarded(() => this.call("POST", `/api/${this.game}/${this.id}/move`,
                                           { ...body, version: this.view.version }), "The computer is thinking ...");
    } finally {
      this.moving = false;
    }
    if (!view) return;
    this.view = view;
    draw(view);
  },

  async think() {
    if (!this.id) return null;
    return guarded(() => this.call("GET", `/api/${this.game}/${this.id}/think`), "Asking the agent ...");
  },
};

// run fn, showing `busy` meanwhile and the server's error line if it refuses
async function guarded(fn, busy) {
  const status = document.getElementById("status");
  status.className = "busy";
  status.textContent = busy;
  const started = performance.now();
  try {
    const result = await fn();
    status.className = "";
    status.textContent = `(${((performance.now() - started) / 1000).toFixed(2)} s)`;
    return result;
  } catch (err) {
    status.className = "error";
    status.textContent = err.message;
    return null;
  }
}

// a card dict of the API ({id, rank, suit, symbol}) as an element; onclick makes it a button
function cardElement(card, onclick) {
  const el = document.createElement(onclick ? "button" : "span");
  el.className = "card " + (card.suit === "h" || card.suit === "d" ? "red" : "black");
  el.textContent = (card.rank === "T" ? "10" : card.rank) + card.symbol;
  el.dataset.id = card.id;
  if (onclick) el.onclick = () => onclick(card);
  return el;
}

function backElement() {
  const el = document.createElement("span");
  el.className = "card back";
  el.textContent = "🂠";
  return el;
}

function fill(id, children) {
  const el = document.getElementById(id);
  el.replaceChildren(...children);
  return el;
}

function text(id, value) {
  document.getElementById(id).textContent = value;
}

function el(tag, content, className) {
  const e = document.createElement(tag);
  if (content !== undefined) e.textContent = content;
  if (className) e.className = className;
  return e;
}

// the options form's values: inputs named like the API's options, empty ones left out
function formOptions(form) {
  const options = {};
  for (const input of form.querySelectorAll("[name]")) {
    if (input.type === "checkbox") options[input.name] = input.checked;
    else if (input.value !== "") options[input.name] = input.dataset.int !== undefined ? parseInt(input.value, 10) : input.value;
  }
  return options;
}
