// The reference gateway's dashboard: a client of the documented admin API, nothing more. It polls the
// journal (`?since=`), the clock and the faults every second (the core answers whole records, no streams),
// and draws with plain SVG. Everything agents sent (queries, URLs, agent names) is set as text, never markup.
//
// One file of about 660 lines on purpose. The page is a module script, so it could be split, but each file
// it loads is an asset the gateway serves without the admin key: the dashboard's routes list exactly its
// three files (isDashboardAsset), under a CSP of script-src 'self', and the package copies them as they are.
// Splitting would widen that keyless list and the build's copy for no gain in reading: the file is already
// in sections by job (the key, polling, rendering, actions), each function small, with no shared framework.

const KEY_STORAGE = 'agent-gateway.admin-key';
const POLL_MS = 1000;
const SLOW_POLL_MS = 5000;
const REPORT_MIN_INTERVAL_MS = 1500;
const MAX_ENTRIES = 5000;
const SVG = 'http://www.w3.org/2000/svg';

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

const state = {
  key: sessionStorage.getItem(KEY_STORAGE) ?? '',
  /** Journal entries by seq, in order. */
  entries: [],
  lastSeq: 0,
  rules: [],
  clock: undefined,
  /** Agent id -> { report, fetchedAt, dirty } */
  reports: new Map(),
  selected: undefined,
  timer: undefined,
  slowTimer: undefined,
};

/** Calls the admin API with the key; a refused key sends the page back to the key form. */
async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { 'x-admin-key': state.key, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  const json = await response.json().catch(() => ({}));
  if (response.status === 401 || response.status === 403) {
    forgetKey(`The gateway refused the key (${json.code ?? response.status}).`);
    throw new Error('key refused');
  }
  if (!response.ok) throw new Error(`${response.status} ${json.code ?? ''}: ${json.message ?? 'failed'}`);
  return json;
}

function el(tag, attrs = {}, text) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

const statusClass = (status) =>
  status === 0 ? 's0' : status === 429 ? 's429' : status >= 500 ? 's5xx' : status >= 400 ? 's4xx' : 's2xx';

const describe = (e) =>
  `#${e.seq} ${e.method} ${e.path} -> ${e.status === 0 ? 'dropped' : e.status}${e.code ? ` ${e.code}` : ''}`;

const clockText = (ms) => new Date(ms).toISOString().slice(11, 23);
const DAY_MS = 86_400_000;
/** An axis label: the time of day, or the date and time when the axis spans more than a day. */
const axisText = (ms, spanMs) =>
  spanMs > DAY_MS ? new Date(ms).toISOString().slice(0, 16).replace('T', ' ') : clockText(ms);

// --- the key -----------------------------------------------------------------------------------------

function forgetKey(message) {
  sessionStorage.removeItem(KEY_STORAGE);
  state.key = '';
  clearInterval(state.timer);
  clearInterval(state.slowTimer);
  $('app').hidden = true;
  $('forget-key').hidden = true;
  $('key-form').hidden = false;
  $('key-error').textContent = message ?? '';
  $('status').textContent = 'Needs the admin key.';
  $('key-input').focus();
}

async function openWithKey(key) {
  state.key = key;
  try {
    await api('GET', '/__admin/clock');
  } catch (error) {
    if (state.key) $('key-error').textContent = `Could not reach the admin API: ${error.message}`;
    return;
  }
  sessionStorage.setItem(KEY_STORAGE, key);
  $('key-form').hidden = true;
  $('app').hidden = false;
  $('forget-key').hidden = false;
  await Promise.all([loadScenarios(), loadFaultTargets(), slowPoll(), poll()]);
  openFromHash();
  state.timer = setInterval(poll, POLL_MS);
  state.slowTimer = setInterval(slowPoll, SLOW_POLL_MS);
}

// --- polling -----------------------------------------------------------------------------------------

let polling = false;
async function poll() {
  if (polling || !state.key) return;
  polling = true;
  try {
    // Ask from the last entry held: if it is not in the answer, the journal was cleared (reset) or wrapped.
    const since = Math.max(0, state.lastSeq - 1);
    const [journal, clock, faults, findings] = await Promise.all([
      api('GET', `/__admin/journal?since=${since}`),
      api('GET', '/__admin/clock'),
      api('GET', '/__admin/faults'),
      api('GET', '/__admin/findings?per_rule=10'),
    ]);
    renderFindings(findings);
    mergeJournal(journal);
    state.clock = clock;
    renderClock(clock);
    renderFaults(faults.faults);
    renderTimeline();
    renderLimits();
    await refreshReports();
    $('status').textContent =
      `Live: polling every ${POLL_MS / 1000} s. ${state.entries.length} requests shown.`;
  } catch (error) {
    if (state.key) $('status').textContent = `Not updating: ${error.message}`;
  } finally {
    polling = false;
  }
}

async function slowPoll() {
  try {
    const [scenario, limits] = await Promise.all([
      api('GET', '/__admin/scenario'),
      api('GET', '/__admin/limits'),
    ]);
    $('scenario-name').textContent = scenario.scenario?.name ?? 'none';
    $('scenario-description').textContent = scenario.scenario?.description ?? '(the base config)';
    state.rules = limits.rules;
  } catch {
    // The next poll says why.
  }
}

function mergeJournal(journal) {
  const fresh = journal.entries;
  const continues = state.lastSeq === 0 || fresh.some((e) => e.seq === state.lastSeq);
  if (!continues) {
    state.entries = [];
    state.reports.clear();
    $('reports').replaceChildren();
  }
  for (const entry of fresh) {
    if (entry.seq <= (continues ? state.lastSeq : 0)) continue;
    state.entries.push(entry);
    if (entry.agent) markDirty(entry.agent);
  }
  if (state.entries.length > MAX_ENTRIES) state.entries = state.entries.slice(-MAX_ENTRIES);
  state.lastSeq = state.entries.at(-1)?.seq ?? 0;
  $('journal-note').textContent =
    journal.dropped > 0
      ? ` The journal holds the last ${journal.capacity}; ${journal.dropped} older dropped.`
      : '';
}

function markDirty(agent) {
  const known = state.reports.get(agent) ?? { report: undefined, fetchedAt: 0, dirty: true };
  known.dirty = true;
  state.reports.set(agent, known);
}

async function refreshReports() {
  const now = performance.now();
  for (const [agent, known] of state.reports) {
    if (!known.dirty || now - known.fetchedAt < REPORT_MIN_INTERVAL_MS) continue;
    known.dirty = false;
    known.fetchedAt = now;
    try {
      known.report = await api('GET', `/__admin/report?${new URLSearchParams({ agent })}`);
    } catch {
      known.dirty = true;
    }
  }
  renderReports();
}

// --- rendering ---------------------------------------------------------------------------------------

function renderClock(clock) {
  $('clock-time').textContent = clock.time;
  $('clock-state').textContent =
    (clock.frozen ? '(frozen)' : '(running)') + (clock.epoch ? `, epoch ${clock.epoch}` : '');
}

function renderFaults(faults) {
  const list = $('fault-list');
  list.replaceChildren();
  if (faults.length === 0) list.append(el('li', {}, 'No fault armed.'));
  for (const f of faults) {
    const what =
      f.kind === 'status'
        ? `${f.status}${f.retry_after !== undefined ? ` (Retry-After ${f.retry_after})` : ''}`
        : f.kind;
    const where = `${f.match.operation ?? 'any operation'}, ${f.match.agent ?? 'any agent'}`;
    const item = el(
      'li',
      { 'data-fault': f.id },
      `${f.id}: ${what} on ${where}; fired ${f.fired}${f.count ? ` of ${f.count}` : ''} `,
    );
    const disarm = el('button', { type: 'button' }, 'Disarm');
    disarm.addEventListener('click', () => act('DELETE', `/__admin/faults/${encodeURIComponent(f.id)}`));
    item.append(disarm);
    list.append(item);
  }
}

/** The time span shown: everything held, or the last N ms of the gateway clock, and each 429's window. */
function visibleEntries() {
  const choice = /** @type {HTMLSelectElement} */ ($('window')).value;
  if (choice === 'all' || !state.clock) return state.entries;
  const from = state.clock.now - Number(choice);
  return state.entries.filter((e) => e.at + (e.retry_after_ms ?? 0) >= from);
}

function domainOf(entries) {
  let from = Number.POSITIVE_INFINITY;
  let to = Number.NEGATIVE_INFINITY;
  for (const e of entries) {
    from = Math.min(from, e.at);
    to = Math.max(to, e.at + (e.status === 429 || e.status >= 500 ? (e.retry_after_ms ?? 0) : 0));
  }
  if (!Number.isFinite(from)) return undefined;
  if (to - from < 1000) to = from + 1000;
  const pad = (to - from) * 0.03;
  return { from: from - pad, to: to + pad };
}

const LANE = 34;
const LABEL = 170;
const AXIS = 24;

/**
 * When the clock was moved back while the shown requests were made: says so, since their times belong to
 * different epochs (the client report never compares them as reactions or waits).
 */
function renderEpochNote(entries) {
  const epochs = [...new Set(entries.map((e) => e.epoch ?? 0))].sort((a, b) => a - b);
  const note = $('epoch-note');
  note.hidden = epochs.length < 2;
  note.textContent =
    epochs.length < 2
      ? ''
      : `The gateway clock was moved back while these requests were made: they span clock epochs ${epochs.join(', ')}. Times of different epochs are not comparable; the client report judges each epoch apart.`;
}

function renderTimeline() {
  const box = $('timeline-box');
  const chart = /** @type {SVGSVGElement} */ (/** @type {unknown} */ ($('timeline')));
  const entries = visibleEntries();
  renderEpochNote(entries);
  const width = Math.max(600, box.clientWidth || 900);
  const agents = [...new Set(entries.map((e) => e.agent ?? '(no agent)'))].sort();
  const height = AXIS + Math.max(1, agents.length) * LANE + 8;
  chart.setAttribute('viewBox', `0 0 ${width} ${height}`);
  chart.setAttribute('width', String(width));
  chart.setAttribute('height', String(height));
  chart.replaceChildren();
  const domain = domainOf(entries);
  if (!domain) {
    chart.append(svg('text', { x: 10, y: 20 }, 'No request yet: the journal is empty.'));
    return;
  }
  const x = (t) => LABEL + ((t - domain.from) / (domain.to - domain.from)) * (width - LABEL - 10);
  for (let i = 0; i <= 5; i++) {
    const t = domain.from + ((domain.to - domain.from) * i) / 5;
    chart.append(svg('line', { class: 'axis', x1: x(t), x2: x(t), y1: AXIS - 6, y2: height }));
    chart.append(
      svg(
        'text',
        { x: x(t) + (i === 5 ? -2 : 2), y: 12, 'text-anchor': i === 5 ? 'end' : 'start' },
        axisText(t, domain.to - domain.from),
      ),
    );
  }
  agents.forEach((agent, lane) => {
    const top = AXIS + lane * LANE;
    const group = svg('g', { class: 'lane-group', 'data-agent': agent });
    group.append(
      svg('rect', { class: 'lane', x: LABEL, y: top + 2, width: width - LABEL - 10, height: LANE - 4 }),
    );
    group.append(svg('text', { class: 'lane-label', x: 6, y: top + LANE / 2 + 4 }, agent));
    const mine = entries.filter((e) => (e.agent ?? '(no agent)') === agent);
    for (const e of mine) {
      if (!e.retry_after_ms || !(e.status === 429 || e.status >= 500)) continue;
      const band = svg('rect', {
        class: e.status === 429 ? 'band-429' : 'band-5xx',
        id: `band-${e.seq}`,
        'data-seq': e.seq,
        x: x(e.at),
        y: top + 3,
        width: Math.max(1, x(e.at + e.retry_after_ms) - x(e.at)),
        height: LANE - 6,
      });
      band.append(
        svg(
          'title',
          {},
          `Retry-After ${e.retry_after} of #${e.seq}: until ${clockText(e.at + e.retry_after_ms)}`,
        ),
      );
      group.append(band);
    }
    // Requests at (nearly) the same time are spread a little to the right, so each stays visible.
    let lastX = Number.NEGATIVE_INFINITY;
    for (const e of mine) {
      const at = Math.max(x(e.at), lastX + 7);
      lastX = at;
      const mark = svg('rect', {
        class: `req ${statusClass(e.status)}`,
        id: `req-${e.seq}`,
        'data-seq': e.seq,
        'data-status': e.status,
        x: at - 2.5,
        y: top + 8,
        width: 5,
        height: LANE - 16,
        tabindex: 0,
      });
      const detail = [
        describe(e),
        e.time,
        e.epoch ? `clock epoch ${e.epoch}` : '',
        e.retry_after ? `Retry-After ${e.retry_after}` : '',
        e.fault ? `fault ${e.fault}` : '',
        e.query ?? e.url ?? '',
      ]
        .filter(Boolean)
        .join('  ');
      mark.append(svg('title', {}, detail));
      mark.addEventListener('click', () => select(e.seq));
      group.append(mark);
      if (e.fault) {
        const fault = svg('path', {
          class: 'fault-mark',
          'data-seq': e.seq,
          d: `M ${at - 4} ${top + 6} L ${at} ${top + 1} L ${at + 4} ${top + 6} Z`,
        });
        fault.append(svg('title', {}, `fault ${e.fault} struck #${e.seq}`));
        group.append(fault);
      }
    }
    chart.append(group);
  });
  if (state.selected !== undefined) highlight(state.selected);
}

const COLOURS = ['#0969da', '#bf3989', '#1a7f37', '#bc4c00', '#8250df', '#57606a', '#cf222e', '#0a3069'];

function renderLimits() {
  const holder = $('limits');
  holder.replaceChildren();
  if (state.rules.length === 0) {
    holder.append(el('p', { class: 'hint' }, 'No rate-limit rule in force.'));
    return;
  }
  const entries = visibleEntries();
  const domain = domainOf(entries);
  const width = Math.max(600, $('timeline-box').clientWidth || 900);
  for (const rule of state.rules) {
    const block = el('div', { class: 'rule', 'data-rule': rule.name });
    block.append(
      el(
        'h3',
        {},
        `${rule.name}: ${rule.limit} per ${rule.window_seconds} s, ${rule.algorithm}, per ${rule.scope}`,
      ),
    );
    const points = new Map();
    const refused = [];
    for (const e of entries) {
      for (const q of e.quota ?? []) {
        if (q.rule !== rule.name) continue;
        if (!points.has(q.key)) points.set(q.key, []);
        points.get(q.key).push({ at: e.at, remaining: q.remaining, seq: e.seq });
      }
      if (e.limit?.rule === rule.name) refused.push(e);
    }
    if (!domain || points.size === 0) {
      block.append(el('p', { class: 'hint' }, 'No request counted by this rule yet.'));
      holder.append(block);
      continue;
    }
    const height = 110;
    const chart = svg('svg', {
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      class: 'quota',
      role: 'img',
    });
    chart.setAttribute('aria-label', `Remaining quota of ${rule.name}`);
    const x = (t) => LABEL + ((t - domain.from) / (domain.to - domain.from)) * (width - LABEL - 10);
    const y = (remaining) => 10 + (1 - remaining / rule.limit) * (height - 30);
    chart.append(svg('line', { class: 'axis', x1: LABEL, x2: width - 10, y1: y(0), y2: y(0) }));
    chart.append(svg('text', { x: LABEL - 40, y: y(rule.limit) + 4 }, String(rule.limit)));
    chart.append(svg('text', { x: LABEL - 40, y: y(0) + 4 }, '0'));
    [...points.entries()].slice(0, COLOURS.length).forEach(([key, series], i) => {
      const colour = COLOURS[i];
      // Step after each request: what was left until the next one (refills between them are not drawn).
      let d = '';
      series.forEach((p, k) => {
        d += `${k === 0 ? 'M' : 'L'} ${x(p.at)} ${k === 0 ? y(p.remaining) : y(series[k - 1].remaining)} L ${x(p.at)} ${y(p.remaining)} `;
      });
      const line = svg('path', { class: 'quota-line', d, stroke: colour, 'data-key': key });
      line.append(svg('title', {}, `${key}: remaining after each request`));
      chart.append(line);
      chart.append(svg('text', { x: 6, y: 20 + i * 14, fill: colour }, key));
    });
    for (const e of refused) {
      const dot = svg('circle', { class: 'refused', cx: x(e.at), cy: y(0), r: 3.5, 'data-seq': e.seq });
      dot.append(svg('title', {}, `${describe(e)} (refused by ${rule.name}, key ${e.limit.key})`));
      chart.append(dot);
    }
    block.append(chart);
    holder.append(block);
  }
}

function renderReports() {
  const holder = $('reports');
  const agents = [...state.reports.keys()].sort();
  for (const agent of agents) {
    const { report } = state.reports.get(agent);
    if (!report) continue;
    const id = `report-${agent.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    let box = /** @type {HTMLDetailsElement | null} */ (document.getElementById(id));
    const wasOpen = box ? box.open : true;
    const next = el('details', { class: 'report', id, 'data-agent': agent });
    next.open = wasOpen;
    const failing = report.rules.filter((r) => r.violations > 0).length;
    next.append(
      el(
        'summary',
        {},
        `${agent}: ${report.requests} requests, ${report.violations.length === 0 ? 'no violation' : `${report.violations.length} violation(s) of ${failing} rule(s)`}`,
      ),
    );
    for (const epoch of (report.epochs ?? []).slice(1))
      next.append(
        el(
          'p',
          { class: 'hint epoch' },
          `Clock epoch ${epoch.epoch} began (the clock was moved back) before #${epoch.first_seq}: each epoch is judged apart.`,
        ),
      );
    const rules = el('ul', { class: 'plain' });
    for (const rule of report.rules) {
      const item = el('li', { 'data-rule': rule.id });
      item.append(
        el(
          'strong',
          { class: rule.violations === 0 ? 'pass' : 'fail' },
          rule.violations === 0 ? 'PASS ' : 'FAIL ',
        ),
      );
      item.append(el('code', {}, rule.id), document.createTextNode(` ${rule.spec_ref}`));
      for (const v of report.violations.filter((x) => x.rule === rule.id)) {
        const violation = el('div', { class: 'violation', 'data-rule': rule.id });
        violation.append(el('p', {}, v.message));
        for (const r of v.requests) {
          const link = el('a', { href: `#req-${r.seq}`, class: 'req-link', 'data-seq': r.seq }, describe(r));
          link.addEventListener('click', (event) => {
            event.preventDefault();
            select(r.seq, true);
          });
          violation.append(link);
        }
        item.append(violation);
      }
      rules.append(item);
    }
    next.append(rules);
    if (box) box.replaceWith(next);
    else holder.append(next);
    box = next;
  }
}

function renderFindings(findings) {
  const holder = $('findings');
  holder.replaceChildren();
  if (findings.rules.length === 0) {
    holder.append(el('p', { class: 'hint' }, `No finding in ${findings.judged} judged answer(s).`));
    return;
  }
  for (const rule of findings.rules) {
    const block = el('div', { class: 'finding', 'data-rule': rule.id });
    block.append(el('h3', {}, `${rule.level} ${rule.id} (${rule.specRef}): ${rule.count} answer(s)`));
    block.append(el('p', {}, rule.title));
    for (const x of rule.exchanges) {
      const line = el('div', {});
      const link = el('a', { href: `#req-${x.seq}`, class: 'req-link', 'data-seq': x.seq }, describe(x));
      link.addEventListener('click', (event) => {
        event.preventDefault();
        select(x.seq, true);
      });
      line.append(link, document.createTextNode(` ${x.detail}`));
      block.append(line);
    }
    holder.append(block);
  }
}

const headerLines = (pairs) => (pairs ?? []).map(([name, value]) => `${name}: ${value}`).join('\n');
const bodyText = (text, size) =>
  text === undefined
    ? size > 0
      ? `(${size} bytes, not kept)`
      : ''
    : `${text}${utf8Length(text) < size ? `\n... (${size} bytes in all; the journal kept the start)` : ''}`;
const utf8Length = (text) => new TextEncoder().encode(text).length;

/** One exchange in full, as the journal keeps it (set as text: nothing of it is markup). */
function renderExchange(entry) {
  const section = $('exchange');
  if (!entry) {
    section.hidden = true;
    return;
  }
  section.hidden = false;
  $('exchange-title').textContent =
    `${describe(entry)} at ${entry.time}${entry.agent ? ` by ${entry.agent}` : ''}`;
  const x = entry.exchange;
  $('exchange-request').textContent = x
    ? `${entry.method} ${entry.path}${x.query ? `?${x.query}` : ''} HTTP/${x.http_version ?? '1.1'}\n${headerLines(x.request_headers)}\n\n${bodyText(x.request_body, x.request_body_bytes)}`
    : `${entry.method} ${entry.path}\n\n(no headers or bodies kept: journal.body_bytes is 0)`;
  $('exchange-response').textContent = x
    ? `${entry.status === 0 ? '(connection dropped)' : entry.status}\n${headerLines(x.response_headers)}\n\n${bodyText(x.response_body, x.response_body_bytes)}`
    : String(entry.status);
  const list = $('exchange-findings');
  list.replaceChildren(
    ...(entry.findings ?? []).map((f) => el('li', { 'data-rule': f.rule }, `${f.rule}: ${f.detail}`)),
  );
}

async function downloadHar() {
  $('action-error').textContent = '';
  try {
    const har = await api('GET', '/__admin/export?format=har');
    const url = URL.createObjectURL(new Blob([JSON.stringify(har, null, 2)], { type: 'application/json' }));
    const link = el('a', { href: url, download: 'agent-gateway.har' });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (error) {
    $('action-error').textContent = error.message;
  }
}

/**
 * `#clock-set` (optionally `#clock-set?time=...&frozen=0`) opens the clock form, filled in. A key in the
 * address is never read: it is dropped from it at once, and the page asks for the key as always.
 */
function openFromHash() {
  const hash = location.hash.slice(1);
  const [name, query = ''] = hash.split('?');
  const params = new URLSearchParams(query);
  if (params.has('key') || params.has('admin_key')) {
    params.delete('key');
    params.delete('admin_key');
    history.replaceState(
      null,
      '',
      `${location.pathname}${location.search}#${name}${params.size ? `?${params}` : ''}`,
    );
  }
  if (name !== 'clock-set') return;
  const time = params.get('time');
  if (time) /** @type {HTMLInputElement} */ ($('clock-set-time')).value = time;
  if (params.has('frozen'))
    /** @type {HTMLInputElement} */ ($('clock-set-frozen')).checked = params.get('frozen') !== '0';
  if (!$('app').hidden) {
    $('clock-set-form').scrollIntoView({ block: 'center' });
    $('clock-set-time').focus();
  }
}

function updateClockLink() {
  const time = /** @type {HTMLInputElement} */ ($('clock-set-time')).value.trim();
  const frozen = /** @type {HTMLInputElement} */ ($('clock-set-frozen')).checked;
  const params = new URLSearchParams();
  if (time) params.set('time', time);
  params.set('frozen', frozen ? '1' : '0');
  $('clock-set-link').setAttribute('href', `#clock-set?${params}`);
}

function highlight(seq) {
  for (const node of document.querySelectorAll('#timeline .selected')) node.classList.remove('selected');
  for (const id of [`req-${seq}`, `band-${seq}`]) document.getElementById(id)?.classList.add('selected');
}

/** Selects a request: highlighted on the timeline (with its Retry-After band), described below it. */
function select(seq, scroll = false) {
  state.selected = seq;
  highlight(seq);
  const entry = state.entries.find((e) => e.seq === seq);
  $('selection').textContent = entry
    ? `Selected ${describe(entry)} at ${entry.time}${entry.retry_after ? `, Retry-After ${entry.retry_after}` : ''}${entry.query || entry.url ? `: ${entry.query ?? entry.url}` : ''}`
    : `Request #${seq} is no longer in the journal.`;
  renderExchange(entry);
  if (scroll) $('timeline-box').scrollIntoView({ block: 'center' });
}

// --- actions -----------------------------------------------------------------------------------------

async function act(method, path, body) {
  $('action-error').textContent = '';
  try {
    await api(method, path, body);
  } catch (error) {
    $('action-error').textContent = error.message;
  }
  await Promise.all([slowPoll(), poll()]);
}

// A fault names health, whoami or any tool the gateway has: its extra tools are offered too.
async function loadFaultTargets() {
  const { tools } = await api('GET', '/__admin/tools');
  const names = ['health', 'whoami', ...Object.keys(tools)];
  $('fault-operation').replaceChildren(
    el('option', { value: '' }, 'any'),
    ...names.map((name) => el('option', { value: name }, name)),
  );
}

async function loadScenarios() {
  const { scenarios } = await api('GET', '/__admin/scenarios');
  const select = $('scenario-select');
  select.replaceChildren(
    ...scenarios.map((s) => el('option', { value: s.name, title: s.description }, s.name)),
  );
}

function wire() {
  $('key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const input = /** @type {HTMLInputElement} */ ($('key-input'));
    const key = input.value.trim();
    input.value = '';
    if (key) openWithKey(key);
  });
  $('forget-key').addEventListener('click', () => forgetKey('Key forgotten.'));
  $('scenario-load').addEventListener('click', () =>
    act('POST', '/__admin/scenario', { name: /** @type {HTMLSelectElement} */ ($('scenario-select')).value }),
  );
  $('reset').addEventListener('click', () => act('POST', '/__admin/reset'));
  $('advance').addEventListener('click', () => {
    const seconds = Number(/** @type {HTMLInputElement} */ ($('advance-seconds')).value);
    act('POST', '/__admin/clock/advance', { ms: Math.round(seconds * 1000) });
  });
  $('freeze').addEventListener('click', () => act('POST', '/__admin/clock/freeze'));
  $('clock-set-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const raw = /** @type {HTMLInputElement} */ ($('clock-set-time')).value.trim();
    const frozen = /** @type {HTMLInputElement} */ ($('clock-set-frozen')).checked;
    // Set and frozen in one call: no time runs between the two.
    act('POST', '/__admin/clock/set', { time: /^\d+$/.test(raw) ? Number(raw) : raw, frozen });
  });
  for (const id of ['clock-set-time', 'clock-set-frozen']) $(id).addEventListener('input', updateClockLink);
  window.addEventListener('hashchange', openFromHash);
  $('export-har').addEventListener('click', downloadHar);
  $('resume').addEventListener('click', () => act('POST', '/__admin/clock/resume'));
  $('window').addEventListener('change', () => {
    renderTimeline();
    renderLimits();
  });
  $('fault-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const value = (id) => /** @type {HTMLInputElement} */ ($(id)).value.trim();
    const match = {};
    if (value('fault-operation')) match.operation = value('fault-operation');
    if (value('fault-agent')) match.agent = value('fault-agent');
    const body = { kind: value('fault-kind'), match };
    if (body.kind === 'status') body.status = Number(value('fault-status'));
    if (value('fault-retry-after')) body.retry_after = Number(value('fault-retry-after'));
    if (value('fault-count')) body.count = Number(value('fault-count'));
    act('POST', '/__admin/faults', body);
  });
}

wire();
openFromHash();
if (state.key) openWithKey(state.key);
else forgetKey();
