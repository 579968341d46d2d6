// Shared helpers for the dashboard browser tests (tests/browser/*.test.mjs).
//
// Environment:
//   TSR_BASE_URL        the daemon to test (run.sh sets it); when unset, the test
//                       file starts its own tesserad on a loopback port and stops it
//   TSR_SRCDIR          the source tree (puzzles/, www/); default: this file's ../..
//   TESSERAD            the daemon binary; default $TSR_SRCDIR/tesserad
//   CHROMIUM            the browser; default /usr/bin/chromium
//   TSR_ARTIFACTS       where screenshots go; default tests/browser/artifacts
//   TSR_TIMEOUT_SCALE   multiplies every wait (default 1)
//   TSR_HEADFUL=1       show the browser (debugging)

import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SRCDIR = path.resolve(process.env.TSR_SRCDIR || path.join(HERE, '..', '..'));
export const PUZZLES = path.join(SRCDIR, 'puzzles');
export const ARTIFACTS = path.resolve(process.env.TSR_ARTIFACTS || path.join(HERE, 'artifacts'));
export const SCALE = Number(process.env.TSR_TIMEOUT_SCALE || 1) || 1;
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const FINAL_STATES = ['completed', 'cancelled', 'failed'];
export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/** A wait of `s` seconds, scaled. */
export const T = (s) => Math.round(s * 1000 * SCALE);

const t0 = Date.now();
export function log(msg) {
  console.log(`[${((Date.now() - t0) / 1000).toFixed(2).padStart(7)}s] ${msg}`);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** "2,339" / "2 339" / "2339" -> 2339 (NaN when there is no digit). */
export function num(text) {
  const d = String(text ?? '').replace(/[^\d]/g, '');
  return d === '' ? NaN : Number(d);
}

/** "1 / 2,339" -> [1, 2339] */
export function parseIndex(text) {
  const m = String(text ?? '').match(/(\d[\d,.\s\u00a0\u202f]*)\/\s*(\d[\d,.\s\u00a0\u202f]*)/);
  if (!m) return [NaN, NaN];
  return [num(m[1]), num(m[2])];
}

export function readPuzzle(file) {
  return JSON.parse(fs.readFileSync(path.join(PUZZLES, file), 'utf8'));
}
export function readPuzzleText(file) {
  return fs.readFileSync(path.join(PUZZLES, file), 'utf8');
}

/**
 * Poll `fn` (async) until it returns without throwing and its value is not
 * false/undefined; throws the last failure, prefixed with `what`, on timeout.
 */
export async function eventually(what, fn, { timeout = T(30), interval = 100 } = {}) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v !== false && v !== undefined) return v;
      last = new Error('condition is false');
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) {
      const err = new Error(`timed out after ${timeout} ms waiting for: ${what}\n  last: ${last && last.message}`);
      err.cause = last;
      throw err;
    }
    await sleep(interval);
  }
}

// ---------------------------------------------------------------------------
// the daemon

let daemon = null; // {proc, dir} when this process started one
export let BASE = process.env.TSR_BASE_URL ? process.env.TSR_BASE_URL.replace(/\/$/, '') : null;

/** The daemon's base URL; starts one when TSR_BASE_URL is not set. */
export async function startDaemon() {
  if (BASE) return BASE;
  const bin = process.env.TESSERAD || path.join(SRCDIR, 'tesserad');
  if (!fs.existsSync(bin)) throw new Error(`no tesserad at ${bin} (build it: make tesserad)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-browser-'));
  const proc = spawn(bin, ['--listen', '127.0.0.1:0', '--state-dir', dir, '--threads', '2',
    '--www', path.join(SRCDIR, 'www'), '--puzzles', PUZZLES, '--docs', path.join(SRCDIR, 'docs')], { stdio: ['ignore', 'ignore', 'pipe'] });
  daemon = { proc, dir };
  let errText = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tesserad did not say its port: ${errText}`)), T(20));
    proc.stderr.on('data', (b) => {
      errText += b.toString();
      const m = errText.match(/listening on .*\(port (\d+)\)/);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`tesserad exited ${code}: ${errText}`)); });
  });
  proc.stderr.resume();
  BASE = `http://127.0.0.1:${port}`;
  log(`started tesserad pid ${proc.pid} at ${BASE}`);
  return BASE;
}

export async function stopDaemon() {
  if (!daemon) return;
  const { proc, dir } = daemon;
  daemon = null;
  if (proc.exitCode === null) {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    let timer;
    await Promise.race([exited, new Promise((r) => { timer = setTimeout(r, T(10)); })]);
    clearTimeout(timer);
    if (proc.exitCode === null) proc.kill('SIGKILL');
  }
  fs.rmSync(dir, { recursive: true, force: true });
  log('stopped tesserad');
}

// ---------------------------------------------------------------------------
// the API, from node

/** {status, text, json} of one request; `body` a string (sent as is) or an object (JSON). */
export async function api(method, p, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  const r = await fetch(BASE + p, init);
  const text = await r.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  return { status: r.status, text, json };
}

const createdJobs = new Set();

/** Submit a job through the API; returns the job object. */
export async function submitJob(body) {
  const r = await api('POST', '/api/v1/jobs', body);
  assert.equal(r.status, 201, `POST /api/v1/jobs answers 201: ${r.text}`);
  createdJobs.add(r.json.id);
  return r.json;
}

export function trackJob(id) { createdJobs.add(Number(id)); }

export async function getJob(id) {
  const r = await api('GET', `/api/v1/jobs/${id}`);
  assert.equal(r.status, 200, `GET job ${id}: ${r.text}`);
  return r.json;
}

/** Wait until job `id` satisfies pred(job) (default: a final state). */
export async function waitJob(id, pred = (j) => FINAL_STATES.includes(j.state), { timeout = T(90), what } = {}) {
  let job;
  await eventually(what || `job ${id} reaches a final state`, async () => {
    job = await getJob(id);
    assert.ok(pred(job), `job ${id}: state ${job.state}, fraction ${job.progress.fraction}, solutions ${job.solutions}`);
    return true;
  }, { timeout, interval: 100 });
  return job;
}

/** All job ids the daemon has now. */
export async function jobIds() {
  const ids = [];
  let after = 0;
  for (;;) {
    const r = await api('GET', `/api/v1/jobs?limit=1000&after=${after}`);
    assert.equal(r.status, 200, r.text);
    for (const j of r.json.jobs) ids.push(j.id);
    if (r.json.next === null) return ids;
    after = r.json.next;
  }
}

/** Cancel every job this test file created that is still live (so later files get the CPU). */
export async function cancelLiveJobs() {
  for (const id of createdJobs) {
    try {
      const r = await api('GET', `/api/v1/jobs/${id}`);
      if (r.status === 200 && !FINAL_STATES.includes(r.json.state)) {
        await api('POST', `/api/v1/jobs/${id}/cancel`);
        log(`cleanup: cancelled job ${id}`);
      }
    } catch { /* the daemon is gone */ }
  }
}

// ---------------------------------------------------------------------------
// the browser

let browser = null;

export async function setup() {
  await startDaemon();
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no browser at ${CHROMIUM}`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: !process.env.TSR_HEADFUL,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  log(`browser ${browser.version()}, daemon ${BASE}`);
}

export async function teardown() {
  await cancelLiveJobs();
  log('teardown: closing the browser');
  if (browser) await browser.close().catch(() => {});
  browser = null;
  await stopDaemon();
}

/**
 * Wrap a test body: a fresh browser context and page (desktop size), every
 * console error/warning and uncaught page error collected; after a body that
 * passed, any such message fails the test.  `allowConsole(re)` lets a body
 * accept the console lines it provokes on purpose (the browser's own
 * "Failed to load resource: ... status of 422" for an expected error answer).
 */
export function withPage(body) {
  return async (t) => {
    fs.rmSync(path.join(ARTIFACTS, `failed-${slug(t.name)}.png`), { force: true });
    const context = await browser.newContext({ viewport: DESKTOP, locale: 'en-US', acceptDownloads: true });
    context.setDefaultTimeout(T(30));
    const problems = [];
    const allowed = [];
    const watch = (page) => {
      page.on('console', (m) => {
        if (m.type() !== 'error' && m.type() !== 'warning') return;
        const loc = m.location();
        const line = `console.${m.type()}: ${m.text()}${loc && loc.url ? ` (${loc.url}:${loc.lineNumber})` : ''}`;
        if (allowed.some((re) => re.test(m.text()))) { log(`(expected) ${line}`); return; }
        problems.push(line);
        log(line);
      });
      page.on('pageerror', (e) => { const line = `pageerror: ${e.stack || e.message}`; problems.push(line); log(line); });
      page.on('dialog', (d) => { log(`dialog ${d.type()}: ${d.message()} -> accept`); d.accept().catch(() => {}); });
    };
    context.on('page', watch);
    const page = await context.newPage();
    const ctx = {
      t,
      context,
      page,
      allowConsole: (re) => { allowed.push(re); return () => { const i = allowed.indexOf(re); if (i >= 0) allowed.splice(i, 1); }; },
      problems,
    };
    let failed = null;
    try {
      await body(page, ctx);
    } catch (e) {
      failed = e;
      await shot(page, `failed-${slug(t.name)}`).catch(() => {});
    } finally {
      await context.close().catch(() => {});
    }
    if (failed) {
      if (problems.length) failed.message += `\n  console problems meanwhile:\n    ${problems.join('\n    ')}`;
      throw failed;
    }
    assert.deepEqual(problems, [], 'no console errors or warnings and no uncaught page errors');
  };
}

export function slug(s) {
  return String(s).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 80);
}

/**
 * Save a full-page screenshot as ARTIFACTS/NAME.png.  With firstScreen,
 * NAME.png is instead the first screen, exactly the viewport (1280x900,
 * 390x844) scrolled to the top, as a visitor first sees the page; the whole
 * page goes to NAME-full.png.
 */
export async function shot(page, name, { firstScreen = false } = {}) {
  const file = path.join(ARTIFACTS, `${slug(name)}.png`);
  if (firstScreen) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: file, fullPage: false });
    const full = path.join(ARTIFACTS, `${slug(name)}-full.png`);
    await page.screenshot({ path: full, fullPage: true });
    log(`screenshot ${path.relative(process.cwd(), file)} (first screen), ${path.relative(process.cwd(), full)}`);
  } else {
    await page.screenshot({ path: file, fullPage: true });
    log(`screenshot ${path.relative(process.cwd(), file)}`);
  }
  return file;
}

const isReady = () => document.body && document.body.dataset.ready === '1';

/**
 * Open a dashboard route ("#/", "#/submit", "#/jobs/7") and wait for
 * body[data-ready="1"].  Within the dashboard the marker is cleared first,
 * so the wait sees it set again by this navigation.
 */
export async function gotoRoute(page, hash) {
  const url = page.url();
  if (url.startsWith(BASE + '/')) {
    await page.evaluate((h) => { if (document.body) delete document.body.dataset.ready; location.hash = h; }, hash);
  } else {
    await page.goto(`${BASE}/${hash}`);
  }
  await waitReady(page, `route ${hash}`);
}

export async function waitReady(page, what = 'page') {
  try {
    await page.waitForFunction(isReady, null, { timeout: T(30), polling: 100 });
  } catch (e) {
    throw new Error(`${what}: document.body.dataset.ready never became "1" (url ${page.url()}): ${e.message}`);
  }
}

/** Clear the ready marker (before an action that navigates). */
export async function clearReady(page) {
  await page.evaluate(() => { if (document.body) delete document.body.dataset.ready; });
}

/**
 * At the phone viewport (390x844): no horizontal page overflow.  Takes a
 * screenshot `name` at that size (shot's options) and restores the desktop
 * size.
 */
export async function checkPhone(page, name, shotOptions = {}) {
  await page.setViewportSize(PHONE);
  try {
    // let a resize handler and a frame run
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const m = await eventually(`no horizontal overflow at 390x844 (${name})`, async () => {
      const v = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        innerWidth: window.innerWidth,
        widest: [...document.querySelectorAll('body *')]
          .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
          .slice(0, 5)
          .map((e) => `${e.tagName.toLowerCase()}${e.dataset.testid ? `[data-testid=${e.dataset.testid}]` : ''}${e.className && typeof e.className === 'string' ? '.' + e.className.split(/\s+/).join('.') : ''} right=${Math.round(e.getBoundingClientRect().right)}`),
      }));
      assert.ok(v.scrollWidth <= v.innerWidth,
        `documentElement.scrollWidth ${v.scrollWidth} > innerWidth ${v.innerWidth}; elements past the right edge: ${v.widest.join(', ')}`);
      return v;
    }, { timeout: T(5) });
    await shot(page, name, shotOptions);
    return m;
  } finally {
    await page.setViewportSize(DESKTOP);
  }
}

/** Read a download's content as a Buffer. */
export async function downloadBytes(download) {
  const p = await download.path();
  return fs.readFileSync(p);
}

/** Save a download under ARTIFACTS too (so a failing export can be inspected). */
export async function keepDownload(download, name) {
  const file = path.join(ARTIFACTS, name);
  await download.saveAs(file);
  return file;
}

/** Click `locator` and return the download it starts. */
export async function clickDownload(page, locator) {
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: T(30) }),
    locator.click(),
  ]);
  return download;
}

/** The state/progress/solutions shown inside `scope` (a job row or the job header). */
export async function readJobWidgets(scope) {
  return scope.evaluate((el) => {
    const q = (id) => el.querySelector(`[data-testid=${id}]`);
    const st = q('job-state');
    const pr = q('job-progress');
    const so = q('job-solutions');
    const btn = (id) => { const b = q(id); return b ? { present: true, disabled: b.disabled || b.hasAttribute('disabled') } : { present: false }; };
    return {
      state: st ? st.textContent.trim() : null,
      progress: pr ? (pr.tagName === 'PROGRESS' ? pr.value : Number(pr.getAttribute('value'))) : null,
      progressTag: pr ? pr.tagName.toLowerCase() : null,
      progressMax: pr ? pr.getAttribute('max') : null,
      solutions: so ? so.textContent.trim() : null,
      pause: btn('pause'), resume: btn('resume'), cancel: btn('cancel'), delete: btn('delete'),
    };
  });
}

/** Which action buttons the contract allows in `state`. */
export function allowedButtons(state) {
  return {
    pause: state === 'queued' || state === 'running',
    resume: state === 'paused',
    cancel: state === 'queued' || state === 'running' || state === 'paused',
    delete: FINAL_STATES.includes(state),
  };
}

/** Assert the four buttons are present and enabled exactly as allowed in `state`. */
export function checkButtons(w, state, where) {
  const want = allowedButtons(state);
  for (const b of ['pause', 'resume', 'cancel', 'delete']) {
    assert.ok(w[b].present, `${where}: [data-testid=${b}] button present`);
    assert.equal(!w[b].disabled, want[b], `${where}: ${b} button ${want[b] ? 'enabled' : 'disabled'} when ${state}`);
  }
}

/**
 * A signature of a canvas's current image, read in the page with
 * canvas.toDataURL(): the data URL and the number of distinct colours.
 */
export async function canvasImage(locator) {
  return locator.evaluate(async (c) => {
    const url = c.toDataURL('image/png');
    const img = new Image();
    img.src = url;
    await img.decode();
    const w = Math.max(1, img.naturalWidth), h = Math.max(1, img.naturalHeight);
    const cv = document.createElement('canvas');
    cv.width = w; cv.height = h;
    const g = cv.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, w, h).data;
    const colours = new Set();
    for (let i = 0; i < d.length && colours.size < 1000; i += 4) colours.add((d[i] << 24 | d[i + 1] << 16 | d[i + 2] << 8 | d[i + 3]) >>> 0);
    return { url, width: w, height: h, colours: colours.size };
  });
}

/** Submit the designer's design and wait for its job to complete with
 *  `expected` solutions; returns the job id. */
export async function submitDesign(page, expected) {
  await clearReady(page);
  await page.locator('[data-testid=design-submit]').click();
  await eventually('the submit lands on the job page', async () => /#\/jobs\/\d+$/.test(page.url()));
  await waitReady(page, 'the job page');
  const id = Number(page.url().match(/#\/jobs\/(\d+)$/)[1]);
  trackJob(id);
  const done = await waitJob(id);
  assert.equal(done.state, 'completed');
  assert.equal(done.solutions, expected, `job ${id} counts ${expected}`);
  return id;
}
