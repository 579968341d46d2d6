// Colours in the designer (Puzzle JSON "colors"): a 4x1 board coloured
// 1 0 0 1 (palette red, blue), dominoes A (colours 1 0) and B (2 0), one
// allowed pair 1 -> 1.  By hand, counting every tiling (unique=raw): B's
// colour-2 cell goes on a neutral cell only (no pair 2 -> *), so B lies
// with it on cell 1 or on cell 2, one way each; A fills the other end
// either way round (its 1 may sit on board 1, its neutral cell anywhere):
// 2 x 2 = 4.  With A's second cell painted 2, A too has one way: 2.
//
// Opened in the designer, the colours are drawn (board cells and piece
// thumbnails carry data-color, dots in the palette's colours), Download
// JSON gives back the same colours, palette and pairs, the job counts what
// `tessera solve` counts; the colour brush paints a board cell and a piece
// cell in the piece editor, the pairs are added and removed, the job page
// marks each coloured cell of a solution, "Open in designer" and Save as
// BurrTools keep the colours.  A coloured hexagonal and a coloured 3D
// puzzle are drawn too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  setup, teardown, withPage, gotoRoute, shot, checkPhone, eventually, trackJob, waitJob,
  clickDownload, downloadBytes, keepDownload, clearReady, waitReady, T, SRCDIR, log, submitDesign,
} from './lib.mjs';

before(setup, { timeout: T(60) });
after(teardown, { timeout: T(60) });

const PUZZLE = {
  version: 1, name: 'Coloured 4x1',
  board: { cells: [[0, 0], [1, 0], [2, 0], [3, 0]], colors: [1, 0, 0, 1] },
  pieces: [
    { name: 'A', cells: [[0, 0], [1, 0]], colors: [1, 0] },
    { name: 'B', cells: [[0, 0], [1, 0]], colors: [2, 0] },
  ],
  colors: { palette: ['#ff0000', '#0000ff'], allow: [{ piece: 1, board: 1 }] },
};
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-colours-'));
const FILE = path.join(TMP, 'coloured-4x1.json');
fs.writeFileSync(FILE, JSON.stringify(PUZZLE, null, 1));

/** `tessera solve --unique=raw` of a puzzle file: its count. */
function solveCount(file) {
  const out = execFileSync(path.join(SRCDIR, 'tessera'), ['solve', '-q', '--json', '--unique=raw', file], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()).solutions;
}

/** A puzzle's colours, comparable: each board cell's, each piece's cells', the palette, the pairs. */
function colours(pz) {
  const k = (c) => `${c[0]},${c[1]},${c[2] || 0}`;
  const board = {};
  pz.board.cells.forEach((c, i) => { board[k(c)] = pz.board.colors?.[i] || 0; });
  const pieces = {};
  for (const p of pz.pieces) {
    pieces[p.name] = {};
    p.cells.forEach((c, i) => { pieces[p.name][k(c)] = p.colors?.[i] || 0; });
  }
  return { board, pieces, palette: pz.colors?.palette || null, allow: pz.colors?.allow || [] };
}

const kept = (page) => page.evaluate(() => JSON.parse(localStorage.getItem('tessera.designer')).puzzle);
/** Each board cell's data-color ('' for neutral), by "x,y". */
const boardColours = (page) => page.locator('svg[data-testid=design-layer] .dcell:not([data-state=empty])').evaluateAll((els) =>
  Object.fromEntries(els.map((e) => [`${e.dataset.x},${e.dataset.y}`, e.dataset.color || ''])));


test('a coloured puzzle opened, drawn, downloaded unchanged, painted, its pairs edited and submitted', { timeout: T(120) }, withPage(async (page, { context }) => {
  assert.equal(solveCount(FILE), 4, 'tessera solve counts 4 (raw), as by hand');
  await gotoRoute(page, '#/designer');
  await page.locator('[data-testid=design-upload]').setInputFiles(FILE);
  const result = page.locator('[data-testid=design-result]');
  await eventually('opened, the colours said', async () =>
    (await result.textContent()) === 'Opened coloured-4x1.json: 2 colours, 1 allowed pair.');
  assert.doesNotMatch(await page.content(), /without its colours/);

  // drawn: the board's cells, the dots in the palette's colours, the pieces' cells
  assert.deepEqual(await boardColours(page), { '0,0': '1', '1,0': '', '2,0': '', '3,0': '1' });
  const dots = page.locator('svg[data-testid=design-layer] circle.cell-mark');
  assert.equal(await dots.count(), 2);
  assert.deepEqual(await dots.evaluateAll((els) => els.map((e) => e.getAttribute('fill'))), ['#ff0000', '#ff0000'], 'the palette\'s red');
  assert.match(await page.locator('svg[data-testid=design-layer] rect[data-x="0"][data-y="0"] title').textContent(), /colour 1, required/);
  const piece = (name) => page.locator(`[data-testid=design-piece][data-name=${name}]`);
  assert.equal(await piece('A').getAttribute('data-colors'), '1,0');
  assert.equal(await piece('B').getAttribute('data-colors'), '2,0');
  assert.deepEqual(await piece('B').locator('circle.cell-mark').evaluateAll((els) => els.map((e) => [e.dataset.color, e.getAttribute('fill')])), [['2', '#0000ff']]);
  assert.deepEqual(await page.locator('[data-testid=pair-row]').evaluateAll((els) => els.map((e) => `${e.dataset.piece}>${e.dataset.board}`)), ['1>1']);
  await shot(page, 'colours-designer-opened');

  // Download JSON, nothing changed: the same colours, palette and pairs
  const dl = await clickDownload(page, page.locator('[data-testid=design-download]'));
  await keepDownload(dl, 'colours-roundtrip.json');
  const back = JSON.parse((await downloadBytes(dl)).toString('utf8'));
  assert.deepEqual(colours(back), colours(PUZZLE), 'the download keeps every colour, the palette and the pairs');
  assert.deepEqual(colours(await kept(page)), colours(PUZZLE), 'so does the copy kept in the browser');

  // submitted as it is: the count of tessera solve
  await page.locator('select[data-testid=design-unique]').selectOption('raw');
  const first = await submitDesign(page, 4);
  log(`job ${first}: 4 solutions`);

  // back in the designer (restored from the browser's copy): colours still there
  await gotoRoute(page, '#/designer');
  await eventually('restored with its colours', async () => (await boardColours(page))['3,0'] === '1');
  // the colour brush: swatch 2 on cell (1, 0), and again back to neutral
  await page.locator('[data-testid=color-swatch][data-color="2"]').click();
  assert.equal(await page.locator('[data-testid=brush-color]').getAttribute('aria-pressed'), 'true', 'a swatch chooses the colour brush');
  const cell = page.locator('svg[data-testid=design-layer] rect[data-x="1"][data-y="0"]');
  await cell.click();
  await eventually('cell (1, 0) painted 2', async () => (await boardColours(page))['1,0'] === '2');
  assert.equal((await boardColours(page))['0,0'], '1');
  assert.equal(await page.locator('svg[data-testid=design-layer] rect[data-x="1"][data-y="0"]').getAttribute('data-state'), 'req', 'still required');
  assert.deepEqual((await kept(page)).board.colors, [1, 2, 0, 1]);
  await shot(page, 'colours-designer-painted');
  await page.locator('svg[data-testid=design-layer] rect[data-x="1"][data-y="0"]').click();
  await eventually('cell (1, 0) neutral again', async () => (await boardColours(page))['1,0'] === '');

  // the pairs: 2 -> 1 added and removed, 1 -> 1 removed and added back
  const pairs = () => page.locator('[data-testid=pair-row]').evaluateAll((els) => els.map((e) => `${e.dataset.piece}>${e.dataset.board}`));
  await page.locator('[data-testid=pair-piece]').fill('2');
  await page.locator('[data-testid=pair-board]').fill('1');
  await page.locator('[data-testid=pair-add]').click();
  await eventually('2 -> 1 added', async () => JSON.stringify(await pairs()) === '["1>1","2>1"]');
  assert.deepEqual((await kept(page)).colors.allow, [{ piece: 1, board: 1 }, { piece: 2, board: 1 }]);
  await shot(page, 'colours-designer-pairs');
  await page.locator('[data-testid=pair-row][data-piece="2"] [data-testid=pair-remove]').click();
  await page.locator('[data-testid=pair-row][data-piece="1"] [data-testid=pair-remove]').click();
  await eventually('no pairs', async () => (await pairs()).length === 0);
  assert.equal((await kept(page)).colors.allow, undefined, 'no pairs written');
  assert.deepEqual((await kept(page)).colors.palette, PUZZLE.colors.palette, 'the palette stays');
  await page.locator('[data-testid=pair-piece]').fill('1');
  await page.locator('[data-testid=pair-board]').fill('1');
  await page.locator('[data-testid=pair-add]').click();
  await eventually('1 -> 1 back', async () => JSON.stringify(await pairs()) === '["1>1"]');

  // the piece editor: A opened, its second cell painted 2, saved
  await piece('A').locator('[data-testid=piece-edit]').click();
  const ed = page.locator('[data-testid=piece-editor]');
  await ed.locator('[data-testid=edit-swatch][data-color="2"]').click();
  assert.equal(await ed.locator('[data-testid=edit-brush-colour]').getAttribute('aria-pressed'), 'true');
  assert.equal(await ed.locator('.custom-cell[data-color="1"]').count(), 1, 'the editor shows A\'s colour 1');
  await ed.locator('[aria-label="cell 1, 0"]').click();
  await eventually('the editor\'s cell (1, 0) painted 2', async () => (await ed.locator('.custom-cell[data-color="2"] .cell-dot').count()) === 1);
  await ed.locator('[data-testid=edit-turn]').click(); // colours turn with the piece
  assert.equal(await ed.locator('.custom-cell[data-color]').count(), 2, 'both colours kept through a turn');
  await shot(page, 'colours-piece-editor');
  await ed.locator('[data-testid=custom-add]').click();
  await eventually('A saved with colours 1, 2', async () => {
    const a = (await kept(page)).pieces.find((p) => p.name === 'A');
    return JSON.stringify(colours({ board: { cells: [] }, pieces: [a] }).pieces.A) === JSON.stringify({ '0,0,0': 1, '0,1,0': 2 });
  });
  assert.deepEqual(await piece('A').locator('circle.cell-mark').evaluateAll((els) => els.map((e) => e.dataset.color).sort()), ['1', '2']);

  // the design as the daemon gets it: tessera solve counts it, and so does the job
  const dl2 = await clickDownload(page, page.locator('[data-testid=design-download]'));
  const file2 = await keepDownload(dl2, 'colours-edited.json');
  const edited = JSON.parse(fs.readFileSync(file2, 'utf8'));
  assert.deepEqual(edited.colors, { palette: PUZZLE.colors.palette, allow: [{ piece: 1, board: 1 }] });
  assert.equal(solveCount(file2), 2, 'tessera solve counts 2, as by hand');
  await page.locator('select[data-testid=design-unique]').selectOption('raw');
  const id = await submitDesign(page, 2);

  // the job page: each coloured cell of a solution carries a dot of its colour
  const svg = page.locator('svg[data-testid=solution-svg]');
  await eventually('the solution drawn with colour marks', async () => (await svg.locator('circle.cell-mark').count()) === 3);
  const marks = await svg.locator('g[data-piece]').evaluateAll((gs) => Object.fromEntries(gs.map((g) =>
    [g.dataset.piece, [...g.querySelectorAll('circle.cell-mark')].map((c) => `${c.dataset.color}${c.getAttribute('fill')}`).sort()])));
  assert.deepEqual(marks, { A: ['1#ff0000', '2#0000ff'], B: ['2#0000ff'] });
  await shot(page, 'colours-job-solution');

  // Open in designer: the colours come along
  await clearReady(page);
  await page.locator('[data-testid=open-designer]').click();
  await waitReady(page, 'the designer');
  await eventually('the job\'s puzzle opened with its colours', async () =>
    (await result.textContent()) === `Opened the puzzle of job ${id}: 2 colours, 1 allowed pair.`);
  assert.deepEqual(colours(await kept(page)), colours(edited));

  // Save as BurrTools, opened back: the same colours
  const bt = await clickDownload(page, page.locator('[data-testid=design-save-burrtools]'));
  const bytes = await downloadBytes(bt);
  await page.locator('[data-testid=design-upload]').setInputFiles({ name: 'coloured.xmpuzzle', mimeType: 'application/gzip', buffer: bytes });
  await eventually('the BurrTools file opened back', async () => /^Opened coloured\.xmpuzzle: 2 colours, 1 allowed pair\.$/.test(await result.textContent()));
  const fromBt = colours(await kept(page));
  assert.deepEqual(fromBt.board, colours(edited).board);
  assert.deepEqual(fromBt.palette, PUZZLE.colors.palette);
  assert.deepEqual(fromBt.allow, [{ piece: 1, board: 1 }]);
  assert.deepEqual(Object.values(fromBt.pieces).map((p) => Object.values(p).sort()), [[1, 2], [0, 2]]);
  await checkPhone(page, 'colours-designer-phone');
  void context;
}));

test('colours on hexagons and in 3D: the board\'s polygons and layers, the thumbnails', { timeout: T(60) }, withPage(async (page) => {
  await gotoRoute(page, '#/designer');
  const upload = page.locator('[data-testid=design-upload]');
  const result = page.locator('[data-testid=design-result]');
  const hex = {
    lattice: 'hexagonal', name: 'Coloured hexagons',
    board: { cells: [[0, 0], [1, 0], [2, 0], [0, 1]], colors: [3, 0, 0, 5] },
    pieces: [{ name: 'I', cells: [[0, 0], [1, 0]], colors: [3, 0] }, { name: 'J', cells: [[0, 0], [0, 1]], colors: [0, 5] }],
    colors: { allow: [{ piece: 3, board: 3 }, { piece: 5, board: 5 }] },
  };
  await upload.setInputFiles({ name: 'hex.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(hex)) });
  await eventually('the hexagons opened', async () => (await result.textContent()) === 'Opened hex.json: 2 colours, 2 allowed pairs.');
  const polys = await page.locator('svg[data-testid=design-layer][data-lattice=hexagonal] polygon[data-color]').evaluateAll((els) =>
    els.map((e) => `${e.dataset.x},${e.dataset.y}:${e.dataset.color}`).sort());
  assert.deepEqual(polys, ['0,0:3', '0,1:5']);
  assert.equal(await page.locator('[data-testid=design-piece][data-name=J] circle.cell-mark[data-color="5"]').count(), 1);
  const saved = await page.evaluate(() => JSON.parse(localStorage.getItem('tessera.designer')).puzzle);
  assert.deepEqual(colours(saved), colours(hex), 'kept as opened (hexagons as [x, y])');
  await shot(page, 'colours-designer-hexagons');

  const cube = {
    name: 'Coloured layers',
    board: { cells: [[0, 0, 0], [1, 0, 0], [0, 0, 1], [1, 0, 1]], colors: [0, 7, 7, 0] },
    pieces: [{ name: 'L', cells: [[0, 0, 0], [1, 0, 0], [0, 0, 1]], colors: [0, 7, 0] }, { name: 'M', cells: [[0, 0, 0]], colors: [7] }],
    colors: { allow: [{ piece: 7, board: 7 }] },
  };
  await upload.setInputFiles({ name: 'cube.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(cube)) });
  await eventually('the layers opened', async () => (await result.textContent()) === 'Opened cube.json: 1 colour, 1 allowed pair.');
  const layered = await page.locator('svg[data-testid=design-layer] rect[data-color]').evaluateAll((els) =>
    els.map((e) => `${e.dataset.x},${e.dataset.y},${e.dataset.z}:${e.dataset.color}`).sort());
  assert.deepEqual(layered, ['0,0,1:7', '1,0,0:7']);
  // a coloured solid piece is drawn in layers, each coloured cell with its dot
  assert.equal(await page.locator('[data-testid=design-piece][data-name=L] circle.cell-mark[data-color="7"]').count(), 1);
  const saved3 = await page.evaluate(() => JSON.parse(localStorage.getItem('tessera.designer')).puzzle);
  assert.deepEqual(colours(saved3), colours(cube));
  await shot(page, 'colours-designer-layers');
}));
