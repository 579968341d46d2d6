// pages/job.js — one job (#/jobs/{id}): a live header with its actions
// (cancel and delete ask first; a finished job can run again), then the
// solutions, first because they are what people come for, then the search
// statistics (bar chart per level, worker table) in a fold.
//
// The solutions card is the solution browser (../solutions.js), with its
// views at #/jobs/{id}/solutions/{n}, /gallery/{page} and /compare/{a}/{b}:
// the page makes it once the job and its puzzle are loaded, passes on each
// new state of the job and each new address, and shows its errors.  Each
// section here is a function of its own that builds the section and
// returns it with the update it takes from a new state of the job.

import { h, clear } from '../dom.js';
import { api, isFinal } from '../api.js';
import { fmtInt, fmtRate, fmtTime } from '../format.js';
import { colorMap } from '../colors.js';
import { watchJob } from '../live.js';
import { drawLevelChart } from '../chart.js';
import { solutionBrowser } from '../solutions.js';
import {
  stateBadge, updateStateBadge, progressBar, updateProgress, limitText,
  actionButtons, updateActionButtons, runAction, confirmAction,
} from '../jobui.js';

export function mount(root, params) {
  const id = params.id;
  document.title = `Job ${id} · Tessera`;
  let destroyed = false;
  let watcher = null;
  let job = null;
  let busy = false;
  let header = null, stats = null, browser = null; // the sections, once built

  const container = h('div', { class: 'container job-page' });
  const errorBox = h('div', { class: 'alert', role: 'alert', 'data-testid': 'page-error', hidden: true });
  container.append(errorBox);
  root.append(container);
  const showError = (msg) => { errorBox.textContent = msg || ''; errorBox.hidden = !msg; };

  function buildPage(puzzle, colors) {
    header = jobHeader(job, onAction);
    browser = solutionBrowser({ id, job, puzzle, colors, params, onError: showError });
    stats = statistics();
    container.append(crumbs(job), header.element, browser.element, stats.element);
  }

  function update(j) {
    job = j;
    header.update(j, busy);
    stats.update(j.stats);
    browser.update(j);
  }

  async function onAction(action) {
    if (!(await confirmAction(action, `job ${job.id} (${job.name || 'unnamed'})`)) || destroyed) return;
    busy = true;
    updateActionButtons(header.actions, job, true);
    showError('');
    try {
      const j = await runAction(job.id, action, job);
      if (destroyed) return;
      busy = false;
      if (j == null) { location.hash = '#/'; return; }
      if (j.rerun) { location.hash = `#/jobs/${j.rerun.id}`; return; }
      // Actions answer the job without stats: keep the last ones.
      update({ ...j, stats: j.stats || job.stats });
      if (!isFinal(j) && !watcher) startWatch();
    } catch (e) {
      busy = false;
      updateActionButtons(header.actions, job);
      showError(e.message);
    }
  }

  function startWatch() {
    watcher?.close();
    watcher = null;
    if (isFinal(job)) return;
    watcher = watchJob(job.id, (j) => {
      update(j);
      if (isFinal(j)) { watcher?.close(); watcher = null; }
    }, () => { showError(`Job ${id} no longer exists.`); watcher = null; });
  }

  // ---- first load --------------------------------------------------------
  const ready = (async () => {
    try {
      job = await api.job(id);
    } catch (e) {
      if (destroyed) return;
      container.append(h('h1', { text: `Job ${id}` }), h('p', {}, h('a', { href: '#/', text: 'Back to the jobs' })));
      showError(e.message);
      return;
    }
    if (destroyed) return;
    let puzzle = null;
    let colors = colorMap([]);
    try {
      puzzle = await api.puzzle(id);
      colors = colorMap(puzzle.pieces);
    } catch (e) {
      if (destroyed) return;
      showError(`Could not load the puzzle: ${e.message}`);
    }
    if (destroyed) return; // no page (and no 3D view) for a page already gone
    buildPage(puzzle, colors);
    update(job);
    await browser.setParams(); // the view the address names
    if (!destroyed) startWatch();
  })();

  return {
    ready,
    setParams: (p) => ready.then(() => browser?.setParams(p)),
    destroy() {
      destroyed = true;
      watcher?.close();
      browser?.destroy();
    },
  };
}

/** Jobs / Job {id}, its batch and the designer link. */
function crumbs(job) {
  return h('p', { class: 'crumbs' }, h('a', { href: '#/', text: 'Jobs' }), ` / Job ${job.id}`,
    job.batch ? [' · ', h('a', { href: `#/batches/${job.batch}`, 'data-testid': 'job-batch', text: `batch ${job.batch}` })] : null,
    ' · ', h('a', { href: `#/designer/job/${job.id}`, 'data-testid': 'open-designer', text: 'Open in designer' }),
    // a completed record job's record, which `tessera verify` re-runs (docs/records.md)
    job.options?.record > 0 && job.state === 'completed'
      ? [' · ', h('a', { href: `/api/v1/jobs/${job.id}/record`, download: `job-${job.id}.record.json`,
        'data-testid': 'job-record', text: 'Record (for tessera verify)' })]
      : null);
}

// ---- the header ------------------------------------------------------------

/**
 * The header card: name and state, the note of a search its limit stopped,
 * progress and the action buttons (onAction(action) on a click), the
 * figures, and the options and engine configuration in a fold.  update(j,
 * busy) shows job j (busy: an action is under way, its buttons wait).
 */
function jobHeader(job, onAction) {
  const title = h('h1', { id: 'job-title' });
  const badge = stateBadge('queued');
  const limitNote = h('p', { class: 'limit-note', 'data-testid': 'job-limit-note', hidden: true });
  const progress = progressBar(job, `Progress of job ${job.id}`);
  const actions = actionButtons(job, onAction, null, ['pause', 'resume', 'cancel', 'delete', 'rerun']);
  const jobError = h('div', { class: 'alert', role: 'alert', hidden: true });
  const figs = figures();
  const configEl = h('code');
  const optionsEl = h('code');
  const createdEl = h('span');
  const element = h('section', { class: 'card job-header', 'data-testid': 'job-header', 'aria-labelledby': 'job-title' },
    h('div', { class: 'job-title-row' }, title, badge),
    limitNote,
    h('div', { class: 'job-progress-row' }, progress, actions),
    jobError,
    figs.element,
    h('details', { class: 'config' }, h('summary', { text: 'Created, options and engine configuration' }),
      h('p', {}, 'Created: ', createdEl),
      h('p', {}, 'Options: ', optionsEl), h('p', {}, 'Engine: ', configEl)));

  function update(j, busy) {
    title.textContent = j.name || `Job ${j.id}`;
    document.title = `${j.name || 'Job'} (${j.id}) · Tessera`;
    updateStateBadge(badge, j.state);
    limitNote.textContent = limitText(j);
    limitNote.hidden = !j.limit_reached;
    updateProgress(progress, j);
    updateActionButtons(actions, j, busy);
    figs.update(j);
    createdEl.textContent = fmtTime(j.created);
    optionsEl.textContent = JSON.stringify(j.options || {});
    configEl.textContent = j.config || 'not prepared yet';
    jobError.textContent = j.error ? `Error: ${j.error}` : '';
    jobError.hidden = !j.error;
  }

  return { element, actions, update };
}

/** The header's figures: solutions (of those expected), nodes, rate,
 *  elapsed, ETA, threads, the puzzle's size. */
function figures() {
  const solutionsEl = h('span', { 'data-testid': 'job-solutions' });
  const expectedEl = h('span', { class: 'muted' });
  const nums = {};
  const stat = (key, label, valueEl) => {
    nums[key] = valueEl || h('span');
    return h('div', {}, h('dt', { text: label }), h('dd', {}, nums[key]));
  };
  const element = h('dl', { class: 'stats-grid' },
    stat('solutions', 'Solutions', h('span', {}, solutionsEl, ' ', expectedEl)),
    stat('nodes', 'Nodes'), stat('rate', 'Rate'), stat('elapsed', 'Elapsed'),
    stat('eta', 'ETA'), stat('threads', 'Threads'), stat('size', 'Puzzle'));

  function update(j) {
    solutionsEl.textContent = fmtInt(j.solutions);
    const unique = j.options?.unique || 'rotations';
    const exp = j.puzzle?.expected?.[unique];
    expectedEl.textContent = exp != null ? `of ${fmtInt(exp)} expected (${unique})` : `(${unique})`;
    nums.nodes.textContent = fmtInt(j.progress?.nodes);
    const running = j.state === 'running';
    // a finished job has no rate of its own: its average over the search
    const secs = j.progress?.seconds;
    nums.rate.textContent = running ? fmtRate(j.progress?.rate) : secs > 0 ? `${fmtRate(j.progress.nodes / secs)} avg` : '—';
    nums.elapsed.textContent = j.progress?.elapsed ?? '—';
    nums.eta.textContent = isFinal(j) ? '—' : (j.progress?.eta?.text ?? 'not known yet');
    // threads are lent to a job while it runs; otherwise say what it may use
    const cap = j.options?.threads;
    nums.threads.textContent = running ? String(j.threads) : cap > 0 ? `up to ${cap}` : '—';
    nums.threads.title = running ? 'worker threads searching it now' : 'threads are lent to a job only while it runs';
    const p = j.puzzle || {};
    nums.size.textContent = `${p.dimensions || '?'}D, ${fmtInt(p.cells)} cells, ${fmtInt(p.pieces)} pieces`;
  }

  return { element, update };
}

// ---- statistics ------------------------------------------------------------

/** The statistics fold, open on a wide screen where there is room: the
 *  chart of each search level and the worker table.  update(stats) takes
 *  the job's `stats` (none: nothing changes). */
function statistics() {
  const logBox = h('input', { type: 'checkbox', id: 'log-scale', checked: true });
  const chartWrap = h('div', { class: 'chart-wrap' });
  const workers = workerTable();
  const narrow = window.matchMedia('(max-width: 760px)').matches;
  const element = h('details', { class: 'card stats-card', 'data-testid': 'stats-section', open: !narrow },
    h('summary', {}, h('h2', { id: 'stats-heading', text: 'Statistics and workers' })),
    h('div', { class: 'section-head' },
      h('p', { class: 'muted small', text: 'Placement attempts and successful fits at each search level, by the number of pieces still to place.' }),
      h('label', { class: 'check' }, logBox, ' Log scale')),
    chartWrap,
    workers.table, workers.empty);
  let lastLevels = '';
  let lastStats;

  function update(stats) {
    lastStats = stats;
    if (!stats) return;
    const levels = stats.levels || [];
    const key = JSON.stringify(levels) + logBox.checked;
    if (key !== lastLevels) {
      lastLevels = key;
      clear(chartWrap).append(drawLevelChart(levels, { log: logBox.checked, width: chartWrap.clientWidth }));
    }
    workers.update(stats.workers || []);
  }
  logBox.addEventListener('change', () => { lastLevels = ''; update(lastStats); });

  return { element, update };
}

/** The worker threads searching the job now, one row each, or a line
 *  that says there are none. */
function workerTable() {
  const body = h('tbody');
  const empty = h('p', { class: 'muted', text: 'No worker threads are searching this job now.' });
  const table = h('div', { class: 'table-scroll' }, h('table', { class: 'workers', 'data-testid': 'workers' },
    h('caption', { text: 'Worker threads' }),
    h('thead', {}, h('tr', {}, ['Worker', 'State', 'Depth', 'Nodes', 'Tasks'].map((t) => h('th', { scope: 'col', class: t === 'State' ? null : 'num', text: t })))),
    body));

  function update(workers) {
    clear(body);
    for (const w of workers) {
      body.append(h('tr', {},
        h('td', { class: 'num', text: String(w.id) }),
        h('td', {}, h('span', { class: `wstate wstate-${w.state}`, text: w.state })),
        h('td', { class: 'num', text: w.state === 'searching' ? String(w.depth) : '—' }),
        h('td', { class: 'num', text: fmtInt(w.nodes) }),
        h('td', { class: 'num', text: fmtInt(w.tasks) })));
    }
    empty.hidden = workers.length > 0;
  }

  return { table, empty, update };
}
