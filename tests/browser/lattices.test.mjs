// The triangular and hexagonal lattices (issue 24) in the dashboard: a
// hexiamond solution and a polyhex solution drawn triangle for triangle and
// hexagon for hexagon as the API gives them (solution view, SVG and PNG
// export, gallery, comparison, the submit page's preview); the designer on
// triangles and on hexagons: the lattice chooser, cells clicked and a
// parallelogram dragged, the generated hexiamonds and tetrahexes with their
// names, a piece drawn in the editor, the puzzle saved with "lattice" and
// submitted, the job counting what the fixtures count.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  setup, teardown, withPage, gotoRoute, waitReady, clearReady, shot, checkPhone, eventually,
  api, submitJob, trackJob, waitJob, clickDownload, downloadBytes, keepDownload, num, T, log, SRCDIR, submitDesign,
} from './lib.mjs';

before(setup, { timeout: T(60) });
after(teardown, { timeout: T(60) });

const FIXTURES = path.join(SRCDIR, 'tests', 'fixtures', 'lattices');
const fixture = (f) => JSON.parse(fs.readFileSync(path.join(FIXTURES, f), 'utf8'));
const cellKey = (c) => `${c[0]},${c[1]},${c[2] || 0}`;

/** The pieces a tiling SVG draws: name → sorted cell keys, from the
 *  polygons' data-x, data-y, data-z (hatching polygons carry a fill). */
function drawnPieces(svg) {
  return svg.evaluate((el) => {
    const out = {};
    for (const g of el.querySelectorAll('g[data-piece]')) {
      out[g.dataset.piece] = [...g.querySelectorAll(':scope > polygon:not([fill])')]
        .map((p) => `${p.dataset.x},${p.dataset.y},${p.dataset.z}`).sort();
    }
    return out;
  });
}

/** Solution n of a job as the API gives it: name → sorted cell keys. */
async function apiPieces(id, n) {
  const r = await api('GET', `/api/v1/jobs/${id}/solutions?after=${n - 1}&limit=1`);
  assert.equal(r.status, 200, r.text);
  const s = r.json.solutions[0];
  assert.equal(s.seq, n);
  return Object.fromEntries(s.pieces.map((p) => [p.name, p.cells.map(cellKey).sort()]));
}

/** The corners of each polygon of an SVG as numbers: checks that a
 *  triangle has 3 and a hexagon 6, and that the drawing has y up. */
function polygonShapes(svg) {
  return svg.evaluate((el) => [...el.querySelectorAll('g[data-piece] > polygon:not([fill])')].map((p) => ({
    x: Number(p.dataset.x), y: Number(p.dataset.y), z: Number(p.dataset.z),
    pts: p.getAttribute('points').trim().split(/\s+/).length / 2,
    cy: p.getAttribute('points').trim().split(/\s+/).map(Number).filter((_, i) => i % 2 === 1).reduce((a, v, _, all) => a + v / all.length, 0),
  })));
}

async function checkSolutionView(page, id, n, lattice, pieceCount, corners) {
  await gotoRoute(page, `#/jobs/${id}/solutions/${n}`);
  const svg = page.locator('svg[data-testid=solution-svg]');
  await svg.waitFor({ state: 'visible' });
  assert.equal(await svg.getAttribute('data-lattice'), lattice, 'the solution is drawn on its lattice');
  const drawn = await drawnPieces(svg);
  assert.equal(Object.keys(drawn).length, pieceCount);
  assert.deepEqual(drawn, await apiPieces(id, n), `solution ${n} drawn cell for cell as the API gives it`);
  const shapes = await polygonShapes(svg);
  assert.ok(shapes.every((p) => p.pts === corners), `every cell a polygon of ${corners} corners`);
  // y up: of two cells in the same column of the lattice, the larger y is higher on the screen
  const lo = shapes.reduce((a, p) => (p.y < a.y ? p : a)), hi = shapes.reduce((a, p) => (p.y > a.y ? p : a));
  assert.ok(hi.cy < lo.cy, `y grows upward (y=${hi.y} at ${hi.cy.toFixed(0)}, y=${lo.y} at ${lo.cy.toFixed(0)})`);
  // every piece named on the drawing
  const labels = await svg.locator('g[data-piece] > text').allTextContents();
  assert.deepEqual(labels.sort(), Object.keys(drawn).sort());
  return svg;
}

test('a hexiamond solution: drawn triangle for triangle, exported, the gallery, a comparison', { timeout: T(100) }, withPage(async (page) => {
  const pz = fixture('hexiamonds-6x6.json');
  const job = await submitJob(pz);
  const done = await waitJob(job.id);
  assert.equal(done.state, 'completed');
  assert.equal(done.solutions, pz.expected.rotations, 'the 156 of Polyform Puzzler');

  const svg = await checkSolutionView(page, job.id, 3, 'triangular', 12, 3);
  const bb = await svg.boundingBox();
  assert.ok(bb.width > 600 && bb.width > bb.height, `the rhombus drawn large and wider than high (${bb.width}x${bb.height})`);
  await shot(page, 'lattice-hexiamonds-solution');

  const dSvg = await clickDownload(page, page.locator('[data-testid=export-svg]'));
  const text = (await downloadBytes(dSvg)).toString('utf8');
  await keepDownload(dSvg, 'lattice-hexiamonds-solution3.svg');
  assert.equal((text.match(/<polygon /g) || []).length, 72, 'the SVG export has the 72 triangles');
  const dPng = await clickDownload(page, page.locator('[data-testid=export-png]'));
  const png = await downloadBytes(dPng);
  await keepDownload(dPng, 'lattice-hexiamonds-solution3.png');
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  assert.ok(png.readUInt32BE(16) > 1000, `the PNG is drawn at twice the size (${png.readUInt32BE(16)} px wide)`);
  await checkPhone(page, 'lattice-hexiamonds-solution-phone');

  await page.locator('[data-testid=tab-gallery]').click();
  const items = page.locator('[data-testid=gallery-item]');
  await eventually('24 thumbnails', async () => (await items.count()) === 24);
  const thumbs = await page.locator('[data-testid=gallery] svg').evaluateAll((els) => els.map((e) => [e.dataset.lattice, e.querySelectorAll('g[data-piece] > polygon').length]));
  assert.ok(thumbs.every(([l, n]) => l === 'triangular' && n === 72), `each thumbnail 72 triangles: ${JSON.stringify(thumbs.slice(0, 3))}`);
  await shot(page, 'lattice-hexiamonds-gallery');
  await items.nth(4).click();
  await eventually('thumbnail 5 opens solution 5', async () => page.url().endsWith(`#/jobs/${job.id}/solutions/5`));

  await gotoRoute(page, `#/jobs/${job.id}/compare/1/2`);
  const left = page.locator('[data-testid=compare-left] svg');
  await left.waitFor({ state: 'visible' });
  assert.equal(await left.getAttribute('data-lattice'), 'triangular');
  const dim = await page.locator('[data-testid=compare-left] g[data-dim]').count();
  const summary = await page.locator('[data-testid=compare-summary]').textContent();
  assert.match(summary, new RegExp(`^${12 - dim} of 12 pieces are placed differently`));
  await shot(page, 'lattice-hexiamonds-compare');
}));

test('a polyhex solution: drawn hexagon for hexagon, the gallery; the submit page previews hexagons', { timeout: T(100) }, withPage(async (page) => {
  const pz = fixture('polyhexes-34-hexagon.json');
  const job = await submitJob(pz);
  const done = await waitJob(job.id);
  assert.equal(done.solutions, pz.expected.rotations, 'the 12,290 of Polyform Puzzler');
  await checkSolutionView(page, job.id, 1, 'hexagonal', 10, 6);
  await shot(page, 'lattice-polyhexes-solution');
  await checkPhone(page, 'lattice-polyhexes-solution-phone');
  await gotoRoute(page, `#/jobs/${job.id}/gallery/2`);
  const items = page.locator('[data-testid=gallery-item]');
  await eventually('24 thumbnails of page 2', async () => (await items.count()) === 24);
  assert.equal(await items.first().getAttribute('data-n'), '25');
  const counts = await page.locator('[data-testid=gallery] svg').evaluateAll((els) => els.map((e) => e.querySelectorAll('g[data-piece] > polygon').length));
  assert.ok(counts.every((n) => n === 37), 'each thumbnail the 37 hexagons');
  await shot(page, 'lattice-polyhexes-gallery');

  // the submit page: the puzzle pasted, previewed as hexagons
  await gotoRoute(page, '#/submit');
  await page.locator('[data-testid=puzzle-text]').fill(JSON.stringify(fixture('tetrahexes-7x4.json'), null, 1));
  await page.locator('[data-testid=preview]').click();
  const board = page.locator('[data-testid=preview-area] figure.preview-board svg');
  await board.waitFor({ state: 'visible' });
  assert.equal(await board.getAttribute('data-lattice'), 'hexagonal');
  assert.equal(await board.locator('polygon').count(), 28, 'the 7x4 board: 28 hexagons');
  assert.equal(await page.locator('[data-testid=preview-area] .piece-card svg[data-lattice=hexagonal]').count(), 7);
  assert.equal(await page.locator('[data-testid=submit-warning]').textContent(), '', 'no piece is taken for disconnected');
  await shot(page, 'lattice-submit-preview');
}));

// ---- the designer ---------------------------------------------------------------

const dcell = (page, x, y, z = 0) => page.locator(`svg[data-testid=design-layer] polygon[data-x="${x}"][data-y="${y}"][data-z="${z}"]`);

/** The centre of a polygon's bounding box, in page coordinates. */
async function centre(loc) {
  const b = await loc.boundingBox();
  return [b.x + b.width / 2, b.y + b.height / 2];
}

async function balance(page) {
  const b = page.locator('[data-testid=balance]');
  return {
    required: num(await b.locator('[data-testid=balance-required]').textContent()),
    verdict: await b.locator('[data-testid=balance-verdict]').textContent(),
    ok: (await b.getAttribute('data-ok')) === 'true',
  };
}

async function addSet(page, label) {
  const sel = page.locator('select[data-testid=set-select]');
  const value = await sel.locator('option', { hasText: label }).first().getAttribute('value');
  await sel.selectOption(value);
}

const saved = (page) => page.evaluate(() => JSON.parse(localStorage.getItem('tessera.designer')).puzzle);


test('the designer on triangles: a board drawn, the hexiamonds added, saved and submitted', { timeout: T(100) }, withPage(async (page) => {
  await gotoRoute(page, '#/designer');
  await page.locator('[data-testid=design-lattice]').selectOption('triangular');
  const layer = page.locator('svg[data-testid=design-layer]');
  await eventually('a 6x6 rhombus of triangles', async () => (await layer.getAttribute('data-lattice')) === 'triangular'
    && (await layer.locator('polygon').count()) === 72);
  assert.equal((await balance(page)).required, 72);
  assert.ok(await page.locator('[data-testid=board-layers]').isDisabled(), 'no layers on a plane lattice');
  // the library's puzzles offered for their pieces are this lattice's only
  const offered = async () => page.locator('select[data-testid=set-select] option[value^="lib:"]:not([hidden])')
    .evaluateAll((os) => os.map((o) => o.value));
  await eventually('the library lists the triangular puzzles only', async () => {
    const v = await offered();
    return v.includes('lib:hexiamonds-6x6.json') && !v.includes('lib:pentominoes-6x10.json')
      && !v.includes('lib:polyhexes-34-hexagon.json');
  });

  // a click erases one triangle, another puts it back: the hit test finds the triangle clicked
  await page.locator('[data-testid=brush-empty]').click();
  for (const c of [[2, 3, 1], [4, 0, 0]]) {
    await dcell(page, ...c).click();
    assert.equal(await dcell(page, ...c).getAttribute('data-state'), 'empty', `cell ${c} erased`);
  }
  assert.equal((await balance(page)).required, 70);
  // a dragged parallelogram: x 1..2, y 1..2, both triangles of each rhombus
  await page.locator('[data-testid=tool-rect]').click();
  const [ax, ay] = await centre(dcell(page, 1, 1, 0)), [bx, by] = await centre(dcell(page, 2, 2, 1));
  await page.mouse.move(ax, ay);
  await page.mouse.down();
  await page.mouse.move((ax + bx) / 2, (ay + by) / 2, { steps: 3 });
  await page.mouse.move(bx, by, { steps: 3 });
  await page.mouse.up();
  await eventually('8 triangles erased by the drag', async () => (await balance(page)).required === 62);
  for (const c of [[1, 1, 0], [1, 1, 1], [2, 2, 1], [1, 2, 0]]) assert.equal(await dcell(page, ...c).getAttribute('data-state'), 'empty');
  assert.equal(await dcell(page, 3, 2, 0).getAttribute('data-state'), 'req');
  await shot(page, 'lattice-designer-triangles-drawn');
  // the fill tool with the required brush fills the holes back
  await page.locator('[data-testid=tool-fill]').click();
  await page.locator('[data-testid=brush-req]').click();
  await dcell(page, 1, 1, 0).click();
  await page.locator('[data-testid=tool-paint]').click();
  for (const c of [[2, 3, 1], [4, 0, 0]]) await dcell(page, ...c).click();
  await eventually('the 72 triangles back', async () => (await balance(page)).required === 72);

  await addSet(page, 'Hexiamonds, free (12)');
  const pieces = page.locator('[data-testid=design-piece]');
  await eventually('12 pieces listed', async () => (await pieces.count()) === 12);
  const names = await pieces.evaluateAll((els) => els.map((e) => e.dataset.name).sort());
  assert.deepEqual(names, ['C6', 'E6', 'F6', 'G6', 'H6', 'I6', 'J6', 'O6', 'P6', 'S6', 'V6', 'X6'], "Polyform Puzzler's names");
  assert.ok((await balance(page)).ok, 'balanced: 72 cells, 12 pieces of 6');
  await eventually('the daemon says where each piece fits', async () => /\d+ places/.test(await pieces.first().locator('[data-testid=piece-fits]').textContent()));
  const pz = await saved(page);
  assert.equal(pz.lattice, 'triangular');
  assert.ok(pz.board.cells.every((c) => c.length === 3) && pz.board.cells.length === 72);
  assert.deepEqual(pz.pieces.find((p) => p.name === 'O6').cells.length, 6);
  await shot(page, 'lattice-designer-triangles');
  await checkPhone(page, 'lattice-designer-triangles-phone');

  const id = await submitDesign(page, fixture('hexiamonds-6x6.json').expected.rotations);
  await page.locator('svg[data-testid=solution-svg][data-lattice=triangular]').waitFor({ state: 'visible' });
  log(`designer job ${id}: 156 solutions, drawn in triangles`);
}));

test('the designer on hexagons: the tetrahexes, one drawn in the editor, submitted', { timeout: T(100) }, withPage(async (page) => {
  await gotoRoute(page, '#/designer');
  await page.locator('[data-testid=design-lattice]').selectOption('hexagonal');
  const layer = page.locator('svg[data-testid=design-layer]');
  await eventually('a 7x4 parallelogram of hexagons', async () => (await layer.getAttribute('data-lattice')) === 'hexagonal'
    && (await layer.locator('polygon').count()) === 28);
  await page.locator('[data-testid=brush-empty]').click();
  await dcell(page, 6, 3).click();
  assert.equal(await dcell(page, 6, 3).getAttribute('data-state'), 'empty');
  assert.equal(await dcell(page, 5, 3).getAttribute('data-state'), 'req', 'the neighbour is untouched');
  await page.locator('[data-testid=brush-req]').click();
  await dcell(page, 6, 3).click();
  assert.equal((await balance(page)).required, 28);

  await addSet(page, 'Tetrahexes, free (7)');
  const pieces = page.locator('[data-testid=design-piece]');
  await eventually('7 pieces listed', async () => (await pieces.count()) === 7);
  assert.deepEqual(await pieces.evaluateAll((els) => els.map((e) => e.dataset.name).sort()), ['I4', 'J4', 'O4', 'P4', 'S4', 'U4', 'Y4']);

  // the editor: the bar of four hexagons drawn, turned a sixth, added: it is I4, whose count goes up
  await page.locator('details.designer-custom > summary').click();
  const grid = page.locator('[data-testid=piece-editor] svg.custom-plane');
  assert.equal(await grid.getAttribute('data-lattice'), 'hexagonal');
  for (let x = 0; x < 4; x++) await grid.locator(`polygon[data-x="${x}"][data-y="0"]`).click();
  await page.locator('[data-testid=edit-turn]').click();
  assert.equal(await grid.locator('polygon[aria-pressed=true]').count(), 4, 'turned, still four cells');
  await shot(page, 'lattice-designer-hexagons-editor');
  await page.locator('[data-testid=custom-add]').click();
  const i4 = page.locator('[data-testid=design-piece][data-name=I4]');
  await eventually('I4 raised to 2', async () => (await i4.locator('[data-testid=piece-max]').inputValue()) === '2');
  await i4.locator('[data-testid=piece-min]').fill('1');
  await i4.locator('[data-testid=piece-min]').dispatchEvent('change');
  await i4.locator('[data-testid=piece-max]').fill('1');
  await i4.locator('[data-testid=piece-max]').dispatchEvent('change');
  await eventually('balanced again', async () => (await balance(page)).ok);
  const pz = await saved(page);
  assert.equal(pz.lattice, 'hexagonal');
  assert.ok(pz.board.cells.every((c) => c.length === 2), 'hexagons written [x, y]');
  await shot(page, 'lattice-designer-hexagons');
  await checkPhone(page, 'lattice-designer-hexagons-phone');

  await submitDesign(page, fixture('tetrahexes-7x4.json').expected.rotations);
  // opened back in the designer: the same lattice and board
  await clearReady(page);
  await page.locator('[data-testid=open-designer]').click();
  await waitReady(page, 'the designer');
  await eventually('the job opened on hexagons', async () => (await page.locator('[data-testid=design-lattice]').inputValue()) === 'hexagonal'
    && (await layer.locator('polygon').count()) === 28 && (await pieces.count()) === 7);
}));
