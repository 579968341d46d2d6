// pages/job.js — one job (#/jobs/{id}): a live header with its actions
// (cancel and delete ask first; a finished job can run again), then the
// solutions, first because they are what people come for, then the search
// statistics (bar chart per level, worker table) in a fold.
//
// The solutions card has three views, each with an address of its own:
//  - one solution (#/jobs/{id}/solutions/{n}, n counted from 1 as shown):
//    Prev/Next (the address follows, so it can be shared), a field to jump
//    to solution n; 2D as a drawing the card's width, 3D as a view to turn,
//    with piece names on hover or tap, pieces hidden or isolated from the
//    legend, the assembly one piece at a time, an exploded view, and the
//    layers; SVG/PNG export;
//  - a gallery (#/jobs/{id}/gallery/{page}): small drawings a page at a
//    time, fetched page by page (a job of millions costs one page);
//  - a comparison (#/jobs/{id}/compare/{a}/{b}): two solutions side by side,
//    the pieces placed alike faded so that the ones that differ stand out.
// Solution n is the one with seq n (the daemon numbers a job's solutions
// 1, 2, ... as stored), read from the page of PAGE that holds it.

import { h, clear, downloadBlob, slug } from '../dom.js';
import { api, isFinal } from '../api.js';
import { fmtInt, fmtRate, fmtDuration, fmtTime } from '../format.js';
import { colorMap } from '../colors.js';
import { watchJob } from '../live.js';
import { drawTiling, drawLayers, svgToString, svgToPng, elide } from '../render2d.js';
import { Viewer3D } from '../render3d.js';
import { drawLevelChart } from '../chart.js';
import { legend } from '../preview.js';
import {
  stateBadge, updateStateBadge, progressBar, updateProgress, limitText,
  actionButtons, updateActionButtons, runAction, confirmAction,
} from '../jobui.js';

const PAGE = 50;          // solutions per request of the single view
const GALLERY_PAGE = 24;  // thumbnails per gallery page

export function mount(root, params) {
  const id = params.id;
  document.title = `Job ${id} · Tessera`;
  let destroyed = false;
  let watcher = null;
  let job = null;
  let puzzle = null;
  let cm = colorMap([]);
  let viewer = null;
  let busy = false;
  let dims = 2;
  const pages = new Map(); // page index → full pages of solutions (partial ones are fetched again)
  const want = { view: params.view || 'solution', n: params.n || 1, page: params.page || 1, a: params.a || 1, b: params.b || 2 };
  let shown = null;       // the solution in the single view
  const hidden = new Set(); // 3D: piece names not drawn
  let step = null;        // 3D: pieces placed in the assembly stepper, null: all
  const galleryViewers = [];

  const container = h('div', { class: 'container job-page' });
  const errorBox = h('div', { class: 'alert', role: 'alert', 'data-testid': 'page-error', hidden: true });
  container.append(errorBox);
  root.append(container);
  const showError = (msg) => { errorBox.textContent = msg || ''; errorBox.hidden = !msg; };

  // ---- header ------------------------------------------------------------
  const title = h('h1', { id: 'job-title' });
  const badge = stateBadge('queued');
  const limitNote = h('p', { class: 'limit-note', 'data-testid': 'job-limit-note', hidden: true });
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
  const tabs = {};
  const panels = {};
  const indexEl = h('span', { 'data-testid': 'solution-index', text: '0 / 0' });
  const prevBtn = h('button', { type: 'button', class: 'btn', 'data-testid': 'prev-solution', 'aria-label': 'Previous solution', onclick: () => stepBy(-1) }, '‹ Prev');
  const nextBtn = h('button', { type: 'button', class: 'btn', 'data-testid': 'next-solution', 'aria-label': 'Next solution', onclick: () => stepBy(1) }, 'Next ›');
  const jumpInput = h('input', { type: 'number', id: 'jump-to', 'data-testid': 'jump-input', min: 1, step: 1, inputmode: 'numeric', class: 'jump-input' });
  const jumpForm = h('form', { class: 'jump', 'data-testid': 'jump-form', novalidate: true },
    h('label', { for: 'jump-to', text: 'Go to' }), jumpInput,
    h('button', { type: 'submit', class: 'btn', 'data-testid': 'jump-go', text: 'Go' }));
  const note = h('p', { class: 'muted view-note', 'data-testid': 'solution-note', hidden: true });
  const view = h('div', { class: 'solution-view', 'data-testid': 'solution-view', 'aria-live': 'polite' });
  const exportsRow = h('div', { class: 'button-row' });
  const legendWrap = h('div', { class: 'legend-wrap' });
  let svgHolder, layersHolder, canvas, explode, tip, stepLabel, stepPrev, stepNext, stepAll;

  const galleryGrid = h('ol', { class: 'gallery', 'data-testid': 'gallery' });
  const galleryRange = h('span', { 'data-testid': 'gallery-range', class: 'pager-label' });
  const galleryPrev = h('button', { type: 'button', class: 'btn', 'data-testid': 'gallery-prev', text: '‹ Previous page', onclick: () => go({ view: 'gallery', page: want.page - 1 }) });
  const galleryNext = h('button', { type: 'button', class: 'btn', 'data-testid': 'gallery-next', text: 'Next page ›', onclick: () => go({ view: 'gallery', page: want.page + 1 }) });

  const compareA = h('input', { type: 'number', id: 'compare-a', 'data-testid': 'compare-a', min: 1, step: 1, inputmode: 'numeric', class: 'jump-input' });
  const compareB = h('input', { type: 'number', id: 'compare-b', 'data-testid': 'compare-b', min: 1, step: 1, inputmode: 'numeric', class: 'jump-input' });
  const compareSummary = h('p', { 'data-testid': 'compare-summary', class: 'compare-summary' });
  const compareView = h('div', { class: 'compare-view', 'data-testid': 'compare-view' });

  function buildPage() {
    dims = job.puzzle?.dimensions === 3 ? 3 : 2;
    progress = progressBar(job, `Progress of job ${job.id}`);
    actions = actionButtons(job, onAction, null, ['pause', 'resume', 'cancel', 'delete', 'rerun']);
    const narrow = window.matchMedia('(max-width: 760px)').matches;
    container.append(
      h('p', { class: 'crumbs' }, h('a', { href: '#/', text: 'Jobs' }), ` / Job ${job.id}`,
        job.batch ? [' · ', h('a', { href: `#/batches/${job.batch}`, 'data-testid': 'job-batch', text: `batch ${job.batch}` })] : null,
        ' · ', h('a', { href: `#/designer/job/${job.id}`, 'data-testid': 'open-designer', text: 'Open in designer' })),
      h('section', { class: 'card job-header', 'data-testid': 'job-header', 'aria-labelledby': 'job-title' },
        h('div', { class: 'job-title-row' }, title, badge),
        limitNote,
        h('div', { class: 'job-progress-row' }, progress, actions),
        jobError,
        h('dl', { class: 'stats-grid' },
          stat('solutions', 'Solutions', h('span', {}, solutionsEl, ' ', expectedEl)),
          stat('nodes', 'Nodes'), stat('rate', 'Rate'), stat('elapsed', 'Elapsed'),
          stat('eta', 'ETA'), stat('threads', 'Threads'), stat('size', 'Puzzle')),
        h('details', { class: 'config' }, h('summary', { text: 'Created, options and engine configuration' }),
          h('p', {}, 'Created: ', nums.created = h('span')),
          h('p', {}, 'Options: ', optionsEl), h('p', {}, 'Engine: ', configEl))),
      buildSolutions(),
      // the statistics fold; open on a wide screen, where there is room
      h('details', { class: 'card stats-card', 'data-testid': 'stats-section', open: !narrow },
        h('summary', {}, h('h2', { id: 'stats-heading', text: 'Statistics and workers' })),
        h('div', { class: 'section-head' },
          h('p', { class: 'muted small', text: 'Placement attempts and successful fits at each search level, by the number of pieces still to place.' }),
          h('label', { class: 'check' }, logBox, ' Log scale')),
        chartWrap,
        h('div', { class: 'table-scroll' }, workersTable), workersEmpty));
  }

  function buildSolutions() {
    for (const [v, label] of [['solution', 'Solution'], ['gallery', 'Gallery'], ['compare', 'Compare']]) {
      tabs[v] = h('button', {
        type: 'button', class: 'tab', 'data-testid': `tab-${v}`, 'aria-pressed': 'false', text: label,
        onclick: () => go(v === 'solution' ? { view: v, n: shown?.seq || want.n } : v === 'gallery'
          ? { view: v, page: Math.floor(((shown?.seq || 1) - 1) / GALLERY_PAGE) + 1 }
          : { view: v, a: shown?.seq || 1, b: (shown?.seq || 1) + 1 }),
      });
    }
    panels.solution = h('div', { class: 'panel', 'data-testid': 'panel-solution' },
      h('div', { class: 'pager-row' },
        h('div', { class: 'pager' }, prevBtn, h('span', { class: 'pager-label' }, 'Solution ', indexEl), nextBtn),
        jumpForm),
      note, legendWrap, view, exportsRow);
    panels.gallery = h('div', { class: 'panel', 'data-testid': 'panel-gallery', hidden: true },
      h('div', { class: 'pager gallery-pager' }, galleryPrev, galleryRange, galleryNext),
      h('p', { class: 'muted small', text: 'Click a drawing to open that solution.' }),
      galleryGrid);
    panels.compare = h('div', { class: 'panel', 'data-testid': 'panel-compare', hidden: true },
      h('form', { class: 'compare-form', 'data-testid': 'compare-form', novalidate: true, onsubmit: (e) => { e.preventDefault(); go({ view: 'compare', a: Number(compareA.value), b: Number(compareB.value) }); } },
        h('label', { for: 'compare-a', text: 'Solution' }), compareA,
        h('label', { for: 'compare-b', text: 'with' }), compareB,
        h('button', { type: 'submit', class: 'btn', 'data-testid': 'compare-go', text: 'Compare' })),
      compareSummary, compareView);
    const sec = h('section', { class: 'card solutions-card', 'data-testid': 'solutions-card', 'aria-labelledby': 'solutions-heading' },
      h('div', { class: 'section-head' }, h('h2', { id: 'solutions-heading', text: 'Solutions' }),
        h('div', { class: 'tabs', role: 'group', 'aria-label': 'Solution views' }, tabs.solution, tabs.gallery, tabs.compare)),
      panels.solution, panels.gallery, panels.compare);
    if (dims === 2) {
      svgHolder = h('div', { class: 'svg-holder' });
      view.append(svgHolder);
      exportsRow.append(
        h('button', { type: 'button', class: 'btn', 'data-testid': 'export-svg', text: 'Export SVG', onclick: exportSvg }),
        h('button', { type: 'button', class: 'btn', 'data-testid': 'export-png', text: 'Export PNG', onclick: exportPng }));
    } else {
      build3d();
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
    jumpForm.addEventListener('submit', (e) => {
      e.preventDefault();
      const n = Number(jumpInput.value);
      if (Number.isInteger(n) && n >= 1) go({ view: 'solution', n });
    });
    panels.solution.addEventListener('keydown', (e) => {
      const tag = e.target.tagName;
      if (tag === 'INPUT' || tag === 'CANVAS' || tag === 'SELECT') return;
      if (e.key === 'ArrowLeft') { e.preventDefault(); stepBy(-1); } else if (e.key === 'ArrowRight') { e.preventDefault(); stepBy(1); }
    });
    return sec;
  }

  function build3d() {
    layersHolder = h('div', { class: 'layers-holder' });
    canvas = h('canvas', {
      class: 'view-3d', 'data-testid': 'solution-3d', tabindex: 0, role: 'img',
      'aria-label': '3D view of the solution; drag or use the arrow keys to rotate',
    });
    tip = h('div', { class: 'piece-tip', 'data-testid': 'piece-tip', role: 'status', hidden: true });
    explode = h('input', { type: 'range', id: 'explode', 'data-testid': 'explode', min: 0, max: 100, value: 0, step: 1 });
    explode.addEventListener('input', () => viewer?.setExplode(Number(explode.value) / 100));
    stepPrev = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'step-prev', 'aria-label': 'Take the last piece off', text: '‹', onclick: () => setStep((step ?? pieceCount()) - 1) });
    stepNext = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'step-next', 'aria-label': 'Place the next piece', text: '›', onclick: () => setStep(step == null ? 1 : step + 1) });
    stepAll = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'step-all', text: 'All', onclick: () => setStep(null) });
    const stepStart = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'step-start', text: 'Start', title: 'The first piece alone', onclick: () => setStep(1) });
    stepLabel = h('span', { class: 'step-label', 'data-testid': 'step-label', 'aria-live': 'polite' });
    view.classList.add('is-3d');
    view.append(
      h('div', { class: 'view-3d-wrap' },
        h('div', { class: 'canvas-box' }, canvas, tip),
        h('div', { class: 'controls-3d' },
          h('div', { class: 'field-inline' }, h('label', { for: 'explode', text: 'Explode' }), explode),
          h('div', { class: 'field-inline stepper', role: 'group', 'aria-label': 'Assembly, one piece at a time' },
            h('span', { class: 'stepper-title', text: 'Assembly' }), stepStart, stepPrev, stepLabel, stepNext, stepAll)),
        h('p', { class: 'muted small', text: 'Drag to rotate (or focus the view and use the arrow keys); point at or tap a piece for its name. Click a piece in the legend to hide or show it, “only” to isolate it.' })),
      h('div', { class: 'layers-col' }, h('h3', { text: 'Layers' }), layersHolder));
  }

  // ---- updates -----------------------------------------------------------
  function update(j) {
    const before = job;
    job = j;
    title.textContent = j.name || `Job ${j.id}`;
    document.title = `${j.name || 'Job'} (${j.id}) · Tessera`;
    updateStateBadge(badge, j.state);
    limitNote.textContent = limitText(j);
    limitNote.hidden = !j.limit_reached;
    updateProgress(progress, j);
    updateActionButtons(actions, j, busy);
    solutionsEl.textContent = fmtInt(j.solutions);
    const unique = j.options?.unique || 'rotations';
    const exp = j.puzzle?.expected?.[unique];
    expectedEl.textContent = exp != null ? `of ${fmtInt(exp)} expected (${unique})` : `(${unique})`;
    nums.nodes.textContent = fmtInt(j.progress?.nodes);
    const running = j.state === 'running';
    // a finished job has no rate of its own: its average over the search
    const secs = j.progress?.seconds;
    nums.rate.textContent = running ? fmtRate(j.progress?.rate) : secs > 0 ? `${fmtRate(j.progress.nodes / secs)} avg` : '—';
    nums.elapsed.textContent = fmtDuration(j.progress?.seconds);
    nums.eta.textContent = isFinal(j) ? '—' : (j.progress?.eta?.text ?? 'not known yet');
    // threads are lent to a job while it runs; otherwise say what it may use
    const cap = j.options?.threads;
    nums.threads.textContent = running ? String(j.threads) : cap > 0 ? `up to ${cap}` : '—';
    nums.threads.title = running ? 'worker threads searching it now' : 'threads are lent to a job only while it runs';
    const p = j.puzzle || {};
    nums.size.textContent = `${p.dimensions || '?'}D, ${fmtInt(p.cells)} cells, ${fmtInt(p.pieces)} pieces`;
    nums.created.textContent = fmtTime(j.created);
    optionsEl.textContent = JSON.stringify(j.options || {});
    configEl.textContent = j.config || 'not prepared yet';
    jobError.textContent = j.error ? `Error: ${j.error}` : '';
    jobError.hidden = !j.error;
    updateStats(j.stats);
    updatePager();
    // new solutions: fill a view that was waiting for them
    if ((before?.stored ?? 0) !== j.stored) {
      if (want.view === 'solution' && !shown && j.stored >= want.n) showN(want.n);
      if (want.view === 'gallery' && galleryGrid.children.length < GALLERY_PAGE) showGallery(want.page);
    }
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
    if (!(await confirmAction(action, `job ${job.id} (${job.name || 'unnamed'})`)) || destroyed) return;
    busy = true;
    updateActionButtons(actions, job, true);
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
      updateActionButtons(actions, job);
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

  // ---- reading solutions -------------------------------------------------
  const total = () => job?.stored ?? 0;

  /** Solution n (seq n), from the page that holds it; null when there is none (yet). */
  async function solutionAt(n) {
    const p = Math.floor((n - 1) / PAGE);
    let items = pages.get(p);
    if (!items) {
      const res = await api.solutions(job.id, p * PAGE, PAGE);
      items = res.solutions;
      if (items.length === PAGE) pages.set(p, items); // a full page never changes
    }
    return items.find((s) => s.seq === n) || null;
  }

  function solutionPieces(s) {
    return s.pieces.map((p) => ({ name: p.name, color: cm.color(p.name), cells: p.cells, fixed: cm.fixed(p.name) }));
  }

  /** Changes the view and the address (replace: no new history entry). */
  function go(params, replace = false) {
    const hash = hashOf(params);
    if (location.hash !== hash) history[replace ? 'replaceState' : 'pushState'](null, '', hash);
    return setParams(params);
  }

  function hashOf(p) {
    const base = `#/jobs/${id}`;
    if (p.view === 'gallery') return `${base}/gallery/${p.page}`;
    if (p.view === 'compare') return `${base}/compare/${p.a}/${p.b}`;
    return `${base}/solutions/${p.n}`;
  }

  async function setParams(p) {
    Object.assign(want, p);
    for (const v of Object.keys(panels)) {
      panels[v].hidden = v !== want.view;
      tabs[v].setAttribute('aria-pressed', String(v === want.view));
      tabs[v].classList.toggle('is-active', v === want.view);
    }
    if (want.view === 'gallery') return showGallery(want.page);
    if (want.view === 'compare') return showCompare(want.a, want.b);
    return showN(want.n || 1);
  }

  // ---- the single view ---------------------------------------------------
  let showSeq = 0;
  async function showN(n) {
    const seq = ++showSeq;
    want.n = n;
    jumpInput.value = String(n);
    updatePager();
    if (total() === 0 && !isFinal(job)) { setNote('No solution found yet; the first one appears here as soon as it is found.'); return; }
    let s = null;
    try { s = n <= total() ? await solutionAt(n) : null; } catch (e) { if (!destroyed) showError(`Could not load solutions: ${e.message}`); return; }
    if (destroyed || seq !== showSeq) return;
    if (!s) {
      setNote(total() === 0 ? 'This job has no stored solutions.'
        : isFinal(job) ? `There is no solution ${fmtInt(n)}: this job has ${fmtInt(total())}.`
          : `Solution ${fmtInt(n)} is not found yet (${fmtInt(total())} so far); it appears here when it is.`);
      return;
    }
    setNote('');
    shown = s;
    draw(s);
    updatePager();
  }

  function setNote(text) {
    note.textContent = text;
    note.hidden = !text;
    view.hidden = !!text;
    legendWrap.hidden = !!text;
    exportsRow.hidden = !!text && !total();
    if (text) shown = null;
    updatePager();
  }

  function stepBy(d) {
    const n = (shown?.seq ?? want.n) + d;
    if (n < 1 || n > total()) return;
    go({ view: 'solution', n }, true);
  }

  function updatePager() {
    const k = shown?.seq ?? 0;
    const n = total();
    indexEl.textContent = `${fmtInt(k)} / ${fmtInt(n)}`;
    prevBtn.disabled = k <= 1;
    nextBtn.disabled = !k || k >= n;
    jumpInput.max = String(Math.max(1, n));
    for (const b of exportsRow.querySelectorAll('[data-testid^=export]')) b.disabled = !shown;
    const dl = exportsRow.querySelector('[data-testid=download-jsonl]');
    if (dl) dl.hidden = n === 0;
    galleryRange.textContent = galleryText();
    galleryPrev.disabled = want.page <= 1;
    galleryNext.disabled = want.page * GALLERY_PAGE >= n;
  }

  function draw(s) {
    const pieces = solutionPieces(s);
    const label = `Solution ${s.seq} of ${total()}`;
    if (dims === 2) {
      const xs = s.pieces.flatMap((p) => p.cells.map((c) => c[0]));
      const cols = Math.max(...xs) - Math.min(...xs) + 1;
      const svg = drawTiling(pieces, { cell: Math.max(24, Math.min(64, Math.floor(1100 / cols))), label });
      svg.setAttribute('data-testid', 'solution-svg');
      clear(svgHolder).append(svg);
    } else {
      if (!viewer) {
        viewer = new Viewer3D(canvas, pieces, { onPick: showTip });
        viewer.setExplode(Number(explode.value) / 100);
      } else viewer.setPieces(pieces);
      viewer.hidden = new Set(hidden);
      viewer.shown = step;
      viewer.draw();
      drawLayersNow();
      updateStepper();
      canvas.setAttribute('aria-label', `3D view of ${label.toLowerCase()}; drag or use the arrow keys to rotate`);
    }
  }

  // ---- 3D: names, hiding, the assembly -------------------------------------
  const pieceCount = () => viewer?.pieces.length ?? 0;

  function showTip(name, x, y) {
    tip.hidden = !name;
    if (!name) return;
    tip.textContent = cm.fixed(name) ? `${name} (fixed)` : name;
    tip.style.left = `${Math.round(x + 12)}px`;
    tip.style.top = `${Math.round(y + 12)}px`;
  }

  /** Layers drawn with what the 3D view shows (hidden pieces, the step). */
  function drawLayersNow() {
    if (!shown) return;
    const pieces = solutionPieces(shown).filter((p, i) => viewer.visible(i));
    const board = (puzzle?.board?.cells || []);
    const xs = board.length ? board.map((c) => c[0]) : shown.pieces.flatMap((p) => p.cells.map((c) => c[0]));
    const cols = Math.max(...xs) - Math.min(...xs) + 1;
    const width = layersHolder.clientWidth || 320;
    const perRow = width >= 4 * (cols * 30 + 16) ? 4 : 2;
    const cell = Math.max(18, Math.min(48, Math.floor((width - 16 * perRow) / (perRow * cols))));
    clear(layersHolder).append(drawLayers(pieces, { cell, testid: 'solution-layers', board }));
  }

  function setStep(k) {
    const n = pieceCount();
    step = k == null ? null : Math.max(0, Math.min(n, k));
    viewer?.setShown(step);
    drawLayersNow();
    updateStepper();
  }

  function updateStepper() {
    const n = pieceCount();
    if (!stepLabel) return;
    if (step == null) stepLabel.textContent = `all ${n} pieces`;
    else if (step === 0) stepLabel.textContent = `0 / ${n}: the empty box`;
    else {
      const name = viewer.pieces[viewer.order[step - 1]].name;
      stepLabel.textContent = `${step} / ${n}: ${name}`;
    }
    stepPrev.disabled = step === 0;
    stepNext.disabled = step == null || step >= n;
    stepAll.disabled = step == null;
  }

  function setHidden(names) {
    hidden.clear();
    for (const n of names) hidden.add(n);
    viewer?.setHidden(hidden);
    drawLayersNow();
    for (const b of legendWrap.querySelectorAll('[data-testid=legend-toggle]')) {
      b.setAttribute('aria-pressed', String(!hidden.has(b.dataset.piece)));
    }
  }

  /** The 3D legend: each piece a toggle (shown or hidden) and an "only" button. */
  function legend3d(puzzlePieces) {
    const names = puzzlePieces.map((p) => p.name);
    const list = h('ul', { class: 'legend legend-3d', 'aria-label': 'Pieces: click to hide or show' });
    for (const p of puzzlePieces) {
      const toggle = h('button', {
        type: 'button', class: 'legend-toggle', 'data-testid': 'legend-toggle', 'data-piece': p.name,
        'aria-pressed': 'true', title: `Hide or show ${p.name}`,
        onclick: () => setHidden(hidden.has(p.name) ? [...hidden].filter((x) => x !== p.name) : [...hidden, p.name]),
      }, h('span', { class: `swatch${p.fixed ? ' swatch-fixed' : ''}`, style: `background:${cm.color(p.name)}` }),
      h('span', { class: 'legend-name', text: elide(p.name, 12) }),
      p.count > 1 ? h('span', { class: 'muted', text: ` ×${p.count}` }) : null,
      p.fixed ? h('span', { class: 'muted', text: ' fixed' }) : null);
      const only = h('button', {
        type: 'button', class: 'legend-only', 'data-testid': 'legend-isolate', 'data-piece': p.name,
        'aria-label': `Show only ${p.name}`, text: 'only',
        onclick: () => setHidden(names.filter((x) => x !== p.name)),
      });
      list.append(h('li', {}, toggle, only));
    }
    list.append(h('li', {}, h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'legend-all', text: 'Show all', onclick: () => setHidden([]) })));
    return list;
  }

  // ---- the gallery ---------------------------------------------------------
  const galleryText = () => {
    const n = total();
    if (!n) return 'No solutions yet';
    const from = (want.page - 1) * GALLERY_PAGE + 1;
    return from > n ? `Page ${want.page}: past the last solution (${fmtInt(n)})`
      : `Solutions ${fmtInt(from)}–${fmtInt(Math.min(n, from + GALLERY_PAGE - 1))} of ${fmtInt(n)}`;
  };

  let gallerySeq = 0;
  async function showGallery(page) {
    const seq = ++gallerySeq;
    want.page = page;
    updatePager();
    let res;
    try { res = await api.solutions(job.id, (page - 1) * GALLERY_PAGE, GALLERY_PAGE); } catch (e) {
      if (!destroyed) showError(`Could not load solutions: ${e.message}`);
      return;
    }
    if (destroyed || seq !== gallerySeq) return;
    galleryViewers.splice(0).forEach((v) => v.destroy());
    clear(galleryGrid);
    const made = [];
    for (const s of res.solutions) {
      const pieces = solutionPieces(s);
      const item = h('button', {
        type: 'button', class: 'gallery-item', 'data-testid': 'gallery-item', 'data-n': String(s.seq),
        'aria-label': `Open solution ${s.seq}`, onclick: () => go({ view: 'solution', n: s.seq }),
      });
      if (dims === 2) item.append(drawTiling(pieces, { cell: 12, labels: false, pad: 1, label: `Solution ${s.seq}` }));
      else {
        const c = h('canvas', { class: 'thumb-3d', role: 'img', 'aria-label': `Solution ${s.seq} in 3D` });
        item.append(c);
        made.push(() => new Viewer3D(c, pieces, { height: 120, interactive: false }));
      }
      item.append(h('span', { class: 'gallery-n', text: fmtInt(s.seq) }));
      galleryGrid.append(h('li', {}, item));
    }
    for (const make of made) galleryViewers.push(make());
    updatePager();
  }

  // ---- the comparison ------------------------------------------------------
  let compareSeq = 0;
  async function showCompare(a, b) {
    const seq = ++compareSeq;
    compareA.value = String(a);
    compareB.value = String(b);
    compareA.max = compareB.max = String(Math.max(1, total()));
    let sa, sb;
    try { [sa, sb] = await Promise.all([a <= total() ? solutionAt(a) : null, b <= total() ? solutionAt(b) : null]); } catch (e) {
      if (!destroyed) showError(`Could not load solutions: ${e.message}`);
      return;
    }
    if (destroyed || seq !== compareSeq) return;
    clear(compareView);
    if (!sa || !sb) {
      compareSummary.textContent = `There is no solution ${fmtInt(!sa ? a : b)}: this job has ${fmtInt(total())} so far.`;
      return;
    }
    // a piece placed alike in both is faded; copies of a piece match by their cells
    const keyOf = (p) => `${p.name}|${p.cells.map((c) => c.join(',')).sort().join(' ')}`;
    const count = (s) => { const m = new Map(); for (const p of s.pieces) m.set(keyOf(p), (m.get(keyOf(p)) || 0) + 1); return m; };
    const inA = count(sa), inB = count(sb);
    const marked = (s, other) => {
      const left = new Map(other);
      return solutionPieces(s).map((p, i) => {
        const k = keyOf(s.pieces[i]);
        const same = (left.get(k) || 0) > 0;
        if (same) left.set(k, left.get(k) - 1);
        return { ...p, dim: same };
      });
    };
    const pa = marked(sa, inB), pb = marked(sb, inA);
    const differ = pa.filter((p) => !p.dim).length;
    compareSummary.textContent = a === b ? 'The same solution twice: nothing differs.'
      : `${differ} of ${pa.length} pieces are placed differently (drawn in colour; the others are faded).`;
    const figure = (s, pieces, testid) => {
      const fig = h('figure', { class: 'compare-side', 'data-testid': testid });
      if (dims === 2) {
        const xs = s.pieces.flatMap((p) => p.cells.map((c) => c[0]));
        const cols = Math.max(...xs) - Math.min(...xs) + 1;
        fig.append(drawTiling(pieces, { cell: Math.max(16, Math.min(40, Math.floor(560 / cols))), label: `Solution ${s.seq}` }));
      } else fig.append(drawLayers(pieces, { cell: 22, board: puzzle?.board?.cells || [] }));
      fig.append(h('figcaption', {}, h('a', { href: hashOf({ view: 'solution', n: s.seq }), text: `Solution ${fmtInt(s.seq)}` })));
      return fig;
    };
    compareView.append(figure(sa, pa, 'compare-left'), figure(sb, pb, 'compare-right'));
  }

  // ---- exports -----------------------------------------------------------
  const baseName = () => `${slug(job.name)}-job${job.id}-solution${shown?.seq ?? 0}`;

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
    if (puzzle && dims === 2) legendWrap.append(legend(puzzle.pieces));
    // 3D: the legend hides and isolates pieces; folded on a phone, where the
    // view comes first
    if (puzzle && dims === 3) {
      legendWrap.append(h('details', { class: 'legend-fold', open: !window.matchMedia('(max-width: 760px)').matches },
        h('summary', { text: 'Pieces: hide, show, isolate' }), legend3d(puzzle.pieces)));
    }
    update(job);
    await setParams(want);
    if (!destroyed) startWatch();
  })();

  return {
    ready,
    setParams: (p) => ready.then(() => setParams(p)),
    destroy() {
      destroyed = true;
      watcher?.close();
      viewer?.destroy();
      galleryViewers.forEach((v) => v.destroy());
    },
  };
}
