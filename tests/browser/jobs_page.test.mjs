// The jobs page: one row per job with its state badge, progress and
// solutions; the action buttons enabled exactly as the state allows; cancel
// a running job from its row, then delete it, each after a confirmation
// (declined once first: nothing happens).  The job page: a job its limit
// stopped says so with the fraction it reached, and runs again; the page's
// own Cancel and Delete ask first too; a cancelled job runs again as a new
// job with the same puzzle and options in one click.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  setup, teardown, withPage, gotoRoute, waitReady, clearReady, shot, checkPhone, eventually,
  api, submitJob, getJob, waitJob, readPuzzle, readJobWidgets, checkButtons, num, T, log, trackJob,
  clickDownload, downloadBytes,
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

  // cancel the running job from its row: asked first; "keep it" keeps it
  const row = page.locator(`tr[data-testid=job-row][data-job-id="${running.id}"]`);
  const dialog = page.locator('dialog[data-testid=confirm-dialog]');
  await row.locator('[data-testid=cancel]').click();
  await dialog.waitFor({ state: 'visible' });
  assert.match(await dialog.textContent(), new RegExp(`Cancel job ${running.id}`), 'the dialog names the job');
  await shot(page, 'jobs-page-confirm-cancel');
  await page.locator('[data-testid=confirm-cancel]').click();
  await dialog.waitFor({ state: 'detached' });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await getJob(running.id)).state, 'running', 'declined: the job still runs');
  // a page change while the question is open steps back too (it stayed open over the next page)
  await row.locator('[data-testid=cancel]').click();
  await dialog.waitFor({ state: 'visible' });
  await page.evaluate(() => { location.hash = '#/batches'; });
  await dialog.waitFor({ state: 'detached' });
  await gotoRoute(page, '#/');
  assert.equal((await getJob(running.id)).state, 'running', 'navigated away: the job still runs');
  await row.locator('[data-testid=cancel]').click();
  await page.locator('[data-testid=confirm-ok]').click();
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

  // delete it: asked first, Escape steps back
  await row.locator('[data-testid=delete]').click();
  await dialog.waitFor({ state: 'visible' });
  assert.match(await dialog.textContent(), /cannot be undone/, 'the delete dialog says it is for good');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  assert.equal((await api('GET', `/api/v1/jobs/${running.id}`)).status, 200, 'Escape: the job is still there');
  await row.locator('[data-testid=delete]').click();
  await page.locator('[data-testid=confirm-ok]').click();
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

test('job page: the limit-stopped state, and run again', { timeout: T(100) }, withPage(async (page) => {
  const options = { unique: 'mirror', limit: 7, threads: 1 };
  const job = await submitJob({ puzzle: readPuzzle('pentominoes-6x10.json'), options });
  const done = await waitJob(job.id);
  assert.equal(done.state, 'completed');
  assert.equal(done.limit_reached, true, 'API: limit_reached');
  assert.ok(done.progress.fraction > 0 && done.progress.fraction < 1, `API: the fraction reached (${done.progress.fraction})`);
  await gotoRoute(page, `#/jobs/${job.id}`);
  const header = page.locator('[data-testid=job-header]');
  const note = header.locator('[data-testid=job-limit-note]');
  await note.waitFor({ state: 'visible' });
  const pct = (100 * done.progress.fraction).toFixed(1);
  assert.match(await note.textContent(), new RegExp(`Stopped at its limit of 7 solutions, after ${pct.replace('.', '\\.')}%`), 'the note names the limit and the fraction');
  const w = await readJobWidgets(header);
  assert.equal(w.state, 'completed');
  assert.ok(Math.abs(w.progress - done.progress.fraction) < 1e-9, `the bar shows the fraction reached (${w.progress})`);
  assert.match(await header.locator('.progress-wrap').textContent(), /searched/, 'the bar says how much was searched');
  const threads = (await header.locator('dt:text-is("Threads") + dd').textContent()).trim();
  assert.equal(threads, 'up to 1', 'a finished job shows no "0 threads": its own cap');
  // the chart has no empty "0 pieces left" column
  const cols = await page.locator('svg[data-testid=stats-chart] rect > title').evaluateAll((ts) => ts.map((t) => t.textContent));
  assert.ok(cols.length > 0 && cols.every((t) => !/^0 pieces left/.test(t)), `no "0 pieces left" bar (${cols.slice(-2)})`);
  // the row on the jobs page says it too
  await gotoRoute(page, '#/');
  const tag = page.locator(`tr[data-job-id="${job.id}"] [data-testid=job-limit]`);
  await tag.waitFor({ state: 'visible' });
  assert.equal((await tag.textContent()).trim(), 'limit 7');
  await checkPhone(page, 'jobs-page-limit-phone');

  // run again: a new job, the same puzzle and options, opened at once
  await gotoRoute(page, `#/jobs/${job.id}`);
  const rerun = header.locator('[data-testid=rerun]');
  assert.ok(await rerun.isEnabled(), 'Run again is offered on a finished job');
  await clearReady(page);
  await rerun.click();
  const id2 = await eventually('Run again opens the new job', async () => {
    const m = (await page.evaluate(() => location.hash)).match(/^#\/jobs\/(\d+)$/);
    return m && Number(m[1]) !== job.id ? Number(m[1]) : false;
  });
  await waitReady(page, `job page ${id2}`);
  const again = await waitJob(id2);
  trackJob(id2);
  for (const k of Object.keys(options)) assert.equal(again.options[k], options[k], `the new job keeps ${k}`);
  assert.equal(again.name, done.name, 'the same puzzle');
  assert.equal(again.solutions, 7, 'and the same result');
  const p1 = (await api('GET', `/api/v1/jobs/${job.id}/puzzle`)).json, p2 = (await api('GET', `/api/v1/jobs/${id2}/puzzle`)).json;
  assert.deepEqual(p2.pieces, p1.pieces, 'the same pieces');
  assert.deepEqual(p2.board, p1.board, 'the same board');
  await shot(page, 'job-page-rerun');
}));

test('job page: a completed record job offers its record', { timeout: T(100) }, withPage(async (page) => {
  const job = await submitJob({ puzzle: readPuzzle('pentominoes-6x10.json'), options: { record: 2, threads: 1 } });
  const done = await waitJob(job.id);
  assert.equal(done.state, 'completed');
  await gotoRoute(page, `#/jobs/${job.id}`);
  await waitReady(page, `job page ${job.id}`);
  const link = page.locator('[data-testid=job-record]');
  await link.waitFor({ state: 'visible' });
  const rec = JSON.parse((await downloadBytes(await clickDownload(page, link))).toString('utf8'));
  assert.equal(rec.format, 'tessera-record', 'the link downloads the record');
  assert.equal(rec.totals.solutions, done.solutions, 'whose totals are the job\'s');
  assert.equal(rec.split.depth, 2);
  await shot(page, 'job-page-record-link');
  // a job without a record offers none
  const plain = await submitJob({ puzzle: readPuzzle('pentominoes-6x10.json'), options: { threads: 1 } });
  await waitJob(plain.id);
  await gotoRoute(page, `#/jobs/${plain.id}`);
  await waitReady(page, `job page ${plain.id}`);
  assert.equal(await page.locator('[data-testid=job-record]').count(), 0, 'a plain job has no record link');
}));

test('job page: Cancel and Delete ask first; a cancelled job runs again', { timeout: T(100) }, withPage(async (page) => {
  const options = { unique: 'mirror', limit: 100000, threads: 1, priority: 2 };
  const job = await submitJob({ puzzle: readPuzzle(LONG), options });
  await waitJob(job.id, (j) => j.state === 'running', { what: `job ${job.id} running` });
  await gotoRoute(page, `#/jobs/${job.id}`);
  const header = page.locator('[data-testid=job-header]');
  const dialog = page.locator('dialog[data-testid=confirm-dialog]');
  const stateIs = (st) => eventually(`the job page shows ${st}`, async () => {
    const v = await readJobWidgets(header);
    assert.equal(v.state, st, JSON.stringify(v));
    return v;
  });
  await stateIs('running');

  // Cancel: asked first; "Keep the job" keeps it running
  await header.locator('[data-testid=cancel]').click();
  await dialog.waitFor({ state: 'visible' });
  assert.match(await dialog.textContent(), new RegExp(`Cancel job ${job.id}`), 'the dialog names the job');
  await shot(page, 'job-page-confirm-cancel');
  await page.locator('[data-testid=confirm-cancel]').click();
  await dialog.waitFor({ state: 'detached' });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await getJob(job.id)).state, 'running', 'declined: the job still runs');
  assert.equal((await readJobWidgets(header)).state, 'running', 'declined: the page says running');
  await header.locator('[data-testid=cancel]').click();
  await page.locator('[data-testid=confirm-ok]').click();
  await stateIs('cancelled');
  assert.equal((await getJob(job.id)).state, 'cancelled', 'API: cancelled');
  await eventually('the buttons follow the cancelled state', async () => {
    checkButtons(await readJobWidgets(header), 'cancelled', `job page ${job.id} (cancelled)`);
    return true;
  });

  // Run again: the cancelled job's puzzle and options as a new job, opened at once
  const rerun = header.locator('[data-testid=rerun]');
  await rerun.waitFor({ state: 'visible' });
  assert.ok(await rerun.isEnabled(), 'Run again is offered on a cancelled job');
  await clearReady(page);
  await rerun.click();
  const id2 = await eventually('Run again opens the new job', async () => {
    const m = (await page.evaluate(() => location.hash)).match(/^#\/jobs\/(\d+)$/);
    return m && Number(m[1]) !== job.id ? Number(m[1]) : false;
  });
  trackJob(id2);
  await waitReady(page, `job page ${id2}`);
  const again = await getJob(id2);
  assert.ok(['queued', 'running'].includes(again.state), `the new job runs (${again.state})`);
  for (const [k, v] of Object.entries(options)) assert.equal(again.options[k], v, `the new job keeps ${k}`);
  assert.equal(again.name, job.name, 'the same puzzle');
  const p1 = (await api('GET', `/api/v1/jobs/${job.id}/puzzle`)).json, p2 = (await api('GET', `/api/v1/jobs/${id2}/puzzle`)).json;
  assert.deepEqual(p2.pieces, p1.pieces, 'the same pieces');
  assert.deepEqual(p2.board, p1.board, 'the same board');
  assert.equal((await getJob(job.id)).state, 'cancelled', 'the cancelled job stays as it was');
  assert.equal((await api('POST', `/api/v1/jobs/${id2}/cancel`)).status, 200, 'tidy: cancel the new job');

  // Delete from the cancelled job's page: asked first, Escape steps back;
  // confirmed, the job is gone and the page goes to the jobs list
  await gotoRoute(page, `#/jobs/${job.id}`);
  await stateIs('cancelled');
  await header.locator('[data-testid=delete]').click();
  await dialog.waitFor({ state: 'visible' });
  assert.match(await dialog.textContent(), new RegExp(`Delete job ${job.id}`), 'the dialog names the job');
  assert.match(await dialog.textContent(), /cannot be undone/, 'the delete dialog says it is for good');
  await shot(page, 'job-page-confirm-delete');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  assert.equal((await api('GET', `/api/v1/jobs/${job.id}`)).status, 200, 'Escape: the job is still there');
  assert.equal(await page.evaluate(() => location.hash), `#/jobs/${job.id}`, 'Escape: still on the job page');
  await header.locator('[data-testid=delete]').click();
  await clearReady(page);
  await page.locator('[data-testid=confirm-ok]').click();
  await eventually('after Delete the jobs list opens', async () => (await page.evaluate(() => location.hash)) === '#/');
  await waitReady(page, 'the jobs list');
  const gone = await api('GET', `/api/v1/jobs/${job.id}`);
  assert.equal(gone.status, 404, `API: job ${job.id} is gone (${gone.text})`);
  assert.equal(await page.locator(`tr[data-testid=job-row][data-job-id="${job.id}"]`).count(), 0, 'no row for the deleted job');
}));
