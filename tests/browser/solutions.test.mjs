// Solutions of completed jobs: the 2D drawing of pentominoes 6x10 (pieces,
// paging, SVG/PNG/JSON-lines exports) and the 3D view of the Soma cube
// (layers, a canvas that draws, turns when dragged and explodes), the stats
// chart and the workers table; desktop and phone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  setup, teardown, withPage, gotoRoute, shot, checkPhone, eventually, submitJob, waitJob,
  readPuzzle, parseIndex, canvasImage, clickDownload, downloadBytes, keepDownload, T, log,
} from './lib.mjs';

before(setup, { timeout: T(60) });
after(teardown, { timeout: T(60) });

const PENTOMINOES = ['F', 'I', 'L', 'N', 'P', 'T', 'U', 'V', 'W', 'X', 'Y', 'Z'];
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

async function completedJob(file) {
  const job = await submitJob({ puzzle: readPuzzle(file), options: { unique: 'rotations' } });
  const done = await waitJob(job.id);
  assert.equal(done.state, 'completed', `${file}: job ${job.id} completed`);
  assert.equal(done.solutions, readPuzzle(file).expected.rotations, `${file}: the published count`);
  return done;
}

async function indexOf(page) {
  return parseIndex(await page.locator('[data-testid=solution-index]').textContent());
}

async function checkStatsAndWorkers(page) {
  const chart = page.locator('svg[data-testid=stats-chart]');
  await chart.waitFor({ state: 'visible' });
  await eventually('the stats chart has bars', async () => {
    const n = await chart.locator('rect, path, polygon, line').count();
    assert.ok(n >= 2, `stats-chart has bars (rect/path/polygon/line elements: ${n})`);
    return true;
  });
  await page.locator('table[data-testid=workers]').waitFor({ state: 'attached' });
}

test('2D solution of pentominoes 6x10: pieces, paging, exports', { timeout: T(100) }, withPage(async (page) => {
  const job = await completedJob('pentominoes-6x10.json');
  await gotoRoute(page, `#/jobs/${job.id}`);
  await page.locator('[data-testid=solution-view]').waitFor({ state: 'visible' });
  const svg = page.locator('svg[data-testid=solution-svg]');
  const pieces = svg.locator('g[data-piece]');
  await eventually('the solution svg has 12 pieces', async () => (await pieces.count()) === 12, { timeout: T(30) });
  const names = (await pieces.evaluateAll((gs) => gs.map((g) => g.getAttribute('data-piece')))).sort();
  assert.deepEqual(names, PENTOMINOES, 'one g[data-piece] per pentomino');
  const empty = await pieces.evaluateAll((gs) => gs.filter((g) => g.children.length === 0).map((g) => g.dataset.piece));
  assert.deepEqual(empty, [], 'every piece group draws something');

  await eventually('solution-index says 1 / 2339', async () => {
    assert.deepEqual(await indexOf(page), [1, 2339], `solution-index: ${await page.locator('[data-testid=solution-index]').textContent()}`);
    return true;
  });
  await checkStatsAndWorkers(page);
  await shot(page, 'solution-2d-6x10-desktop');

  // paging
  const drawing1 = await svg.innerHTML();
  await page.locator('[data-testid=next-solution]').click();
  await eventually('next: index 2 and another drawing', async () => {
    assert.deepEqual(await indexOf(page), [2, 2339], 'index after next');
    assert.equal(await pieces.count(), 12, '12 pieces in solution 2');
    assert.ok(await svg.innerHTML() !== drawing1, 'solution 2 is drawn differently');
    return true;
  });
  await shot(page, 'solution-2d-6x10-second');
  await page.locator('[data-testid=prev-solution]').click();
  await eventually('prev: index 1 and the first drawing again', async () => {
    assert.deepEqual(await indexOf(page), [1, 2339], 'index after prev');
    assert.ok(await svg.innerHTML() === drawing1, 'solution 1 drawn as before');
    return true;
  });

  // exports
  const dSvg = await clickDownload(page, page.locator('[data-testid=export-svg]'));
  const svgText = (await downloadBytes(dSvg)).toString('utf8');
  await keepDownload(dSvg, 'export-6x10-solution.svg');
  log(`export-svg: ${dSvg.suggestedFilename()} ${svgText.length} bytes`);
  assert.match(dSvg.suggestedFilename(), /\.svg$/i, 'the SVG export is named *.svg');
  assert.ok(svgText.startsWith('<svg') || svgText.startsWith('<?xml'), `the SVG export starts with <svg or <?xml: ${JSON.stringify(svgText.slice(0, 40))}`);
  assert.ok(svgText.includes('</svg>'), 'the SVG export is a whole svg');

  const dPng = await clickDownload(page, page.locator('[data-testid=export-png]'));
  const png = await downloadBytes(dPng);
  await keepDownload(dPng, 'export-6x10-solution.png');
  log(`export-png: ${dPng.suggestedFilename()} ${png.length} bytes`);
  assert.match(dPng.suggestedFilename(), /\.png$/i, 'the PNG export is named *.png');
  assert.ok(png.length > 100 && png.subarray(0, 8).equals(PNG_MAGIC), `the PNG export has the PNG signature (${png.subarray(0, 8).toString('hex')})`);

  const dAll = await clickDownload(page, page.locator('[data-testid=download-jsonl]'));
  const all = (await downloadBytes(dAll)).toString('utf8');
  await keepDownload(dAll, 'export-6x10-solutions.jsonl');
  const lines = all.split('\n').filter((l) => l.trim() !== '');
  log(`download-jsonl: ${dAll.suggestedFilename()} ${lines.length} lines`);
  assert.equal(lines.length, job.solutions, 'one JSON line per solution');
  lines.forEach((l, i) => { assert.doesNotThrow(() => JSON.parse(l), `line ${i + 1} is JSON: ${l.slice(0, 80)}`); });

  await checkPhone(page, 'solution-2d-6x10-phone');
}));

test('3D solution of the soma cube: layers, canvas, drag, explode', { timeout: T(100) }, withPage(async (page) => {
  const job = await completedJob('soma-cube.json');
  await gotoRoute(page, `#/jobs/${job.id}`);
  await page.locator('[data-testid=solution-view]').waitFor({ state: 'visible' });
  const layers = page.locator('[data-testid=solution-layers] [data-testid=layer]');
  await eventually('3 layers (one per z)', async () => (await layers.count()) === 3, { timeout: T(30) });
  await eventually('solution-index says 1 / 480', async () => {
    assert.deepEqual(await indexOf(page), [1, 480], `solution-index: ${await page.locator('[data-testid=solution-index]').textContent()}`);
    return true;
  });

  const canvas = page.locator('canvas[data-testid=solution-3d]');
  await canvas.waitFor({ state: 'visible' });
  const img0 = await eventually('the 3D canvas draws something (not one colour)', async () => {
    const im = await canvasImage(canvas);
    assert.ok(im.colours > 1, `canvas ${im.width}x${im.height} has ${im.colours} colour(s)`);
    return im;
  }, { timeout: T(30) });
  log(`canvas ${img0.width}x${img0.height}, ${img0.colours}+ colours`);
  await checkStatsAndWorkers(page);
  await shot(page, 'solution-3d-soma-desktop');

  // drag to turn
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const cx = box.x + box.width / 2, cy = box.y + box.height / 2;
  await page.mouse.move(cx, cy);
  await page.mouse.down();
  await page.mouse.move(cx + Math.min(120, box.width / 3), cy + Math.min(40, box.height / 6), { steps: 12 });
  await page.mouse.up();
  const img1 = await eventually('dragging on the canvas turns the view', async () => {
    const im = await canvasImage(canvas);
    assert.ok(im.url !== img0.url, 'the canvas image changed after a drag');
    assert.ok(im.colours > 1, 'still draws');
    return im;
  }, { timeout: T(15) });
  await shot(page, 'solution-3d-soma-dragged');

  // explode
  const explode = page.locator('input[type=range][data-testid=explode]');
  const { min, max, value } = await explode.evaluate((e) => ({ min: e.min, max: e.max, value: e.value }));
  const target = Number(value) >= Number(max || 100) ? (min || '0') : (max || '100');
  await explode.fill(String(target));
  await eventually('moving the explode slider changes the image', async () => {
    const im = await canvasImage(canvas);
    assert.ok(im.url !== img1.url, `the canvas image changed after explode ${value} -> ${target}`);
    return true;
  }, { timeout: T(15) });
  await shot(page, 'solution-3d-soma-exploded');

  // next solution: other layers
  const layers1 = await page.locator('[data-testid=solution-layers]').innerHTML();
  await page.locator('[data-testid=next-solution]').click();
  await eventually('next: index 2 and other layers', async () => {
    assert.deepEqual(await indexOf(page), [2, 480], 'index after next');
    assert.equal(await layers.count(), 3, '3 layers');
    assert.ok(await page.locator('[data-testid=solution-layers]').innerHTML() !== layers1, 'solution 2 layers differ');
    return true;
  });

  const d3 = await clickDownload(page, page.locator('[data-testid=export-3d]'));
  const b3 = await downloadBytes(d3);
  await keepDownload(d3, `export-soma-3d-${d3.suggestedFilename()}`);
  log(`export-3d: ${d3.suggestedFilename()} ${b3.length} bytes`);
  assert.ok(b3.length > 0, 'the 3D export is not empty');

  const dAll = await clickDownload(page, page.locator('[data-testid=download-jsonl]'));
  const lines = (await downloadBytes(dAll)).toString('utf8').split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.length, job.solutions, 'one JSON line per solution (480)');

  await checkPhone(page, 'solution-3d-soma-phone');
  // the canvas still draws at phone size
  await page.setViewportSize({ width: 390, height: 844 });
  await eventually('the 3D canvas draws at phone size', async () => (await canvasImage(canvas)).colours > 1, { timeout: T(10) });
  await page.setViewportSize({ width: 1280, height: 900 });
}));
