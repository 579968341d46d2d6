// The 3D solution view of the Tetris Cube (4x4x4, the hard case): a piece's
// name on hover; hide, show and isolate pieces from the legend (the view and
// the layers follow); the assembly one piece at a time, bottom up; the
// exploded view.  Screenshots of the job page at 1280x900 and 390x844.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  setup, teardown, withPage, gotoRoute, waitReady, shot, checkPhone, eventually, canvasImage,
  submitJob, waitJob, readPuzzle, T, PHONE, DESKTOP,
} from './lib.mjs';

before(setup, { timeout: T(60) });
after(teardown, { timeout: T(60) });

const TETRIS = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L'];

/** Piece names drawn in the layers (each name once). */
const layerPieces = (page) => page.locator('[data-testid=solution-layers] g[data-piece]')
  .evaluateAll((gs) => [...new Set(gs.map((g) => g.dataset.piece))].sort());

test('3D: names on hover, hide and isolate, the assembly stepper, explode', { timeout: T(100) }, withPage(async (page) => {
  const job = await submitJob({ puzzle: readPuzzle('tetris-cube.json'), options: { limit: 20 } });
  const done = await waitJob(job.id);
  assert.equal(done.solutions, 20, 'the Tetris Cube job stopped at its limit of 20');
  await gotoRoute(page, `#/jobs/${job.id}/solutions/3`);
  const canvas = page.locator('canvas[data-testid=solution-3d]');
  await canvas.waitFor({ state: 'visible' });
  await eventually('4 layers with the 12 pieces', async () => {
    assert.equal(await page.locator('[data-testid=solution-layers] [data-testid=layer]').count(), 4);
    assert.deepEqual(await layerPieces(page), TETRIS);
    return true;
  });
  const img0 = await eventually('the canvas draws', async () => {
    const im = await canvasImage(canvas);
    assert.ok(im.colours > 12, `the view shows many colours (${im.colours})`);
    return im;
  });
  await shot(page, 'job-page-tetris-desktop', { firstScreen: true });

  // a piece's name on hover: the centre of the cube is some piece
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const tip = page.locator('[data-testid=piece-tip]');
  const named = await eventually('hovering names a piece', async () => {
    assert.ok(await tip.isVisible(), 'the tip shows');
    const t = (await tip.textContent()).trim();
    assert.ok(TETRIS.includes(t), `the tip names a piece: ${JSON.stringify(t)}`);
    return t;
  });
  await shot(page, `tetris-hover-${named}`);
  await page.mouse.move(box.x + 3, box.y + 3); // the background: no piece
  await eventually('off the cube the tip goes', async () => !(await tip.isVisible()));

  // hide the hovered piece from the legend: gone from the layers, the view changes
  await page.locator(`[data-testid=legend-toggle][data-piece="${named}"]`).click();
  await eventually(`${named} hidden`, async () => {
    assert.deepEqual(await layerPieces(page), TETRIS.filter((n) => n !== named));
    assert.equal(await page.locator(`[data-testid=legend-toggle][data-piece="${named}"]`).getAttribute('aria-pressed'), 'false');
    assert.notEqual((await canvasImage(canvas)).url, img0.url, 'the view changed');
    return true;
  });
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await eventually('the piece under the pointer is another now', async () => {
    const t = (await tip.textContent()).trim();
    assert.ok(!(await tip.isVisible()) || t !== named, `no longer ${named}: ${t}`);
    return true;
  });
  await page.locator(`[data-testid=legend-toggle][data-piece="${named}"]`).click();
  await eventually(`${named} shown again`, async () => {
    assert.deepEqual(await layerPieces(page), TETRIS);
    assert.equal((await canvasImage(canvas)).url, img0.url, 'the same view as before');
    return true;
  });

  // isolate one piece, then show all
  await page.locator('[data-testid=legend-isolate][data-piece="F"]').click();
  await eventually('only F', async () => {
    assert.deepEqual(await layerPieces(page), ['F']);
    const im = await canvasImage(canvas);
    assert.ok(im.colours > 1 && im.url !== img0.url, 'the view draws F alone');
    return true;
  });
  await shot(page, 'tetris-isolate-F');
  await page.locator('[data-testid=legend-all]').click();
  await eventually('all again', async () => { assert.deepEqual(await layerPieces(page), TETRIS); return true; });

  // the assembly, one piece at a time: bottom-up, each step one piece more
  await page.locator('[data-testid=step-start]').click();
  const seen = [];
  for (let k = 1; k <= 12; k++) {
    const label = await eventually(`step ${k}`, async () => {
      const t = await page.locator('[data-testid=step-label]').textContent();
      assert.match(t, new RegExp(`^${k} / 12: [A-L]$`));
      const pieces = await layerPieces(page);
      assert.equal(pieces.length, k, `${k} pieces in the layers (${pieces})`);
      return t;
    });
    const name = label.slice(-1);
    assert.ok(!seen.includes(name), `step ${k} adds a new piece (${name})`);
    seen.push(name);
    assert.deepEqual(await layerPieces(page), [...seen].sort(), `the layers hold the pieces placed so far (${seen})`);
    if (k === 4) await shot(page, 'tetris-assembly-step-4');
    if (k < 12) await page.locator('[data-testid=step-next]').click();
  }
  // the first piece rests on the bottom layer
  const firstOnBottom = await page.locator('[data-testid=solution-layers] [data-testid=layer]').first()
    .locator(`g[data-piece="${seen[0]}"]`).count();
  assert.ok(firstOnBottom > 0, `the first piece (${seen[0]}) lies on z = 0`);
  await page.locator('[data-testid=step-prev]').click();
  await eventually('one back: 11', async () => (await layerPieces(page)).length === 11);
  await page.locator('[data-testid=step-all]').click();
  await eventually('all 12', async () => (await page.locator('[data-testid=step-label]').textContent()) === 'all 12 pieces');

  // exploded: every piece apart
  await page.locator('input[type=range][data-testid=explode]').fill('100');
  await eventually('the exploded view differs', async () => (await canvasImage(canvas)).url !== img0.url);
  await shot(page, 'tetris-exploded');
  await page.locator('input[type=range][data-testid=explode]').fill('0');

  // the phone: the view comes first (a page opened at that size)
  await page.setViewportSize(PHONE);
  await page.reload();
  await waitReady(page, 'the job page at phone size');
  await canvas.waitFor({ state: 'visible' });
  const r = await page.evaluate(() => { window.scrollTo(0, 0); const b = document.querySelector('canvas[data-testid=solution-3d]').getBoundingClientRect(); return { top: b.top, bottom: b.bottom }; });
  assert.ok(r.bottom <= 844, `at 390x844 the 3D view is on the first screen (${JSON.stringify(r)})`);
  await page.setViewportSize(DESKTOP);
  await checkPhone(page, 'job-page-tetris-phone', { firstScreen: true });
}));
