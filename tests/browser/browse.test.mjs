// Browsing the solutions of a finished job: a deep link opens solution 5;
// the jump field; Prev/Next carry the address; the gallery pages through
// thumbnails a page at a time and opens one; two solutions compared side by
// side with the pieces that differ in colour.  Screenshots of the job page
// of the 6x10 and of the 35-hexomino parallelogram at 1280x900 and 390x844.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  setup, teardown, withPage, gotoRoute, waitReady, shot, checkPhone, eventually, api,
  submitJob, waitJob, readPuzzle, parseIndex, T, log, PHONE, DESKTOP,
} from './lib.mjs';

before(setup, { timeout: T(60) });
after(teardown, { timeout: T(60) });

const indexOf = async (page) => parseIndex(await page.locator('[data-testid=solution-index]').textContent());
const hashOf = (page) => page.evaluate(() => location.hash);

/** The API's solution n of job id (seq n). */
async function apiSolution(id, n) {
  const r = await api('GET', `/api/v1/jobs/${id}/solutions?after=${n - 1}&limit=1`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.solutions[0].seq, n, `the API's solution ${n}`);
  return r.json.solutions[0];
}

/** The pieces drawn in the solution svg: name → sorted cells "x,y". */
async function drawnCells(page) {
  return page.locator('svg[data-testid=solution-svg]').evaluate((svg) => {
    const vb = svg.viewBox.baseVal;
    const rects = [...svg.querySelectorAll('g[data-piece] > rect:not([fill])')];
    const cell = Number(rects[0].getAttribute('width'));
    const out = {};
    for (const g of svg.querySelectorAll('g[data-piece]')) {
      out[g.dataset.piece] = [...g.querySelectorAll(':scope > rect:not([fill])')]
        .map((r) => [Math.round((Number(r.getAttribute('x')) - 3) / cell), Math.round((Number(r.getAttribute('y')) - 3) / cell)]);
    }
    return { out, width: vb.width };
  });
}

/** The cells of a solution relative to its lowest x and y, as drawn. */
function normal(sol) {
  const xs = sol.pieces.flatMap((p) => p.cells.map((c) => c[0]));
  const ys = sol.pieces.flatMap((p) => p.cells.map((c) => c[1]));
  const x0 = Math.min(...xs), y0 = Math.min(...ys);
  const out = {};
  for (const p of sol.pieces) out[p.name] = p.cells.map((c) => `${c[0] - x0},${c[1] - y0}`).sort();
  return out;
}

test('a deep link opens solution 5, the jump field, Prev/Next keep the address', { timeout: T(100) }, withPage(async (page) => {
  const job = await submitJob(readPuzzle('pentominoes-6x10.json'));
  const done = await waitJob(job.id);
  assert.equal(done.solutions, 2339, 'the 6x10 has 2339 solutions');

  // a fresh page straight on solution 5
  await gotoRoute(page, `#/jobs/${job.id}/solutions/5`);
  await eventually('solution-index says 5 / 2339', async () => {
    assert.deepEqual(await indexOf(page), [5, 2339]);
    return true;
  });
  const want5 = normal(await apiSolution(job.id, 5));
  const got5 = await drawnCells(page);
  const drawn = Object.fromEntries(Object.entries(got5.out).map(([k, v]) => [k, v.map((c) => c.join(',')).sort()]));
  assert.deepEqual(drawn, want5, 'the drawing is the API\'s solution 5, cell for cell');
  assert.equal(await page.locator('[data-testid=jump-input]').inputValue(), '5', 'the jump field shows 5');
  // the drawing takes the card's width, or the height the window leaves
  // it under the job's header (issue 25: it ran below the fold at 1280x900)
  const widths = await page.evaluate(() => {
    const r = document.querySelector('svg[data-testid=solution-svg]').getBoundingClientRect();
    return { svg: r.width, height: r.height, card: document.querySelector('[data-testid=solutions-card]').getBoundingClientRect().width,
      room: Math.max(240, window.innerHeight - 500) };
  });
  assert.ok(widths.svg > widths.card * 0.85 || widths.height >= widths.room - 2,
    `the 2D drawing uses the card's width or the window's height (${JSON.stringify(widths)})`);
  // the solutions come before the statistics
  const order = await page.evaluate(() => {
    const a = document.querySelector('[data-testid=solutions-card]');
    const b = document.querySelector('[data-testid=stats-section]');
    return a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING;
  });
  assert.ok(order, 'the solutions card comes before the statistics');
  await shot(page, 'browse-6x10-solution-5');

  // Next: solution 6, and the address follows (no new history entry)
  const depth = await page.evaluate(() => history.length);
  await page.locator('[data-testid=next-solution]').click();
  await eventually('next: 6 / 2339 and #/…/solutions/6', async () => {
    assert.deepEqual(await indexOf(page), [6, 2339]);
    assert.equal(await hashOf(page), `#/jobs/${job.id}/solutions/6`);
    return true;
  });
  assert.equal(await page.evaluate(() => history.length), depth, 'Prev/Next replace the address, they do not stack history');
  await page.locator('[data-testid=prev-solution]').click();
  await page.locator('[data-testid=prev-solution]').click();
  await eventually('prev twice: 4 / 2339 and #/…/solutions/4', async () => {
    assert.deepEqual(await indexOf(page), [4, 2339]);
    assert.equal(await hashOf(page), `#/jobs/${job.id}/solutions/4`);
    return true;
  });

  // the jump field: solution 1234 (on page 25 of the API's pages of 50)
  await page.locator('[data-testid=jump-input]').fill('1234');
  await page.locator('[data-testid=jump-go]').click();
  await eventually('jump: 1,234 / 2339 and #/…/solutions/1234', async () => {
    assert.deepEqual(await indexOf(page), [1234, 2339]);
    assert.equal(await hashOf(page), `#/jobs/${job.id}/solutions/1234`);
    return true;
  });
  const want1234 = normal(await apiSolution(job.id, 1234));
  const got1234 = await drawnCells(page);
  assert.deepEqual(Object.fromEntries(Object.entries(got1234.out).map(([k, v]) => [k, v.map((c) => c.join(',')).sort()])), want1234,
    'the drawing after the jump is the API\'s solution 1234');
  // past the end: said so, nothing drawn
  await page.locator('[data-testid=jump-input]').fill('5000');
  await page.locator('[data-testid=jump-input]').press('Enter');
  await eventually('jump past the end says there is none', async () => {
    const t = await page.locator('[data-testid=solution-note]').textContent();
    assert.match(t, /no solution 5,000: this job has 2,339/);
    return true;
  });
  // an address typed in the bar goes there within the page
  await gotoRoute(page, `#/jobs/${job.id}/solutions/2339`);
  await eventually('the last solution by its address', async () => {
    assert.deepEqual(await indexOf(page), [2339, 2339]);
    assert.ok(await page.locator('[data-testid=next-solution]').isDisabled(), 'Next is disabled on the last solution');
    return true;
  });
  await page.setViewportSize(PHONE);
  await page.reload();
  await waitReady(page, 'the job page at phone size');
  await page.locator('svg[data-testid=solution-svg]').waitFor({ state: 'visible' });
  // on a phone the solution is on the first screen
  const top = await page.evaluate(() => {
    window.scrollTo(0, 0);
    const r = document.querySelector('svg[data-testid=solution-svg]').getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, h: window.innerHeight };
  });
  assert.ok(top.bottom <= top.h, `at 390x844 the whole drawing is on the first screen (${JSON.stringify(top)})`);
  await page.setViewportSize(DESKTOP);
  await shot(page, 'job-page-6x10-desktop', { firstScreen: true });
  await checkPhone(page, 'job-page-6x10-phone', { firstScreen: true });
}));

test('the gallery pages through thumbnails and opens one; compare two solutions', { timeout: T(100) }, withPage(async (page) => {
  const job = await submitJob({ puzzle: readPuzzle('pentominoes-6x10.json'), options: { limit: 100 } });
  const done = await waitJob(job.id);
  assert.equal(done.solutions, 100, 'a job of 100 solutions');
  const asked = [];
  page.on('request', (r) => { const u = new URL(r.url()); if (u.pathname.endsWith('/solutions')) asked.push(u.search); });

  await gotoRoute(page, `#/jobs/${job.id}`);
  await page.locator('[data-testid=tab-gallery]').click();
  const items = page.locator('[data-testid=gallery-item]');
  await eventually('the gallery shows 24 thumbnails, 1 to 24', async () => {
    const ns = await items.evaluateAll((bs) => bs.map((b) => Number(b.dataset.n)));
    assert.deepEqual(ns, Array.from({ length: 24 }, (_, i) => i + 1));
    assert.equal(await hashOf(page), `#/jobs/${job.id}/gallery/1`);
    return true;
  });
  assert.match(await page.locator('[data-testid=gallery-range]').textContent(), /Solutions 1–24 of 100/);
  // each thumbnail draws its solution's 12 pieces
  const groups = await items.first().locator('g[data-piece]').count();
  assert.equal(groups, 12, 'a thumbnail draws 12 pieces');
  await shot(page, 'browse-gallery-page-1');

  await page.locator('[data-testid=gallery-next]').click();
  await page.locator('[data-testid=gallery-next]').click();
  await eventually('page 3 shows 49 to 72', async () => {
    const ns = await items.evaluateAll((bs) => bs.map((b) => Number(b.dataset.n)));
    assert.deepEqual(ns, Array.from({ length: 24 }, (_, i) => i + 49));
    assert.equal(await hashOf(page), `#/jobs/${job.id}/gallery/3`);
    return true;
  });
  // pages are read a page at a time: never the whole job
  const pageReads = asked.filter((q) => /limit=24/.test(q));
  assert.ok(pageReads.some((q) => /after=48&/.test(q)), `page 3 is read with after=48 (${asked})`);
  assert.ok(asked.every((q) => !/all=1/.test(q) && Number((q.match(/limit=(\d+)/) || [0, 0])[1]) <= 50), `no read of more than a page (${asked})`);
  // the last page holds the rest
  await gotoRoute(page, `#/jobs/${job.id}/gallery/5`);
  await eventually('page 5 shows 97 to 100, Next disabled', async () => {
    const ns = await items.evaluateAll((bs) => bs.map((b) => Number(b.dataset.n)));
    assert.deepEqual(ns, [97, 98, 99, 100]);
    assert.ok(await page.locator('[data-testid=gallery-next]').isDisabled());
    return true;
  });
  // clicking a thumbnail opens it
  await items.nth(2).click();
  await eventually('the thumbnail opens solution 99', async () => {
    assert.deepEqual(await indexOf(page), [99, 100]);
    assert.equal(await hashOf(page), `#/jobs/${job.id}/solutions/99`);
    assert.ok(await page.locator('[data-testid=panel-solution]').isVisible(), 'the single view is shown');
    return true;
  });
  await page.goBack();
  await eventually('Back returns to the gallery page', async () => {
    assert.equal(await hashOf(page), `#/jobs/${job.id}/gallery/5`);
    assert.ok(await page.locator('[data-testid=panel-gallery]').isVisible());
    return true;
  });
  await checkPhone(page, 'browse-gallery-phone');

  // compare solutions 1 and 2: the pieces placed alike are faded
  const [s1, s2] = [await apiSolution(job.id, 1), await apiSolution(job.id, 2)];
  const key = (p) => `${p.name}|${p.cells.map((c) => c.join(',')).sort().join(' ')}`;
  const same = new Set(s1.pieces.map(key).filter((k) => s2.pieces.map(key).includes(k)));
  const differ = s1.pieces.filter((p) => !same.has(key(p))).map((p) => p.name).sort();
  assert.ok(differ.length > 0 && differ.length < 12, `solutions 1 and 2 differ in some pieces (${differ})`);
  await gotoRoute(page, `#/jobs/${job.id}/compare/1/2`);
  const left = page.locator('[data-testid=compare-left]');
  const right = page.locator('[data-testid=compare-right]');
  await eventually('both solutions are drawn', async () => (await left.locator('g[data-piece]').count()) === 12 && (await right.locator('g[data-piece]').count()) === 12);
  for (const side of [left, right]) {
    const bright = (await side.locator('g[data-piece]:not([data-dim])').evaluateAll((gs) => gs.map((g) => g.dataset.piece))).sort();
    assert.deepEqual(bright, differ, 'the pieces in colour are exactly those placed differently');
  }
  assert.match(await page.locator('[data-testid=compare-summary]').textContent(), new RegExp(`^${differ.length} of 12 pieces`));
  await shot(page, 'browse-compare-1-2');
  // the form compares others
  await page.locator('[data-testid=compare-b]').fill('100');
  await page.locator('[data-testid=compare-go]').click();
  await eventually('#/…/compare/1/100', async () => (await hashOf(page)) === `#/jobs/${job.id}/compare/1/100`);
  await checkPhone(page, 'browse-compare-phone');
}));

test('the 35 hexominoes: distinct colours, gallery, screenshots', { timeout: T(100) }, withPage(async (page) => {
  const job = await submitJob({ puzzle: readPuzzle('hexominoes-parallelogram-15x14.json'), options: { limit: 30 } });
  const done = await waitJob(job.id);
  assert.equal(done.solutions, 30, '30 solutions found');
  await gotoRoute(page, `#/jobs/${job.id}/solutions/1`);
  const groups = page.locator('svg[data-testid=solution-svg] g[data-piece]');
  await eventually('35 pieces drawn', async () => (await groups.count()) === 35);
  const fills = await groups.evaluateAll((gs) => gs.map((g) => g.getAttribute('fill')));
  assert.equal(new Set(fills).size, 35, `35 pieces, 35 colours (${fills})`);
  await shot(page, 'job-page-hexominoes-desktop', { firstScreen: true });
  await checkPhone(page, 'job-page-hexominoes-phone', { firstScreen: true });
  await page.locator('[data-testid=tab-gallery]').click();
  await eventually('24 thumbnails', async () => (await page.locator('[data-testid=gallery-item]').count()) === 24);
  await shot(page, 'job-page-hexominoes-gallery');
  log(`hexominoes job ${job.id}: ${done.solutions} solutions`);
}));
