// pages/job.js — one job (#/jobs/{id}): live header with actions, search
// statistics (bar chart per level, worker table) and the solution browser
// with 2D/layer/3D views and exports.

import { h, clear, downloadBlob, slug } from '../dom.js';
import { api, isFinal } from '../api.js';
import { fmtInt, fmtRate, fmtDuration, fmtTime } from '../format.js';
import { colorMap } from '../colors.js';
import { watchJob } from '../live.js';
import { drawTiling, drawLayers, svgToString, svgToPng } from '../render2d.js';
import { Viewer3D } from '../render3d.js';
import { drawLevelChart } from '../chart.js';
import { legend } from '../preview.js';
import {
  stateBadge, updateStateBadge, progressBar, updateProgress,
  actionButtons, updateActionButtons, runAction,
} from '../jobui.js';

const PAGE = 50;

export function mount(root, { id }) {
  document.title = `Job ${id} · Tessera`;
  let destroyed = false;
  let watcher = null;
  let job = null;
  let puzzle = null;
  let cm = colorMap([]);
  let viewer = null;
  let busy = false;
  const sol = { cursors: [0], page: 0, items: [], idx: 0, loading: false, pending: null };

  const container = h('div', { class: 'container' });
  const errorBox = h('div', { class: 'alert', role: 'alert', 'data-testid': 'page-error', hidden: true });
  container.append(errorBox);
  root.append(container);
  const showError = (msg) => { errorBox.textContent = msg || ''; errorBox.hidden = !msg; };

  // ---- header ------------------------------------------------------------
  const title = h('h1', {});
  const badge = stateBadge('queued');
  const solutionsEl = h('span', { 'data-testid': 'job-solutions' });
  const expectedEl = h('span', { class: 'muted' });
  const nums = {};
  const stat = (key, label, valueEl) => {
    nums[key] = valueEl || h('span');
    return h('div', {}, h('dt', { text: label }), h('dd', {}, nums[key]));
  };
  let progress, actions;
  const jobError = h('div', { class: 'alert', role: 'alert', hidden: true });
  const configEl = h('code');
  const optionsEl = h('code');

  // ---- statistics --------------------------------------------------------
  const logBox = h('input', { type: 'checkbox', id: 'log-scale', checked: true });
  const chartWrap = h('div', { class: 'chart-wrap' });
  const workersBody = h('tbody');
  const workersEmpty = h('p', { class: 'muted', text: 'No worker threads are searching this job now.' });
  const workersTable = h('table', { class: 'workers', 'data-testid': 'workers' },
    h('caption', { text: 'Worker threads' }),
    h('thead', {}, h('tr', {}, ['Worker', 'State', 'Depth', 'Nodes', 'Tasks'].map((t) => h('th', { scope: 'col', class: t === 'State' ? null : 'num', text: t })))),
    workersBody);
  let lastLevels = '';

  // ---- solutions ---------------------------------------------------------
  const indexEl = h('span', { 'data-testid': 'solution-index', text: '0 / 0' });
  const prevBtn = h('button', { type: 'button', class: 'btn', 'data-testid': 'prev-solution', 'aria-label': 'Previous solution' }, '‹ Prev');
  const nextBtn = h('button', { type: 'button', class: 'btn', 'data-testid': 'next-solution', 'aria-label': 'Next solution' }, 'Next ›');
  const view = h('div', { class: 'solution-view', 'data-testid': 'solution-view', 'aria-live': 'polite' });
  const exportsRow = h('div', { class: 'button-row' });
  const legendWrap = h('div');
  let dims = 2;
  let svgHolder, layersHolder, canvas, explode;

  function buildPage() {
    dims = job.puzzle?.dimensions === 3 ? 3 : 2;
    progress = progressBar(job, `Progress of job ${job.id}`);
    actions = actionButtons(job, onAction);
    container.append(
      h('p', { class: 'crumbs' }, h('a', { href: '#/', text: 'Jobs' }), ` / Job ${job.id}`),
      h('section', { class: 'card job-header', 'data-testid': 'job-header', 'aria-labelledby': 'job-title' },
        h('div', { class: 'job-title-row' }, title, badge),
        h('div', { class: 'job-progress-row' }, progress, actions),
        jobError,
        h('dl', { class: 'stats-grid' },
          stat('solutions', 'Solutions', h('span', {}, solutionsEl, ' ', expectedEl)),
          stat('nodes', 'Nodes'), stat('rate', 'Rate'), stat('elapsed', 'Elapsed'),
          stat('eta', 'ETA'), stat('threads', 'Threads'), stat('size', 'Puzzle'), stat('created', 'Created')),
        h('details', { class: 'config' }, h('summary', { text: 'Options and engine configuration' }),
          h('p', {}, 'Options: ', optionsEl), h('p', {}, 'Engine: ', configEl))),
      h('section', { class: 'card', 'aria-labelledby': 'stats-heading' },
        h('div', { class: 'section-head' }, h('h2', { id: 'stats-heading', text: 'Statistics' }),
          h('label', { class: 'check' }, logBox, ' Log scale')),
        h('p', { class: 'muted small', text: 'Placement attempts and successful fits at each search level, by the number of pieces still to place.' }),
        chartWrap,
        h('div', { class: 'table-scroll' }, workersTable), workersEmpty),
      buildSolutions());
    title.id = 'job-title';
  }

  function buildSolutions() {
    const sec = h('section', { class: 'card', 'aria-labelledby': 'solutions-heading' },
      h('div', { class: 'section-head' }, h('h2', { id: 'solutions-heading', text: 'Solutions' }),
        h('div', { class: 'pager' }, prevBtn, h('span', { class: 'pager-label' }, 'Solution ', indexEl), nextBtn)),
      legendWrap, view, exportsRow);
    if (dims === 2) {
      svgHolder = h('div', { class: 'svg-holder' });
      view.append(svgHolder);
      exportsRow.append(
        h('button', { type: 'button', class: 'btn', 'data-testid': 'export-svg', text: 'Export SVG', onclick: exportSvg }),
        h('button', { type: 'button', class: 'btn', 'data-testid': 'export-png', text: 'Export PNG', onclick: exportPng }));
    } else {
      layersHolder = h('div', { class: 'layers-holder' });
      canvas = h('canvas', {
        class: 'view-3d', 'data-testid': 'solution-3d', tabindex: 0, role: 'img',
        'aria-label': '3D view of the solution; drag or use the arrow keys to rotate',
      });
      explode = h('input', { type: 'range', id: 'explode', 'data-testid': 'explode', min: 0, max: 100, value: 0, step: 1 });
      explode.addEventListener('input', () => viewer?.setExplode(Number(explode.value) / 100));
      view.classList.add('is-3d');
      view.append(
        h('div', { class: 'view-3d-wrap' }, canvas,
          h('div', { class: 'field-inline' }, h('label', { for: 'explode', text: 'Explode' }), explode),
          h('p', { class: 'muted small', text: 'Drag to rotate (or focus the view and use the arrow keys).' })),
        h('div', {}, h('h3', { text: 'Layers' }), layersHolder));
      exportsRow.append(h('button', { type: 'button', class: 'btn', 'data-testid': 'export-3d', text: 'Export image', onclick: export3d }));
    }
    // The daemon's export streams every stored solution, however many: a
    // link, so the browser saves it to disk as it comes (no page holds
    // millions of solutions).  A link sends no token: on a daemon that
    // wants one for reading, use `tessera solutions --all` or curl.
    exportsRow.append(h('a', {
      class: 'btn', 'data-testid': 'download-jsonl', text: 'Download all (JSON lines)',
      href: `/api/v1/jobs/${job.id}/solutions?format=jsonl&all=1`,
      download: `${slug(job.name)}-job${job.id}-solutions.jsonl`,
    }));
    prevBtn.addEventListener('click', () => step(-1));
    nextBtn.addEventListener('click', () => step(1));
    sec.addEventListener('keydown', (e) => {
      const tag = e.target.tagName;
      if (tag === 'INPUT' || tag === 'CANVAS' || tag === 'SELECT') return;
      if (e.key === 'ArrowLeft') { e.preventDefault(); step(-1); } else if (e.key === 'ArrowRight') { e.preventDefault(); step(1); }
    });
    return sec;
  }

  // ---- updates -----------------------------------------------------------
  function update(j) {
    job = j;
    title.textContent = j.name || `Job ${j.id}`;
    document.title = `${j.name || 'Job'} (${j.id}) · Tessera`;
    updateStateBadge(badge, j.state);
    updateProgress(progress, j);
    updateActionButtons(actions, j, busy);
    solutionsEl.textContent = fmtInt(j.solutions);
    const unique = j.options?.unique || 'rotations';
    const exp = j.puzzle?.expected?.[unique];
    expectedEl.textContent = exp != null ? `of ${fmtInt(exp)} expected (${unique})` : `(${unique})`;
    nums.nodes.textContent = fmtInt(j.progress?.nodes);
    nums.rate.textContent = j.state === 'running' ? fmtRate(j.progress?.rate) : '—';
    nums.elapsed.textContent = fmtDuration(j.progress?.seconds);
    nums.eta.textContent = isFinal(j.state) ? '—' : (j.progress?.eta?.text ?? '—');
    nums.threads.textContent = String(j.threads ?? 0);
    const p = j.puzzle || {};
    nums.size.textContent = `${p.dimensions || '?'}D, ${fmtInt(p.cells)} cells, ${fmtInt(p.pieces)} pieces`;
    nums.created.textContent = fmtTime(j.created);
    optionsEl.textContent = JSON.stringify(j.options || {});
    configEl.textContent = j.config || 'not prepared yet';
    jobError.textContent = j.error ? `Error: ${j.error}` : '';
    jobError.hidden = !j.error;
    updateStats(j.stats);
    updatePager();
    if (!sol.items.length && j.solutions > 0 && !sol.loading) sol.pending = loadPage(0, 0);
  }

  function updateStats(stats) {
    if (!stats) return;
    const levels = stats.levels || [];
    const key = JSON.stringify(levels) + logBox.checked;
    if (key !== lastLevels) {
      lastLevels = key;
      clear(chartWrap).append(drawLevelChart(levels, { log: logBox.checked, width: chartWrap.clientWidth }));
    }
    const workers = stats.workers || [];
    clear(workersBody);
    for (const w of workers) {
      workersBody.append(h('tr', {},
        h('td', { class: 'num', text: String(w.id) }),
        h('td', {}, h('span', { class: `wstate wstate-${w.state}`, text: w.state })),
        h('td', { class: 'num', text: w.state === 'searching' ? String(w.depth) : '—' }),
        h('td', { class: 'num', text: fmtInt(w.nodes) }),
        h('td', { class: 'num', text: fmtInt(w.tasks) })));
    }
    workersEmpty.hidden = workers.length > 0;
  }
  logBox.addEventListener('change', () => { lastLevels = ''; updateStats(job?.stats); });

  async function onAction(action) {
    busy = true;
    updateActionButtons(actions, job, true);
    showError('');
    try {
      const j = await runAction(job.id, action);
      if (destroyed) return;
      busy = false;
      if (j == null) { location.hash = '#/'; return; }
      // Actions answer the job without stats: keep the last ones.
      update({ ...j, stats: j.stats || job.stats });
      if (!isFinal(j.state) && !watcher) startWatch();
    } catch (e) {
      busy = false;
      updateActionButtons(actions, job);
      showError(e.message);
    }
  }

  function startWatch() {
    watcher?.close();
    watcher = null;
    if (isFinal(job.state)) return;
    watcher = watchJob(job.id, (j) => {
      update(j);
      if (isFinal(j.state)) { watcher?.close(); watcher = null; }
    }, () => { showError(`Job ${id} no longer exists.`); watcher = null; });
  }

  // ---- solution browsing -------------------------------------------------
  const current = () => sol.items[sol.idx];
  const ordinal = () => (sol.items.length ? sol.page * PAGE + sol.idx + 1 : 0);

  function updatePager() {
    const k = ordinal();
    const n = Math.max(job?.solutions ?? 0, k);
    indexEl.textContent = `${k} / ${n}`;
    prevBtn.disabled = sol.loading || k <= 1;
    nextBtn.disabled = sol.loading || k >= n;
    for (const b of exportsRow.querySelectorAll('[data-testid^=export]')) b.disabled = !current();
    const dl = exportsRow.querySelector('[data-testid=download-jsonl]');
    if (dl) dl.hidden = (job?.stored ?? 0) === 0;
  }

  /** Loads page p and shows item idx (-1 = last). Returns false when empty. */
  async function loadPage(p, idx) {
    sol.loading = true;
    updatePager();
    try {
      const res = await api.solutions(job.id, sol.cursors[p], PAGE);
      if (destroyed) return false;
      if (!res.solutions.length) return false;
      sol.page = p;
      sol.items = res.solutions;
      sol.cursors[p + 1] = res.solutions[res.solutions.length - 1].seq;
      sol.idx = idx < 0 ? sol.items.length - 1 : Math.min(idx, sol.items.length - 1);
      showSolution();
      return true;
    } catch (e) {
      if (!destroyed) showError(`Could not load solutions: ${e.message}`);
      return false;
    } finally {
      sol.loading = false;
      if (!destroyed) updatePager();
    }
  }

  async function step(d) {
    if (sol.loading || !sol.items.length) return;
    if (d > 0) {
      if (sol.idx + 1 < sol.items.length) { sol.idx++; showSolution(); } else if (sol.items.length >= PAGE) await loadPage(sol.page + 1, 0);
      else {
        // A partial page of a running job: fetch it again to see new solutions.
        const want = sol.idx + 1;
        await loadPage(sol.page, want);
      }
    } else if (sol.idx > 0) { sol.idx--; showSolution(); } else if (sol.page > 0) await loadPage(sol.page - 1, -1);
    updatePager();
  }

  function solutionPieces(s) {
    return s.pieces.map((p) => ({ name: p.name, color: cm.color(p.name), cells: p.cells }));
  }

  function showSolution() {
    const s = current();
    if (!s) return;
    const pieces = solutionPieces(s);
    const label = `Solution ${ordinal()} (seq ${s.seq})`;
    if (dims === 2) {
      const xs = s.pieces.flatMap((p) => p.cells.map((c) => c[0]));
      const cols = Math.max(...xs) - Math.min(...xs) + 1;
      const svg = drawTiling(pieces, { cell: Math.max(20, Math.min(56, Math.floor(720 / cols))), label });
      svg.setAttribute('data-testid', 'solution-svg');
      clear(svgHolder).append(svg);
    } else {
      clear(layersHolder).append(drawLayers(pieces, { cell: 30, testid: 'solution-layers' }));
      if (!viewer) {
        viewer = new Viewer3D(canvas, pieces);
        viewer.setExplode(Number(explode.value) / 100);
      } else viewer.setPieces(pieces);
      canvas.setAttribute('aria-label', `3D view of ${label.toLowerCase()}; drag or use the arrow keys to rotate`);
    }
    updatePager();
  }

  // ---- exports -----------------------------------------------------------
  const baseName = () => `${slug(job.name)}-job${job.id}-solution${ordinal()}`;

  function exportSvg() {
    const svg = svgHolder.querySelector('svg');
    if (!svg) return;
    downloadBlob(new Blob([svgToString(svg)], { type: 'image/svg+xml' }), `${baseName()}.svg`);
  }

  async function exportPng() {
    const svg = svgHolder.querySelector('svg');
    if (!svg) return;
    try { downloadBlob(await svgToPng(svg, 2), `${baseName()}.png`); } catch (e) { showError(e.message); }
  }

  async function export3d() {
    if (!viewer) return;
    try { downloadBlob(await viewer.toBlob(), `${baseName()}-3d.png`); } catch (e) { showError(e.message); }
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
    try {
      puzzle = await api.puzzle(id);
      cm = colorMap(puzzle.pieces);
    } catch (e) {
      if (destroyed) return;
      showError(`Could not load the puzzle: ${e.message}`);
    }
    buildPage();
    if (puzzle) legendWrap.append(legend(puzzle.pieces));
    update(job);
    if (sol.pending) await sol.pending; // first page, started by update()
    if (!destroyed) startWatch();
  })();

  return {
    ready,
    destroy() {
      destroyed = true;
      watcher?.close();
      viewer?.destroy();
    },
  };
}
