// solutions.js — the solution browser of the job page: a card with three
// views, each with an address of its own:
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
//
// The job page makes one browser once its job and puzzle are loaded and
// hands it each new state of the job: the stored count grows, and a view
// that waits for a solution not found yet fills when it is.  Each view is
// a part of its own (singleView, galleryView, compareView) sharing one
// context: the job, the view wanted, the solutions read so far, the address.

import { h, clear, downloadBlob, slug } from './dom.js';
import { api, isFinal } from './api.js';
import { fmtInt } from './format.js';
import { drawTiling, drawLayers, svgToString, svgToPng, elide } from './render2d.js';
import { Viewer3D } from './render3d.js';
import { legend } from './preview.js';
import { latticeOf, widthUnits } from './lattice.js';
import { cellColor } from './colors.js';

const PAGE = 50;          // solutions per request of the single view
const GALLERY_PAGE = 24;  // thumbnails per gallery page

/**
 * The solution browser of `job` (the job object as first loaded; `id` the
 * job as its address spells it), drawn with its `puzzle` (null when it
 * could not be read) in `colors` (a colorMap of its pieces), on the view
 * `params` names ({view, n, page, a, b} as the router reads an address).
 * onError(message) shows a failure on the page.
 *
 * Returns { element, setParams(p), update(job), destroy() }: the card;
 * setParams moves to the view p names (with no p, shows the view wanted);
 * update takes each new state of the job.
 */
export function solutionBrowser({ id, job, puzzle, colors, params, onError }) {
  let current = job;
  let destroyed = false;
  const pages = new Map(); // page index → full pages of solutions (partial ones are fetched again)
  const want = { view: params.view || 'solution', n: params.n || 1, page: params.page || 1, a: params.a || 1, b: params.b || 2 };
  const ctx = {
    id, want, puzzle, cm: colors, onError, solutionAt, go, hashOf,
    dims: job.puzzle?.dimensions === 3 ? 3 : 2,
    // cubic, triangular or hexagonal: how 2D drawings draw a cell (each
    // solution names its lattice too: the puzzle may have failed to load)
    lattice: latticeOf(puzzle),
    job: () => current,
    total: () => current?.stored ?? 0,
    alive: () => !destroyed,
    pieces: (s) => {
      if (!ctx.lattice) ctx.lattice = latticeOf(s);
      // a coloured piece's cell colours, as it lies (dots of the puzzle's colours)
      const palette = puzzle?.colors?.palette;
      return s.pieces.map((p) => ({
        name: p.name, color: colors.color(p.name), cells: p.cells, fixed: colors.fixed(p.name),
        marks: p.colors?.some(Boolean) ? p.colors.map((n) => (n ? { n, color: cellColor(n, palette) } : null)) : null,
      }));
    },
    updatePager: () => { single.updatePager(); gallery.updatePager(); },
  };
  if (!puzzle) ctx.lattice = null; // taken from the first solution drawn
  const single = singleView(ctx);
  const gallery = galleryView(ctx);
  const views = { solution: single, gallery, compare: compareView(ctx) };
  const tabs = {};
  for (const [v, label] of [['solution', 'Solution'], ['gallery', 'Gallery'], ['compare', 'Compare']]) {
    tabs[v] = h('button', {
      type: 'button', class: 'tab', 'data-testid': `tab-${v}`, 'aria-pressed': 'false', text: label,
      onclick: () => go(tabTarget(v, single.shown()?.seq)),
    });
  }
  const element = h('section', { class: 'card solutions-card', 'data-testid': 'solutions-card', 'aria-labelledby': 'solutions-heading' },
    h('div', { class: 'section-head' }, h('h2', { id: 'solutions-heading', text: 'Solutions' }),
      h('div', { class: 'tabs', role: 'group', 'aria-label': 'Solution views' }, tabs.solution, tabs.gallery, tabs.compare)),
    views.solution.panel, views.gallery.panel, views.compare.panel);

  /** Where a tab leads from solution `seq` (the one shown, if any). */
  function tabTarget(v, seq) {
    if (v === 'solution') return { view: v, n: seq || want.n };
    if (v === 'gallery') return { view: v, page: Math.floor(((seq || 1) - 1) / GALLERY_PAGE) + 1 };
    return { view: v, a: seq || 1, b: (seq || 1) + 1 };
  }

  /** Solution n (seq n), from the page that holds it; null when there is none (yet). */
  async function solutionAt(n) {
    const p = Math.floor((n - 1) / PAGE);
    let items = pages.get(p);
    if (!items) {
      const res = await api.solutions(current.id, p * PAGE, PAGE);
      items = res.solutions;
      if (items.length === PAGE) pages.set(p, items); // a full page never changes
    }
    return items.find((s) => s.seq === n) || null;
  }

  /** Changes the view and the address (replace: no new history entry). */
  function go(p, replace = false) {
    const hash = hashOf(p);
    if (location.hash !== hash) history[replace ? 'replaceState' : 'pushState'](null, '', hash);
    return setParams(p);
  }

  function hashOf(p) {
    const base = `#/jobs/${id}`;
    if (p.view === 'gallery') return `${base}/gallery/${p.page}`;
    if (p.view === 'compare') return `${base}/compare/${p.a}/${p.b}`;
    return `${base}/solutions/${p.n}`;
  }

  async function setParams(p = {}) {
    Object.assign(want, p);
    for (const v of Object.keys(views)) {
      views[v].panel.hidden = v !== want.view;
      tabs[v].setAttribute('aria-pressed', String(v === want.view));
      tabs[v].classList.toggle('is-active', v === want.view);
    }
    if (want.view === 'gallery') return gallery.show(want.page);
    if (want.view === 'compare') return views.compare.show(want.a, want.b);
    return single.show(want.n || 1);
  }

  function update(j) {
    const before = current;
    current = j;
    ctx.updatePager();
    // new solutions: fill a view that was waiting for them
    if ((before?.stored ?? 0) !== j.stored) {
      if (want.view === 'solution' && !single.shown() && j.stored >= want.n) single.show(want.n);
      if (want.view === 'gallery' && gallery.size() < GALLERY_PAGE) gallery.show(want.page);
    }
  }

  return {
    element, setParams, update,
    destroy() {
      destroyed = true;
      single.destroy();
      gallery.destroy();
    },
  };
}

// ---- the single view -----------------------------------------------------

/** One solution at a time: the pager, the jump field, the drawing (2D or
 *  3D) with its legend, the exports. */
function singleView(ctx) {
  const { want } = ctx;
  let shown = null;       // the solution drawn
  let showSeq = 0;
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
  const panel = h('div', { class: 'panel', 'data-testid': 'panel-solution' },
    h('div', { class: 'pager-row' },
      h('div', { class: 'pager' }, prevBtn, h('span', { class: 'pager-label' }, 'Solution ', indexEl), nextBtn),
      jumpForm),
    note, legendWrap, view, exportsRow);
  const job = ctx.job();
  const baseName = () => `${slug(ctx.job().name)}-job${ctx.job().id}-solution${shown?.seq ?? 0}`;
  const parts = { view, exportsRow, legendWrap, baseName, shown: () => shown };
  const drawing = ctx.dims === 2 ? drawing2d(ctx, parts) : drawing3d(ctx, parts);
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
    if (Number.isInteger(n) && n >= 1) ctx.go({ view: 'solution', n });
  });
  panel.addEventListener('keydown', (e) => {
    const tag = e.target.tagName;
    if (tag === 'INPUT' || tag === 'CANVAS' || tag === 'SELECT') return;
    if (e.key === 'ArrowLeft') { e.preventDefault(); stepBy(-1); } else if (e.key === 'ArrowRight') { e.preventDefault(); stepBy(1); }
  });

  async function show(n) {
    const seq = ++showSeq;
    const total = ctx.total;
    want.n = n;
    jumpInput.value = String(n);
    ctx.updatePager();
    if (total() === 0 && !isFinal(ctx.job())) { setNote('No solution found yet; the first one appears here as soon as it is found.'); return; }
    let s = null;
    try { s = n <= total() ? await ctx.solutionAt(n) : null; } catch (e) { if (ctx.alive()) ctx.onError(`Could not load solutions: ${e.message}`); return; }
    if (!ctx.alive() || seq !== showSeq) return;
    if (!s) {
      setNote(total() === 0 ? 'This job has no stored solutions.'
        : isFinal(ctx.job()) ? `There is no solution ${fmtInt(n)}: this job has ${fmtInt(total())}.`
          : `Solution ${fmtInt(n)} is not found yet (${fmtInt(total())} so far); it appears here when it is.`);
      return;
    }
    setNote('');
    shown = s;
    drawing.draw(s);
    ctx.updatePager();
  }

  function setNote(text) {
    note.textContent = text;
    note.hidden = !text;
    view.hidden = !!text;
    legendWrap.hidden = !!text;
    exportsRow.hidden = !!text && !ctx.total();
    if (text) shown = null;
    ctx.updatePager();
  }

  function stepBy(d) {
    const n = (shown?.seq ?? want.n) + d;
    if (n < 1 || n > ctx.total()) return;
    ctx.go({ view: 'solution', n }, true);
  }

  function updatePager() {
    const k = shown?.seq ?? 0;
    const n = ctx.total();
    indexEl.textContent = `${fmtInt(k)} / ${fmtInt(n)}`;
    prevBtn.disabled = k <= 1;
    nextBtn.disabled = !k || k >= n;
    jumpInput.max = String(Math.max(1, n));
    for (const b of exportsRow.querySelectorAll('[data-testid^=export]')) b.disabled = !shown;
    const dl = exportsRow.querySelector('[data-testid=download-jsonl]');
    if (dl) dl.hidden = n === 0;
  }

  return { panel, show, updatePager, shown: () => shown, destroy: drawing.destroy };
}

/** A 2D solution: a drawing the card's width, the legend, SVG and PNG export. */
function drawing2d(ctx, { view, exportsRow, legendWrap, baseName }) {
  const svgHolder = h('div', { class: 'svg-holder' });
  view.append(svgHolder);
  exportsRow.append(
    h('button', { type: 'button', class: 'btn', 'data-testid': 'export-svg', text: 'Export SVG', onclick: exportSvg }),
    h('button', { type: 'button', class: 'btn', 'data-testid': 'export-png', text: 'Export PNG', onclick: exportPng }));
  if (ctx.puzzle) legendWrap.append(legend(ctx.puzzle.pieces));

  function draw(s) {
    const pieces = ctx.pieces(s);
    const label = `Solution ${s.seq} of ${ctx.total()}`;
    const cols = widthUnits(ctx.lattice, s.pieces.flatMap((p) => p.cells));
    const svg = drawTiling(pieces, { cell: Math.max(24, Math.min(64, Math.floor(1100 / cols))), label, lattice: ctx.lattice });
    svg.setAttribute('data-testid', 'solution-svg');
    clear(svgHolder).append(svg);
  }

  function exportSvg() {
    const svg = svgHolder.querySelector('svg');
    if (!svg) return;
    downloadBlob(new Blob([svgToString(svg)], { type: 'image/svg+xml' }), `${baseName()}.svg`);
  }

  async function exportPng() {
    const svg = svgHolder.querySelector('svg');
    if (!svg) return;
    try { downloadBlob(await svgToPng(svg, 2), `${baseName()}.png`); } catch (e) { ctx.onError(e.message); }
  }

  return { draw, destroy() {} };
}

/**
 * A 3D solution: a view to turn (piece names on hover or tap), the
 * exploded view, the assembly one piece at a time, the layers, a legend
 * that hides and isolates pieces, and an image export.  shown() is the
 * solution drawn (null while a note stands in its place).
 */
function drawing3d(ctx, { view, exportsRow, legendWrap, baseName, shown }) {
  const { cm } = ctx;
  let viewer = null;
  const hidden = new Set(); // piece names not drawn
  let step = null;          // pieces placed in the assembly stepper, null: all
  const layersHolder = h('div', { class: 'layers-holder' });
  const canvas = h('canvas', {
    class: 'view-3d', 'data-testid': 'solution-3d', tabindex: 0, role: 'img',
    'aria-label': '3D view of the solution; drag or use the arrow keys to rotate',
  });
  const tip = h('div', { class: 'piece-tip', 'data-testid': 'piece-tip', role: 'status', hidden: true });
  const explode = h('input', { type: 'range', id: 'explode', 'data-testid': 'explode', min: 0, max: 100, value: 0, step: 1 });
  explode.addEventListener('input', () => viewer?.setExplode(Number(explode.value) / 100));
  const stepPrev = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'step-prev', 'aria-label': 'Take the last piece off', text: '‹', onclick: () => setStep((step ?? pieceCount()) - 1) });
  const stepNext = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'step-next', 'aria-label': 'Place the next piece', text: '›', onclick: () => setStep(step == null ? 1 : step + 1) });
  const stepAll = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'step-all', text: 'All', onclick: () => setStep(null) });
  const stepStart = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'step-start', text: 'Start', title: 'The first piece alone', onclick: () => setStep(1) });
  const stepLabel = h('span', { class: 'step-label', 'data-testid': 'step-label', 'aria-live': 'polite' });
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
  exportsRow.append(h('button', { type: 'button', class: 'btn', 'data-testid': 'export-3d', text: 'Export image', onclick: export3d }));
  // the legend hides and isolates pieces; folded on a phone, where the
  // view comes first
  if (ctx.puzzle) {
    legendWrap.append(h('details', { class: 'legend-fold', open: !window.matchMedia('(max-width: 760px)').matches },
      h('summary', { text: 'Pieces: hide, show, isolate' }), legend3d(ctx.puzzle.pieces, cm, hidden, setHidden)));
  }
  const pieceCount = () => viewer?.pieces.length ?? 0;

  function draw(s) {
    const pieces = ctx.pieces(s);
    const label = `Solution ${s.seq} of ${ctx.total()}`;
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

  function showTip(name, x, y) {
    tip.hidden = !name;
    if (!name) return;
    tip.textContent = cm.fixed(name) ? `${name} (fixed)` : name;
    tip.style.left = `${Math.round(x + 12)}px`;
    tip.style.top = `${Math.round(y + 12)}px`;
  }

  /** Layers drawn with what the 3D view shows (hidden pieces, the step). */
  function drawLayersNow() {
    const s = shown();
    if (!s) return;
    const pieces = ctx.pieces(s).filter((p, i) => viewer.visible(i));
    const board = (ctx.puzzle?.board?.cells || []);
    const xs = board.length ? board.map((c) => c[0]) : s.pieces.flatMap((p) => p.cells.map((c) => c[0]));
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

  async function export3d() {
    if (!viewer) return;
    try { downloadBlob(await viewer.toBlob(), `${baseName()}-3d.png`); } catch (e) { ctx.onError(e.message); }
  }

  return { draw, destroy() { viewer?.destroy(); } };
}

/** The 3D legend: each piece a toggle (shown or hidden) and an "only"
 *  button; setHidden(names) hides exactly those. */
function legend3d(puzzlePieces, cm, hidden, setHidden) {
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

/** Small drawings a page of GALLERY_PAGE at a time; a click opens one. */
function galleryView(ctx) {
  const { want } = ctx;
  let showSeq = 0;
  const viewers = [];
  const grid = h('ol', { class: 'gallery', 'data-testid': 'gallery' });
  const range = h('span', { 'data-testid': 'gallery-range', class: 'pager-label' });
  const prev = h('button', { type: 'button', class: 'btn', 'data-testid': 'gallery-prev', text: '‹ Previous page', onclick: () => ctx.go({ view: 'gallery', page: want.page - 1 }) });
  const next = h('button', { type: 'button', class: 'btn', 'data-testid': 'gallery-next', text: 'Next page ›', onclick: () => ctx.go({ view: 'gallery', page: want.page + 1 }) });
  const panel = h('div', { class: 'panel', 'data-testid': 'panel-gallery', hidden: true },
    h('div', { class: 'pager gallery-pager' }, prev, range, next),
    h('p', { class: 'muted small', text: 'Click a drawing to open that solution.' }),
    grid);

  const rangeText = () => {
    const n = ctx.total();
    if (!n) return 'No solutions yet';
    const from = (want.page - 1) * GALLERY_PAGE + 1;
    return from > n ? `Page ${want.page}: past the last solution (${fmtInt(n)})`
      : `Solutions ${fmtInt(from)}–${fmtInt(Math.min(n, from + GALLERY_PAGE - 1))} of ${fmtInt(n)}`;
  };

  async function show(page) {
    const seq = ++showSeq;
    want.page = page;
    ctx.updatePager();
    let res;
    try { res = await api.solutions(ctx.job().id, (page - 1) * GALLERY_PAGE, GALLERY_PAGE); } catch (e) {
      if (ctx.alive()) ctx.onError(`Could not load solutions: ${e.message}`);
      return;
    }
    if (!ctx.alive() || seq !== showSeq) return;
    viewers.splice(0).forEach((v) => v.destroy());
    clear(grid);
    const made = [];
    for (const s of res.solutions) {
      const pieces = ctx.pieces(s);
      const item = h('button', {
        type: 'button', class: 'gallery-item', 'data-testid': 'gallery-item', 'data-n': String(s.seq),
        'aria-label': `Open solution ${s.seq}`, onclick: () => ctx.go({ view: 'solution', n: s.seq }),
      });
      if (ctx.dims === 2) item.append(drawTiling(pieces, { cell: 12, labels: false, pad: 1, label: `Solution ${s.seq}`, lattice: ctx.lattice }));
      else {
        const c = h('canvas', { class: 'thumb-3d', role: 'img', 'aria-label': `Solution ${s.seq} in 3D` });
        item.append(c);
        made.push(() => new Viewer3D(c, pieces, { height: 120, interactive: false }));
      }
      item.append(h('span', { class: 'gallery-n', text: fmtInt(s.seq) }));
      grid.append(h('li', {}, item));
    }
    for (const make of made) viewers.push(make());
    ctx.updatePager();
  }

  function updatePager() {
    range.textContent = rangeText();
    prev.disabled = want.page <= 1;
    next.disabled = want.page * GALLERY_PAGE >= ctx.total();
  }

  return {
    panel, show, updatePager,
    size: () => grid.children.length,
    destroy() { viewers.forEach((v) => v.destroy()); },
  };
}

// ---- the comparison ------------------------------------------------------

/** Two solutions side by side, the pieces placed alike faded. */
function compareView(ctx) {
  let showSeq = 0;
  const compareA = h('input', { type: 'number', id: 'compare-a', 'data-testid': 'compare-a', min: 1, step: 1, inputmode: 'numeric', class: 'jump-input' });
  const compareB = h('input', { type: 'number', id: 'compare-b', 'data-testid': 'compare-b', min: 1, step: 1, inputmode: 'numeric', class: 'jump-input' });
  const summary = h('p', { 'data-testid': 'compare-summary', class: 'compare-summary' });
  const sides = h('div', { class: 'compare-view', 'data-testid': 'compare-view' });
  const panel = h('div', { class: 'panel', 'data-testid': 'panel-compare', hidden: true },
    h('form', { class: 'compare-form', 'data-testid': 'compare-form', novalidate: true, onsubmit: (e) => { e.preventDefault(); ctx.go({ view: 'compare', a: Number(compareA.value), b: Number(compareB.value) }); } },
      h('label', { for: 'compare-a', text: 'Solution' }), compareA,
      h('label', { for: 'compare-b', text: 'with' }), compareB,
      h('button', { type: 'submit', class: 'btn', 'data-testid': 'compare-go', text: 'Compare' })),
    summary, sides);

  async function show(a, b) {
    const seq = ++showSeq;
    const total = ctx.total;
    compareA.value = String(a);
    compareB.value = String(b);
    compareA.max = compareB.max = String(Math.max(1, total()));
    let sa, sb;
    try { [sa, sb] = await Promise.all([a <= total() ? ctx.solutionAt(a) : null, b <= total() ? ctx.solutionAt(b) : null]); } catch (e) {
      if (ctx.alive()) ctx.onError(`Could not load solutions: ${e.message}`);
      return;
    }
    if (!ctx.alive() || seq !== showSeq) return;
    clear(sides);
    if (!sa || !sb) {
      summary.textContent = `There is no solution ${fmtInt(!sa ? a : b)}: this job has ${fmtInt(total())} so far.`;
      return;
    }
    const pa = markedAlike(sa, sb, ctx.pieces(sa)), pb = markedAlike(sb, sa, ctx.pieces(sb));
    const differ = pa.filter((p) => !p.dim).length;
    summary.textContent = a === b ? 'The same solution twice: nothing differs.'
      : `${differ} of ${pa.length} pieces are placed differently (drawn in colour; the others are faded).`;
    sides.append(figure(sa, pa, 'compare-left'), figure(sb, pb, 'compare-right'));
  }

  function figure(s, pieces, testid) {
    const fig = h('figure', { class: 'compare-side', 'data-testid': testid });
    if (ctx.dims === 2) {
      const cols = widthUnits(ctx.lattice, s.pieces.flatMap((p) => p.cells));
      fig.append(drawTiling(pieces, { cell: Math.max(16, Math.min(40, Math.floor(560 / cols))), label: `Solution ${s.seq}`, lattice: ctx.lattice }));
    } else fig.append(drawLayers(pieces, { cell: 22, board: ctx.puzzle?.board?.cells || [] }));
    fig.append(h('figcaption', {}, h('a', { href: ctx.hashOf({ view: 'solution', n: s.seq }), text: `Solution ${fmtInt(s.seq)}` })));
    return fig;
  }

  return { panel, show };
}

/**
 * The drawn pieces of solution s (`pieces`, in the order of s.pieces), each
 * marked dim when `other` places it alike; copies of a piece match by
 * their cells, each copy in `other` matching once.
 */
function markedAlike(s, other, pieces) {
  const keyOf = (p) => `${p.name}|${p.cells.map((c) => c.join(',')).sort().join(' ')}`;
  const left = new Map();
  for (const p of other.pieces) left.set(keyOf(p), (left.get(keyOf(p)) || 0) + 1);
  return pieces.map((p, i) => {
    const k = keyOf(s.pieces[i]);
    const same = (left.get(k) || 0) > 0;
    if (same) left.set(k, left.get(k) - 1);
    return { ...p, dim: same };
  });
}
