// The dashboard against pages that are not its own (docs/api.md, "Security
// model"), in a real Chromium against the real daemon:
//   - a page on another origin (another port of 127.0.0.1: same site; and
//     evil.example, mapped to 127.0.0.1 by the browser: another site) tries
//     every request a page can send without asking: a text/plain fetch, a
//     form post, a beacon, a JSON fetch, a DELETE, cancels of a running job,
//     and reading the job list.  Nothing is created, cancelled or deleted,
//     nothing is read, and the daemon counted the refusals;
//   - the same page frames the dashboard: the browser refuses to show it;
//   - a rebound name (rebind.example -> 127.0.0.1 on the daemon's port) gets
//     421 for the dashboard and for the API it tries as "its own origin";
//   - on its own origin the dashboard works under its Content-Security-Policy:
//     every page, a solution, the gallery and the PNG export, with no policy
//     violation reported.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { chromium } from 'playwright-core';
import {
  startDaemon, stopDaemon, cancelLiveJobs, api, submitJob, getJob, waitJob, readPuzzle, jobIds,
  gotoRoute, shot, eventually, BASE as BASE0, CHROMIUM, DESKTOP, T, log, sleep, clickDownload,
  downloadBytes,
} from './lib.mjs';

let base, port, browser, evil, evilPort;

/* The attacker's page: every write a page can send, then a frame of the
 * dashboard.  Results go to window.results for the test to read. */
function evilPage(target, jobId, puzzle) {
  const body = JSON.stringify({ puzzle });
  return `<!doctype html><meta charset="utf-8"><title>evil</title>
<body><h1>Nothing to see</h1>
<iframe name="sink" style="display:none"></iframe>
<form id="f1" method="POST" action="${target}/api/v1/jobs" target="sink" enctype="application/x-www-form-urlencoded">
  <input type="hidden" name='${body.replace(/'/g, '&#39;')}' value=""></form>
<form id="f2" method="POST" action="${target}/api/v1/jobs/${jobId}/cancel" target="sink"></form>
<form id="f3" method="POST" action="${target}/api/v1/jobs" target="sink" enctype="text/plain">
  <input type="hidden" name='${body.replace(/'/g, '&#39;')}' value=""></form>
<iframe id="frame" src="${target}/#/" width="800" height="400"></iframe>
<script>
window.results = {};
async function attempt(name, fn) {
  try { const r = await fn(); window.results[name] = r === undefined ? 'sent' : r; }
  catch (e) { window.results[name] = 'error: ' + e.message; }
}
(async () => {
  const body = ${JSON.stringify(body)};
  await attempt('fetch text/plain', () => fetch('${target}/api/v1/jobs', { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body }).then(() => 'opaque'));
  await attempt('fetch no type', () => fetch('${target}/api/v1/jobs', { method: 'POST', mode: 'no-cors', body: new Blob([body]) }).then(() => 'opaque'));
  await attempt('fetch json', () => fetch('${target}/api/v1/jobs', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body }).then((r) => 'status ' + r.status));
  await attempt('fetch cancel', () => fetch('${target}/api/v1/jobs/${jobId}/cancel', { method: 'POST', mode: 'no-cors' }).then(() => 'opaque'));
  await attempt('fetch pause', () => fetch('${target}/api/v1/jobs/${jobId}/pause', { method: 'POST', mode: 'no-cors', credentials: 'include' }).then(() => 'opaque'));
  await attempt('fetch delete', () => fetch('${target}/api/v1/jobs/${jobId}', { method: 'DELETE' }).then((r) => 'status ' + r.status));
  await attempt('beacon cancel', () => navigator.sendBeacon('${target}/api/v1/jobs/${jobId}/cancel', 'x') ? 'queued' : 'refused');
  await attempt('beacon submit', () => navigator.sendBeacon('${target}/api/v1/jobs', body) ? 'queued' : 'refused');
  await attempt('read jobs', () => fetch('${target}/api/v1/jobs').then((r) => r.text()));
  for (const id of ['f1', 'f2', 'f3']) {
    document.getElementById(id).submit();
    await new Promise((r) => setTimeout(r, 300));
  }
  window.results.done = true;
})();
</script>`;
}

before(async () => {
  base = await startDaemon();
  port = Number(new URL(base).port);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: !process.env.TSR_HEADFUL,
    // another site and a rebound name, both on this machine
    args: ['--no-sandbox', '--disable-dev-shm-usage',
      '--host-resolver-rules=MAP evil.example 127.0.0.1, MAP rebind.example 127.0.0.1'],
  });
  evil = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    const page = evilPage(u.searchParams.get('target'), u.searchParams.get('job'),
      readPuzzle('pentominoes-6x10.json'));
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(page);
  });
  await new Promise((r) => evil.listen(0, '127.0.0.1', r));
  evilPort = evil.address().port;
  log(`daemon ${base}, the attacker's server on port ${evilPort}`);
}, { timeout: T(60) });

after(async () => {
  await cancelLiveJobs();
  if (browser) await browser.close().catch(() => {});
  if (evil) evil.close();
  await stopDaemon();
}, { timeout: T(60) });

async function refusals() {
  const m = (await api('GET', '/metrics')).text;
  const line = m.split('\n').find((l) => l.startsWith('tessera_http_requests_total{code="4xx"}'));
  return Number(line.split(' ')[1]);
}

for (const site of ['127.0.0.1', 'evil.example']) {
  test(`a page on ${site}:other-port can neither write nor read`, { timeout: T(90) }, async () => {
    const victim = await submitJob({ puzzle: readPuzzle('onesided-pentominoes-5x18.json') });
    await waitJob(victim.id, (j) => j.state === 'running', { what: 'the victim job runs' });
    const before = await jobIds();
    const refused0 = await refusals();
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const url = `http://${site}:${evilPort}/?target=${encodeURIComponent(base)}&job=${victim.id}`;
    await page.goto(url);
    await page.waitForFunction(() => window.results && window.results.done, null, { timeout: T(30) });
    await sleep(1000); // the beacons and the last form
    const results = await page.evaluate(() => window.results);
    log(`${site}: ${JSON.stringify(results).slice(0, 400)}`);
    assert.match(results['fetch json'], /^error/, 'a JSON fetch from another origin never reaches a status (no CORS)');
    assert.match(results['fetch delete'], /^error/, 'a DELETE from another origin fails (no CORS)');
    assert.match(results['read jobs'], /^error/, 'the page cannot read the job list');
    // the frame: the browser shows an error page, not the dashboard
    const frame = page.frames().find((f) => f !== page.mainFrame());
    const framed = await frame.evaluate(() => Boolean(document.querySelector('nav [data-testid=nav-jobs]'))).catch(() => false);
    assert.equal(framed, false, 'the dashboard is not shown inside the page (frame-ancestors, X-Frame-Options)');
    await shot(page, `security-attacker-${site}`);
    await context.close();
    // nothing changed
    assert.deepEqual(await jobIds(), before, 'no job was created');
    const v = await getJob(victim.id);
    assert.equal(v.state, 'running', 'the victim job was neither paused nor cancelled');
    const refused = (await refusals()) - refused0;
    log(`${site}: the daemon refused ${refused} requests`);
    assert.ok(refused >= 6, `the daemon refused the writes that reached it (${refused})`);
    assert.equal((await api('POST', `/api/v1/jobs/${victim.id}/cancel`)).status, 200, 'cancel from node');
  });
}

test('a rebound name gets 421 for the dashboard and for its API', { timeout: T(60) }, async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const resp = await page.goto(`http://rebind.example:${port}/`);
  assert.equal(resp.status(), 421, 'the dashboard under a rebound name is 421');
  const r = await page.evaluate(async () => {
    const a = await fetch('/api/v1/jobs');
    const b = await fetch('/api/v1/jobs', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    return [a.status, b.status, await a.text()];
  });
  assert.deepEqual(r.slice(0, 2), [421, 421], 'reads and writes through the rebound name are 421');
  assert.ok(!r[2].includes('"jobs"'), 'no job list leaks');
  await shot(page, 'security-rebound-name');
  await context.close();
});

test('the dashboard works under its own policy', { timeout: T(120) }, async () => {
  const job = await submitJob({ puzzle: readPuzzle('pentominoes-6x10.json'), options: { limit: 30 } });
  await waitJob(job.id);
  const context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  await context.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__violations.push(`${e.violatedDirective}: ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
    });
  });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(e.message));
  const resp = await page.goto(`${base}/`);
  const csp = resp.headers()['content-security-policy'] || '';
  assert.match(csp, /script-src 'self'/, 'the document comes with its policy');
  assert.match(csp, /frame-ancestors 'none'/, 'and may not be framed');
  assert.equal(resp.headers()['x-frame-options'], 'DENY');
  for (const route of ['#/', '#/submit', '#/designer', '#/batches', `#/jobs/${job.id}`,
    `#/jobs/${job.id}/solutions/3`, `#/jobs/${job.id}/gallery`]) {
    await gotoRoute(page, route);
    await sleep(300);
  }
  await gotoRoute(page, `#/jobs/${job.id}/solutions/3`);
  const png = page.locator('[data-testid=export-png]');
  if (await png.count()) {
    const dl = await clickDownload(page, png.first());
    const bytes = await downloadBytes(dl);
    assert.ok(bytes.length > 1000 && bytes.subarray(1, 4).toString() === 'PNG', 'the PNG export works under the policy');
  } else {
    log('no export-png button on this page: export not exercised here (solutions.test.mjs does)');
  }
  await shot(page, 'security-own-origin-solution');
  const violations = await page.evaluate(() => window.__violations);
  assert.deepEqual(violations, [], 'no Content-Security-Policy violation');
  assert.deepEqual(problems, [], 'no console error or warning');
  await context.close();
});
