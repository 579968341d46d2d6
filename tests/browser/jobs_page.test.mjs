// The jobs page: one row per job with its state badge, progress and
// solutions; the action buttons enabled exactly as the state allows; cancel
// a running job from its row, then delete it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  setup, teardown, withPage, gotoRoute, waitReady, clearReady, shot, checkPhone, eventually,
  api, submitJob, getJob, waitJob, readPuzzle, readJobWidgets, checkButtons, num, T, log,
} from './lib.mjs';

before(setup, { timeout: T(60) });
after(teardown, { timeout: T(60) });

const LONG = 'onesided-pentominoes-5x18.json'; // minutes of search: stays running

test('jobs page: states, buttons, cancel and delete from the row', { timeout: T(100) }, withPage(async (page) => {
  // one job in each state (the daemon has 2 threads)
  const done = await submitJob(readPuzzle('l-trominoes-4x3.json'));
  await waitJob(done.id, (j) => j.state === 'completed', { what: `job ${done.id} completed` });
  const running = await submitJob({ puzzle: readPuzzle(LONG), options: { priority: 0 } });
  const queued = await submitJob({ puzzle: readPuzzle(LONG), options: { priority: -50 } });
  const paused = await submitJob({ puzzle: readPuzzle(LONG), options: { priority: -50 } });
  const cancelled = await submitJob({ puzzle: readPuzzle(LONG), options: { priority: -50 } });
  assert.equal((await api('POST', `/api/v1/jobs/${paused.id}/pause`)).status, 200, 'pause via API');
  assert.equal((await api('POST', `/api/v1/jobs/${cancelled.id}/cancel`)).status, 200, 'cancel via API');
  await waitJob(running.id, (j) => j.state === 'running', { what: `job ${running.id} running` });
  const want = { [done.id]: 'completed', [running.id]: 'running', [queued.id]: 'queued', [paused.id]: 'paused', [cancelled.id]: 'cancelled' };
  for (const [id, st] of Object.entries(want)) {
    const j = await getJob(id);
    assert.equal(j.state, st, `API: job ${id} is ${st} (setup)`);
  }

  await gotoRoute(page, '#/');
  for (const [id, st] of Object.entries(want)) {
    const row = page.locator(`tr[data-testid=job-row][data-job-id="${id}"]`);
    await row.waitFor({ state: 'visible' });
    const w = await eventually(`row ${id} shows ${st}`, async () => {
      const v = await readJobWidgets(row);
      assert.equal(v.state, st, `row ${id} job-state: ${JSON.stringify(v)}`);
      return v;
    });
    assert.equal(w.progressTag, 'progress', `row ${id}: job-progress is a <progress>`);
    assert.equal(w.progressMax, '1', `row ${id}: job-progress max="1"`);
    assert.ok(w.progress >= 0 && w.progress <= 1, `row ${id}: progress in [0, 1] (${w.progress})`);
    assert.ok(Number.isFinite(num(w.solutions)), `row ${id}: job-solutions is a number (${JSON.stringify(w.solutions)})`);
    checkButtons(w, st, `row ${id} (${st})`);
    const name = row.locator('[data-testid=job-name]');
    assert.equal((await name.textContent()).trim() !== '', true, `row ${id}: job-name not empty`);
    const href = await name.evaluate((a) => a.getAttribute('href') || (a.querySelector('a') && a.querySelector('a').getAttribute('href')));
    assert.ok(href && href.endsWith(`#/jobs/${id}`), `row ${id}: job-name links to #/jobs/${id} (href ${href})`);
  }
  const wDone = await readJobWidgets(page.locator(`tr[data-testid=job-row][data-job-id="${done.id}"]`));
  assert.equal(wDone.progress, 1, 'completed row: progress 1');
  assert.equal(num(wDone.solutions), (await getJob(done.id)).solutions, 'completed row: solutions as the API says');
  // rows come in some order, one per job
  const rowIds = await page.locator('tr[data-testid=job-row]').evaluateAll((rs) => rs.map((r) => Number(r.dataset.jobId)));
  assert.equal(new Set(rowIds).size, rowIds.length, `one row per job (${rowIds})`);
  await shot(page, 'jobs-page-all-states');
  await checkPhone(page, 'jobs-page-all-states-phone');

  // cancel the running job from its row
  const row = page.locator(`tr[data-testid=job-row][data-job-id="${running.id}"]`);
  await row.locator('[data-testid=cancel]').click();
  const wc = await eventually(`row ${running.id} shows cancelled`, async () => {
    const v = await readJobWidgets(row);
    assert.equal(v.state, 'cancelled', `row job-state: ${JSON.stringify(v)}`);
    return v;
  });
  assert.equal((await getJob(running.id)).state, 'cancelled', 'API: cancelled');
  await eventually(`row ${running.id} buttons follow the cancelled state`, async () => {
    checkButtons(await readJobWidgets(row), 'cancelled', `row ${running.id} (cancelled)`);
    return true;
  });
  log(`cancelled row: ${JSON.stringify(wc)}`);
  await shot(page, 'jobs-page-cancelled');

  // delete it
  await row.locator('[data-testid=delete]').click();
  await row.waitFor({ state: 'detached', timeout: T(30) });
  const gone = await api('GET', `/api/v1/jobs/${running.id}`);
  assert.equal(gone.status, 404, `API: job ${running.id} is gone (${gone.text})`);
  // the other rows stay
  for (const id of [done.id, queued.id, paused.id, cancelled.id]) {
    assert.equal(await page.locator(`tr[data-testid=job-row][data-job-id="${id}"]`).count(), 1, `row ${id} still there`);
  }
  await shot(page, 'jobs-page-deleted');

  // the name links to the job page
  await clearReady(page);
  await page.locator(`tr[data-testid=job-row][data-job-id="${done.id}"] [data-testid=job-name]`).click();
  await eventually(`job-name leads to #/jobs/${done.id}`, async () => (await page.evaluate(() => location.hash)) === `#/jobs/${done.id}`);
  await waitReady(page, `job page ${done.id}`);
  await page.locator('[data-testid=job-header] [data-testid=job-state]').waitFor({ state: 'visible' });
  assert.equal((await page.locator('[data-testid=job-header] [data-testid=job-state]').textContent()).trim(), 'completed');

  // tidy: the other live jobs
  for (const id of [queued.id, paused.id]) await api('POST', `/api/v1/jobs/${id}/cancel`);
}));
