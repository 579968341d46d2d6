// Watching a job: the Tetris Cube submitted through the form (pasted JSON,
// unique=rotations, 1 thread so that it runs for several seconds); the
// progress bar moves, pause stops it, resume restarts it, it completes with
// the published count; the jobs page agrees.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  setup, teardown, withPage, gotoRoute, waitReady, clearReady, shot, checkPhone, eventually,
  jobIds, trackJob, getJob, waitJob, readPuzzle, readPuzzleText, readJobWidgets, checkButtons,
  num, T, log, sleep,
} from './lib.mjs';

before(setup, { timeout: T(60) });
after(teardown, { timeout: T(60) });

test('tetris cube: progress moves, pause holds it, resume, completes with 9839', { timeout: T(110) }, withPage(async (page) => {
  const file = 'tetris-cube.json';
  const pz = readPuzzle(file);
  const expected = pz.expected.rotations;
  assert.equal(expected, 9839);

  await gotoRoute(page, '#/submit');
  await page.locator('textarea[data-testid=puzzle-text]').fill(readPuzzleText(file));
  await page.locator('select[data-testid=unique]').selectOption('rotations');
  await page.locator('input[data-testid=threads]').fill('1');
  const before = new Set(await jobIds());
  await clearReady(page);
  await page.locator('button[data-testid=submit]').click();
  const id = await eventually('Submit lands on #/jobs/ID', async () => {
    const m = (await page.evaluate(() => location.hash)).match(/^#\/jobs\/(\d+)$/);
    return m ? Number(m[1]) : false;
  });
  trackJob(id);
  assert.ok(!before.has(id), `job ${id} is new`);
  await waitReady(page, `job page ${id}`);
  const apiJob = await getJob(id);
  assert.equal(apiJob.options.unique, 'rotations', 'the form sent unique=rotations');
  assert.equal(apiJob.options.threads, 1, 'the form sent threads=1');

  const header = page.locator('[data-testid=job-header]');
  const samples = []; // {t, state, progress, solutions}
  const t0 = Date.now();
  const sample = async () => {
    const w = await readJobWidgets(header);
    const s = { t: Date.now() - t0, state: w.state, progress: w.progress, solutions: num(w.solutions), w };
    const prev = samples[samples.length - 1];
    if (!prev || prev.state !== s.state || prev.progress !== s.progress || prev.solutions !== s.solutions) {
      log(`sample t=${s.t}ms state=${s.state} progress=${s.progress} solutions=${w.solutions}`);
    }
    samples.push(s);
    return s;
  };
  const increasesWhileRunning = () => {
    let n = 0;
    for (let i = 1; i < samples.length; i++) {
      if (samples[i].state === 'running' && samples[i - 1].state === 'running' && samples[i].progress > samples[i - 1].progress) n++;
    }
    return n;
  };

  // 1. running: the bar moves (strictly up at least twice)
  let shotRunning = false;
  await eventually('the progress bar increases at least twice while running', async () => {
    const s = await sample();
    assert.ok(!['completed', 'cancelled', 'failed'].includes(s.state), `the job ended (${s.state}) before the bar was seen moving twice: samples ${JSON.stringify(samples.map((x) => [x.t, x.state, x.progress]))}`);
    if (s.state === 'running' && s.progress > 0 && !shotRunning) {
      shotRunning = true;
      checkButtons(s.w, 'running', 'job header (running)');
      await shot(page, 'progress-tetris-running');
    }
    return increasesWhileRunning() >= 2;
  }, { timeout: T(60), interval: 100 });
  const s1 = samples[samples.length - 1];
  assert.ok(s1.progress > 0 && s1.progress < 1, `progress strictly between 0 and 1 while running (${s1.progress})`);
  checkButtons(s1.w, 'running', 'job header (running)');

  // 2. pause
  await header.locator('[data-testid=pause]').click();
  await eventually('the job header shows paused', async () => (await sample()).state === 'paused', { timeout: T(30) });
  await waitJob(id, (j) => j.state === 'paused', { what: `API: job ${id} is paused`, timeout: T(30) });
  const p0 = (await sample()).progress;
  const api0 = (await getJob(id)).progress.fraction;
  const held = [];
  const tEnd = Date.now() + 1000;
  while (Date.now() < tEnd) { held.push((await sample()).progress); await sleep(100); }
  held.push((await sample()).progress);
  const api1 = (await getJob(id)).progress.fraction;
  assert.ok(held.every((v) => v === p0), `the bar does not move for 1 s while paused: ${held}`);
  assert.equal(api1, api0, 'API: the fraction does not move while paused');
  assert.ok(p0 > 0 && p0 < 1, `paused part-way (${p0})`);
  const sp = samples[samples.length - 1];
  assert.equal(sp.state, 'paused');
  checkButtons(sp.w, 'paused', 'job header (paused)');
  await shot(page, 'progress-tetris-paused');

  // 3. resume: running again
  await header.locator('[data-testid=resume]').click();
  await eventually('the job header shows running again', async () => {
    const s = await sample();
    assert.ok(s.state !== 'completed', 'the job completed before it was seen running again');
    return s.state === 'running';
  }, { timeout: T(30), interval: 50 });

  // 4. to completion
  const done = await eventually('the job page shows completed, progress 1 and 9839 solutions', async () => {
    const s = await sample();
    return s.state === 'completed' && s.progress === 1 && s.solutions === expected ? s : false;
  }, { timeout: T(90), interval: 100 });
  checkButtons(done.w, 'completed', 'job header (completed)');
  const job = await getJob(id);
  assert.equal(job.state, 'completed');
  assert.equal(job.solutions, expected, 'API: 9839 solutions');
  for (let i = 1; i < samples.length; i++) {
    assert.ok(samples[i].progress >= samples[i - 1].progress,
      `the bar never goes back: ${samples[i - 1].progress} at ${samples[i - 1].t} ms then ${samples[i].progress} at ${samples[i].t} ms`);
  }
  log(`${samples.length} samples, ${increasesWhileRunning()} increases while running, done after ${done.t} ms`);
  await shot(page, 'progress-tetris-completed');
  await checkPhone(page, 'progress-tetris-completed-phone');

  // 5. the jobs page agrees
  await gotoRoute(page, '#/');
  const row = page.locator(`tr[data-testid=job-row][data-job-id="${id}"]`);
  await row.waitFor({ state: 'visible' });
  const w = await eventually('the jobs page row shows completed', async () => {
    const v = await readJobWidgets(row);
    assert.equal(v.state, 'completed', `row job-state: ${JSON.stringify(v)}`);
    assert.equal(v.progress, 1, `row progress: ${JSON.stringify(v)}`);
    assert.equal(num(v.solutions), expected, `row solutions: ${JSON.stringify(v)}`);
    return v;
  });
  checkButtons(w, 'completed', `jobs page row ${id}`);
  await shot(page, 'progress-jobs-page-completed');
}));
