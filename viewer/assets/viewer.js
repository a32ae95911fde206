// rollgate viewer: the few things the server-rendered pages cannot do alone. Regions marked
// [data-refresh] reload themselves while a run is live (every 2 s, or data-every ms); token views ([data-tokens]) are drawn
// from their JSON data, one page at a time, with a tooltip per token. Served pages page through
// the server (?from=); an exported file holds every id and pages locally.
"use strict";
(() => {
  const POLL_MS = 2000;
  const FETCH_TIMEOUT_MS = 10000;
  const ROLES = {
    c: "prompt context",
    s: "tool output (SFT mask)",
    t: "sampled, trained (loss 1)",
    m: "sampled, loss 0",
    x: "loss 1 on an id that was not sampled",
  };

  function refresh(region) {
    let busy = false;
    const tick = async () => {
      if (busy || document.hidden) return;
      busy = true;
      try {
        const res = await fetch(region.dataset.refresh, {
          credentials: "same-origin",
          signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        });
        if (res.ok) {
          const html = await res.text();
          if (html !== region.innerHTML) region.innerHTML = html;
          const stamp = document.querySelector("[data-updated]");
          if (stamp) stamp.textContent = "updated " + new Date().toLocaleTimeString();
          if (region.querySelector("[data-settled]")) clearInterval(timer);
        }
      } catch (_) {
        // The next tick tries again.
      } finally {
        busy = false;
      }
    };
    // A region that costs the server more to build asks to be polled less often (data-every, ms).
    const timer = setInterval(tick, Math.max(POLL_MS, Number(region.dataset.every) || 0));
  }

  const tip = document.createElement("div");
  tip.id = "tip";
  document.body.append(tip);

  function tokenView(box) {
    const data = JSON.parse(document.getElementById(box.dataset.tokens).textContent);
    const size = Number(box.dataset.size) || 4096;
    const served = box.dataset.mode === "served";
    const section = box.closest("section") || document.body;
    const pager = section.querySelector(".pager");
    const lps = new Map();
    let from = served ? data.from : 0;

    function piece(i) {
      const joined = data.joins[i];
      return joined !== undefined ? joined : data.vocab[data.ids[i - data.from]];
    }

    function mark(m) {
      const el = document.createElement("span");
      el.className = "mark " + m.part;
      el.textContent = m.part === "context"
        ? "turn #" + m.index + " · prompt ids it added"
        : "turn #" + m.index + " · sampled";
      return el;
    }

    function render() {
      const to = served ? data.to : Math.min(from + size, data.total);
      const marks = new Map();
      const drift = new Set();
      for (const m of data.marks) {
        if (m.kind === "drift") drift.add(m.at);
        else marks.set(m.at, [...(marks.get(m.at) || []), m]);
      }
      // Logprobs are listed for sampled ids only: skip those before the page.
      let lp = 0;
      for (let i = data.from; i < from; i++) {
        const k = data.kinds[i - data.from];
        if (k === "t" || k === "m") lp++;
      }
      lps.clear();
      const out = document.createDocumentFragment();
      for (let i = from; i < to; i++) {
        for (const m of marks.get(i) || []) out.append(mark(m));
        const k = data.kinds[i - data.from];
        const text = piece(i);
        const s = document.createElement("span");
        // Every other id is a shade darker, so token boundaries show inside plain text.
        s.className = "k-" + k + (i % 2 ? " odd" : "") + (text === "" ? " empty" : "") +
          (drift.has(i) ? " drift" : "");
        s.dataset.i = i;
        // A newline is marked with an empty <i> before it (drawn as ↵): the text stays the id's.
        text.split("\n").forEach((part, n) => {
          if (n > 0) s.append(document.createElement("i"), "\n");
          if (part) s.append(part);
        });
        if (k === "t" || k === "m") {
          const p = data.logprobs[lp++];
          lps.set(i, p);
          if (p !== null) s.style.setProperty("--heat", (1 - Math.exp(p)).toFixed(2));
        }
        out.append(s);
      }
      box.replaceChildren(out);
      if (pager) drawPager(to);
      performance.mark("rollgate:tokens-drawn");
    }

    function go(at) {
      at = Math.max(0, Math.min(at, Math.max(0, data.total - 1)));
      if (served) {
        const url = new URL(location.href);
        url.searchParams.set("from", String(at));
        location.href = url.toString();
      } else {
        from = at;
        render();
      }
    }

    function drawPager(to) {
      const button = (label, at, enabled) => {
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = label;
        b.disabled = !enabled;
        b.addEventListener("click", () => go(at));
        return b;
      };
      const info = document.createElement("span");
      info.className = "range";
      info.textContent = "ids " + from.toLocaleString() + "–" + to.toLocaleString() + " of " +
        data.total.toLocaleString();
      const last = Math.max(0, Math.floor((data.total - 1) / size) * size);
      pager.replaceChildren(
        button("« first", 0, from > 0),
        button("‹ prev", Math.max(0, from - size), from > 0),
        info,
        button("next ›", to, to < data.total),
        button("last »", last, to < data.total),
      );
    }

    section.addEventListener("click", (e) => {
      const link = e.target.closest("a[data-from]");
      if (!link || served) return;
      e.preventDefault();
      go(Number(link.dataset.from));
      box.scrollIntoView();
    });
    box.addEventListener("mouseover", (e) => {
      const s = e.target.closest("span[data-i]");
      if (!s) return;
      const i = Number(s.dataset.i);
      const k = data.kinds[i - data.from];
      const p = lps.get(i);
      tip.textContent = "#" + i + "  id " + data.ids[i - data.from] + "  " +
        JSON.stringify(piece(i)) + "\n" + ROLES[k] +
        (p === undefined
          ? ""
          : p === null
          ? "\nno logprob reported"
          : "\nlogprob " + p + "  (p " + Math.exp(p).toFixed(3) + ")");
      tip.style.display = "block";
    });
    box.addEventListener("mousemove", (e) => {
      tip.style.left = Math.min(e.clientX + 14, innerWidth - 540) + "px";
      tip.style.top = e.clientY + 16 + "px";
    });
    box.addEventListener("mouseleave", () => tip.style.display = "none");
    render();
  }

  // An anchor to a closed <details> (a turn in an exported file) opens it.
  const openTarget = () => {
    const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target && target.tagName === "DETAILS") target.open = true;
  };
  addEventListener("hashchange", openTarget);
  openTarget();

  // A filter applies as soon as it is chosen (no inline handler: the page's CSP allows none).
  document.addEventListener("change", (e) => {
    if (e.target.matches && e.target.matches("select[data-submit]")) e.target.form.submit();
  });

  document.querySelectorAll("[data-refresh]").forEach(refresh);
  document.querySelectorAll("[data-tokens]").forEach(tokenView);
})();
