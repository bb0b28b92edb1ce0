// @ts-check
/**
 * The script of report.html, inlined as it is (a module script, run after the
 * page and the plotting library): it embeds every plot, then runs the trace
 * viewer. Plain JavaScript type-checked through JSDoc against the DOM and the
 * data types in view.ts (tsconfig.json here), so the page carries exactly the
 * file that was checked and linted, with no build step. Trace data only ever
 * reaches the page through textContent and attribute setters, never as markup.
 */

/** @typedef {import('./view.ts').PageDataId} PageDataId */
/** @typedef {import('./view.ts').PagePlot} PagePlot */
/** @typedef {import('./view.ts').ProposalView} ProposalView */
/** @typedef {import('./view.ts').TraceView} TraceView */

/**
 * @typedef {(el: HTMLElement, spec: unknown, options: { mode: 'vega-lite'; renderer: 'svg'; actions: boolean }) => Promise<unknown>} VegaEmbed
 */

/**
 * The data the page inlines under `id`.
 * @param {PageDataId} id
 * @returns {unknown}
 */
function readData(id) {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`report.html has no #${id}`);
  return JSON.parse(el.textContent ?? 'null');
}

/** vega-embed's browser build defines this global; undefined when the page was rendered without it. */
function vegaEmbed() {
  return /** @type {{ vegaEmbed?: VegaEmbed }} */ (/** @type {unknown} */ (globalThis)).vegaEmbed;
}

/**
 * Embeds every plot; when all have settled, marks <body> (the browser test waits for it).
 * @param {readonly PagePlot[]} plots
 */
function embedPlots(plots) {
  const embed = vegaEmbed();
  const pending = plots.map((p) => {
    const el = document.getElementById(`plot-${p.id}`);
    if (el === null || embed === undefined) return Promise.resolve(p.id);
    return embed(el, p.spec, { mode: 'vega-lite', renderer: 'svg', actions: false }).then(
      () => null,
      (/** @type {unknown} */ e) => {
        el.textContent = `plot failed: ${String(e)}`;
        return p.id;
      },
    );
  });
  void Promise.all(pending).then((failed) => {
    const bad = failed.filter((x) => x !== null);
    document.body.setAttribute('data-plots', bad.length === 0 ? 'rendered' : `failed:${bad.join(',')}`);
  });
}

/**
 * An element with a class and text (as text, never markup).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string | null} [cls]
 * @param {string | number | null} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
function h(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

/**
 * @param {string} cls
 * @param {string} text
 */
function badge(cls, text) {
  return h('span', `badge ${cls}`, text);
}

/** @param {boolean | number | null} v */
function yesNo(v) {
  if (v === null) return 'N/A';
  return v === true || v === 1 ? 'yes' : 'no';
}

/**
 * @template T
 * @param {readonly T[]} items
 * @param {(item: T) => HTMLElement} make
 */
function list(items, make) {
  const ul = h('ul');
  for (const x of items) ul.appendChild(make(x));
  return ul;
}

/** @param {TraceView} t */
function label(t) {
  return `${t.task_id} · ${t.defense} · ${t.model} · seed ${t.seed} · ${t.stage}${t.available ? '' : ' (no trace)'}`;
}

/** @param {TraceView} t */
function metaTable(t) {
  const meta = h('table', 'meta');
  /** @type {[string, string | number | null][]} */
  const rows = [
    ['rollout', t.rollout_id],
    ['task', t.task_id],
    ['stage', t.stage],
    ['defense', t.defense],
    ['model', t.model],
    ['seed', t.seed],
    ['status', t.status],
    ['outcome', t.outcome],
    ['end', t.end_reason],
    ['failed tests', t.failed_tests.join(', ') || '-'],
    ['tampering', t.tampering.join('; ') || '-'],
    ['utility', yesNo(t.utility_success)],
    ['attack', yesNo(t.attack_success)],
    ['committed harm', yesNo(t.committed_harm)],
    ['topology', t.topology ?? 'single agent'],
  ];
  for (const [name, value] of rows) {
    const tr = h('tr');
    tr.appendChild(h('td', null, name));
    tr.appendChild(h('td', null, value === null ? 'N/A' : value));
    meta.appendChild(tr);
  }
  return meta;
}

/** @param {ProposalView} p */
function proposalCard(p) {
  const blocked = p.decision !== null && p.decision.action !== 'allow';
  const card = h('div', `proposal${p.tainted ? ' tainted' : ''}${blocked ? ' blocked' : ''}`);
  const title = h('h4', null, `#${p.index} · turn ${p.turn}${p.agent === null ? '' : ` · ${p.agent}`} · ${p.outcome}${p.exit_code === null ? '' : ` (exit ${p.exit_code})`}`);
  if (p.tainted) title.appendChild(badge('tainted', 'tainted'));
  if (blocked && p.decision !== null) title.appendChild(badge('blocked', p.decision.action));
  if (p.side_effecting === true) title.appendChild(badge('', 'side-effecting'));
  card.appendChild(title);
  card.appendChild(h('pre', null, p.command));
  if (!p.valid) card.appendChild(h('div', null, `invalid: ${p.invalid_reason ?? ''}`));
  if (p.decision !== null) card.appendChild(h('div', null, `decision: ${p.decision.action} · rule ${p.decision.rule_id}${p.decision.reason ? ` — ${p.decision.reason}` : ''}`));
  if (p.tainted_tokens.length > 0) card.appendChild(h('div', null, `tainted tokens: ${p.tainted_tokens.join(', ')}`));
  if (p.processes.length > 0) {
    card.appendChild(h('div', null, 'processes:'));
    card.appendChild(
      list(p.processes, (x) => {
        const li = h('li', x.tainted ? 'commit tainted' : null, `${x.exec}  ${x.argv}`);
        if (x.tainted) li.appendChild(badge('tainted', 'tainted'));
        return li;
      }),
    );
  }
  if (p.syscalls.length > 0 || p.syscalls_hidden > 0) {
    card.appendChild(h('div', null, `syscalls (${p.syscalls_total}, ${p.syscalls_hidden} not listed):`));
    card.appendChild(list(p.syscalls, (s) => h('li', `sys ${s.kind}${s.denied ? ' denied' : ''}`, s.text)));
  }
  if (p.denied_effects.length > 0) {
    card.appendChild(h('div', null, 'refused by the kernel:'));
    card.appendChild(list(p.denied_effects, (d) => h('li', 'sys denied', d)));
  }
  card.appendChild(h('div', null, `commits: ${p.commits.length > 0 ? '' : 'none'}`));
  if (p.commits.length > 0) {
    card.appendChild(
      list(p.commits, (c) => {
        const li = h('li', `commit${c.tainted ? ' tainted' : ''}`, c.text);
        if (c.tainted) li.appendChild(badge('tainted', 'tainted'));
        if (c.secret) li.appendChild(badge('secret', 'secret'));
        return li;
      }),
    );
  }
  if (p.output !== '') {
    const d = h('details');
    d.appendChild(h('summary', null, 'output'));
    d.appendChild(h('pre', null, p.output));
    card.appendChild(d);
  }
  return card;
}

/**
 * One rollout's trace in `body`.
 * @param {HTMLElement} body
 * @param {TraceView | undefined} t
 */
function showTrace(body, t) {
  body.textContent = '';
  if (t === undefined) {
    body.appendChild(h('p', 'empty', 'No rollout matches.'));
    return;
  }
  body.appendChild(metaTable(t));
  if (!t.available) {
    body.appendChild(h('p', 'empty', t.note));
    return;
  }
  if (t.sources.length > 0) {
    body.appendChild(h('h4', null, 'Sources'));
    body.appendChild(list(t.sources, (s) => h('li', null, `${s.kind}: ${s.pattern}`)));
  }
  if (t.agent_messages.length > 0) {
    body.appendChild(h('h4', null, 'Messages between agents'));
    body.appendChild(
      list(t.agent_messages, (m) => {
        const li = h('li', m.tainted ? 'commit tainted' : null, `${m.from} → ${m.to}: ${m.text}`);
        if (m.tainted) li.appendChild(badge('tainted', 'tainted'));
        return li;
      }),
    );
  }
  if (t.tainted_files.length > 0) {
    body.appendChild(h('h4', null, `Tainted files (${t.caps.tainted_files_total})`));
    body.appendChild(list(t.tainted_files, (f) => h('li', 'commit tainted', f)));
  }
  if (t.caps.proposals_shown < t.caps.proposals_total) body.appendChild(h('p', 'note', `Showing ${t.caps.proposals_shown} of ${t.caps.proposals_total} proposals.`));
  if (t.proposals.length === 0) body.appendChild(h('p', 'empty', 'The agent proposed nothing.'));
  for (const p of t.proposals) body.appendChild(proposalCard(p));
}

/**
 * The rollout picker (a filter and a select) over every rollout the page lists.
 * @param {readonly TraceView[]} traces
 */
function runViewer(traces) {
  const select = /** @type {HTMLSelectElement | null} */ (document.getElementById('trace-select'));
  const filter = /** @type {HTMLInputElement | null} */ (document.getElementById('trace-filter'));
  const body = document.getElementById('trace-body');
  if (select === null || filter === null || body === null) return;
  const show = () => showTrace(body, traces[Number(select.value)]);
  const fill = () => {
    const q = filter.value.toLowerCase();
    const keep = select.value;
    select.textContent = '';
    traces.forEach((t, i) => {
      const text = label(t);
      if (q && !text.toLowerCase().includes(q) && !t.rollout_id.toLowerCase().includes(q)) return;
      const o = h('option', null, text);
      o.value = String(i);
      select.appendChild(o);
    });
    if (keep && [...select.options].some((o) => o.value === keep)) select.value = keep;
    show();
  };
  select.addEventListener('change', show);
  filter.addEventListener('input', fill);
  fill();
}

embedPlots(/** @type {PagePlot[]} */ (readData('report-plots')));
runViewer(/** @type {TraceView[]} */ (readData('report-traces')));
