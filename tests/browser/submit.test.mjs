// The submit page: library, preview, submit to completion, the server's
// error for an invalid puzzle, malformed text, file upload; nav links; phone
// layout; the option fields built from GET /api/v1/options.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  setup, teardown, withPage, gotoRoute, waitReady, clearReady, shot, checkPhone, eventually,
  api, jobIds, trackJob, waitJob, readPuzzle, readJobWidgets, num, T, log, PUZZLES, BASE, SCALE,
} from './lib.mjs';

// The estimate's timing run (half a second) finishes the 6x10 and the Soma
// cube, so it answers with the exact count; a sanitizer build (its waits
// scaled, SCALE > 1) is too slow for that and answers with the estimate.
function estimateSays(text, exact) {
  return exact.test(text) || (SCALE > 1 && /^Solutions: (about|at least) [\d,]+/.test(text));
}

before(setup, { timeout: T(60) });
after(teardown, { timeout: T(60) });

const form = (page) => ({
  form: page.locator('form[data-testid=submit-form]'),
  text: page.locator('textarea[data-testid=puzzle-text]'),
  file: page.locator('input[type=file][data-testid=puzzle-file]'),
  library: page.locator('select[data-testid=library-select]'),
  unique: page.locator('select[data-testid=unique]'),
  limit: page.locator('input[data-testid=limit]'),
  threads: page.locator('input[data-testid=threads]'),
  priority: page.locator('input[data-testid=priority]'),
  preview: page.locator('button[data-testid=preview]'),
  submit: page.locator('button[data-testid=submit]'),
  error: page.locator('[data-testid=submit-error]'),
  previewArea: page.locator('[data-testid=preview-area]'),
  summary: page.locator('[data-testid=preview-summary]'),
});

/** Wait until the textarea holds (as JSON) the puzzle of puzzles/FILE. */
async function waitTextareaHolds(f, file) {
  const want = readPuzzle(file);
  await eventually(`the textarea holds ${file}`, async () => {
    const v = await f.text.inputValue();
    let got;
    try { got = JSON.parse(v); } catch { throw new Error(`textarea is not JSON yet: ${JSON.stringify(v.slice(0, 80))}`); }
    assert.deepEqual(got, want, `textarea content equals ${file}`);
    return true;
  });
}

function mentionsCount(text, n, word) {
  const re = new RegExp(`(^|[^\\d])${n}\\s*${word}|${word}\\W{0,3}${n}([^\\d]|$)`, 'i');
  return re.test(text);
}

test('nav links and the submit form are present', { timeout: T(100) }, withPage(async (page) => {
  await gotoRoute(page, '#/');
  const navJobs = page.locator('[data-testid=nav-jobs]');
  const navSubmit = page.locator('[data-testid=nav-submit]');
  assert.equal(await navJobs.getAttribute('href'), '#/', 'nav-jobs href');
  assert.equal(await navSubmit.getAttribute('href'), '#/submit', 'nav-submit href');
  await clearReady(page);
  await navSubmit.click();
  await eventually('nav-submit leads to #/submit', async () => (await page.evaluate(() => location.hash)) === '#/submit');
  await waitReady(page, 'submit page after nav click');
  const f = form(page);
  for (const [k, loc] of Object.entries(f)) {
    if (k === 'previewArea' || k === 'summary' || k === 'error' || k === 'file') await loc.waitFor({ state: 'attached' });
    else await loc.waitFor({ state: 'visible' });
  }
  assert.equal(await f.error.getAttribute('role'), 'alert', 'submit-error has role=alert');
  assert.equal((await f.error.textContent()).trim(), '', 'submit-error is empty before any submit');
  const uniques = await f.unique.locator('option').evaluateAll((os) => os.map((o) => o.value));
  for (const u of ['raw', 'rotations', 'mirror']) assert.ok(uniques.includes(u), `unique select has option ${u} (has ${uniques})`);
  const files = await f.library.locator('option').evaluateAll((os) => os.map((o) => o.value));
  const lib = (await api('GET', '/api/v1/puzzles')).json.puzzles.map((p) => p.file);
  for (const file of lib) assert.ok(files.includes(file), `library select offers ${file}`);
  await checkPhone(page, 'submit-empty-phone');
  await clearReady(page);
  await page.locator('[data-testid=nav-jobs]').click();
  await eventually('nav-jobs leads to #/', async () => ['#/', '', '#'].includes(await page.evaluate(() => location.hash)));
  await waitReady(page, 'jobs page after nav click');
}));

test('library 6x10: preview, submit, progress to 1, 2339 solutions', { timeout: T(100) }, withPage(async (page) => {
  const file = 'pentominoes-6x10.json';
  const pz = readPuzzle(file);
  await gotoRoute(page, '#/submit');
  const f = form(page);
  await f.library.selectOption(file);
  await waitTextareaHolds(f, file);

  await f.preview.click();
  await f.previewArea.locator('svg').first().waitFor({ state: 'visible', timeout: T(30) });
  await eventually('the preview summary names 60 cells and 12 pieces', async () => {
    const s = (await f.summary.textContent()) || '';
    assert.ok(mentionsCount(s, 60, 'cells'), `summary mentions 60 cells: ${JSON.stringify(s)}`);
    assert.ok(mentionsCount(s, 12, 'pieces'), `summary mentions 12 pieces: ${JSON.stringify(s)}`);
    return true;
  });
  assert.equal((await f.error.textContent()).trim(), '', 'no error after a good preview');
  await shot(page, 'submit-6x10-preview');
  await checkPhone(page, 'submit-6x10-preview-phone');

  await f.unique.selectOption('rotations');
  // how long would it take: the estimate's timing run finishes the 6x10
  await page.locator('[data-testid=estimate]').click();
  await eventually('the estimate says the exact count', async () =>
    estimateSays(await page.locator('[data-testid=estimate-result]').textContent(), /^Exact: 2,339 solutions, [\d,]+ nodes in /));
  const before = new Set(await jobIds());
  await clearReady(page);
  await f.submit.click();
  const id = await eventually('Submit lands on #/jobs/ID', async () => {
    const m = (await page.evaluate(() => location.hash)).match(/^#\/jobs\/(\d+)$/);
    return m ? Number(m[1]) : false;
  });
  trackJob(id);
  assert.ok(!before.has(id), `job ${id} is new`);
  await waitReady(page, `job page ${id}`);
  const job = await waitJob(id);
  assert.equal(job.state, 'completed', 'API: the job completed');
  assert.equal(job.options.unique, 'rotations', 'API: the form sent unique=rotations');
  assert.equal(job.name, pz.name, 'API: the job has the puzzle name');

  const header = page.locator('[data-testid=job-header]');
  const w = await eventually('the job page shows completed, progress 1, 2339 solutions', async () => {
    const v = await readJobWidgets(header);
    assert.equal(v.state, 'completed', `job-state: ${JSON.stringify(v)}`);
    assert.equal(v.progress, 1, `job-progress value: ${JSON.stringify(v)}`);
    assert.equal(num(v.solutions), pz.expected.rotations, `job-solutions: ${JSON.stringify(v)}`);
    return v;
  }, { timeout: T(60) });
  assert.equal(w.progressTag, 'progress', 'job-progress is a <progress>');
  assert.equal(w.progressMax, '1', 'job-progress has max="1"');
  assert.equal(job.solutions, pz.expected.rotations, 'API agrees: 2339 solutions');
  log(`job ${id}: ${JSON.stringify(w)}`);
  await shot(page, 'submit-6x10-completed');
}));

test('an invalid puzzle shows the server\'s error and creates no job', { timeout: T(100) }, withPage(async (page, { allowConsole }) => {
  // the browser logs "Failed to load resource: ... status of 4xx" for the refused request itself
  allowConsole(/Failed to load resource: the server responded with a status of (400|422)/);
  await gotoRoute(page, '#/submit');
  const f = form(page);
  const bad = { version: 1, name: 'Volume mismatch', board: { size: [3, 1] }, pieces: [{ name: 'D', rows: ['##'] }] };
  await f.text.fill(JSON.stringify(bad, null, 2));
  const before = await jobIds();

  // watch what the page sends, to repeat it ourselves
  const sent = [];
  page.on('response', async (r) => {
    const u = new URL(r.url());
    if (r.request().method() === 'POST' && /^\/api\/v1\/(jobs|validate)$/.test(u.pathname)) {
      sent.push({ path: u.pathname, status: r.status(), body: r.request().postData() });
    }
  });
  await f.submit.click();
  const shown = await eventually('submit-error shows an error', async () => {
    const s = ((await f.error.textContent()) || '').trim();
    return s !== '' ? s : false;
  });
  assert.ok(await f.error.isVisible(), 'submit-error is visible');
  // the same body, posted by us, gives the message the page must show verbatim
  const req = sent.find((s) => s.status >= 400);
  assert.ok(req, `the page posted the puzzle to the API and got an error (requests: ${JSON.stringify(sent)})`);
  const direct = await api('POST', '/api/v1/validate', req.body);
  assert.equal(direct.status, 422, `the server refuses the body with 422: ${direct.text}`);
  assert.match(direct.json.error.message, /2 cells.*3 free cells/, 'the server\'s message is the volume mismatch');
  // the page shows the server's words without the "request body" wrapper the user never wrote
  const want = direct.json.error.message.replace(/^request body: /, '');
  log(`server says ${direct.json.error.message}; page shows ${JSON.stringify(shown)}`);
  assert.equal(shown, want, 'submit-error shows the server\'s message');
  // direct POST to /jobs with the same body: same answer, and still no job
  const viaJobs = await api('POST', '/api/v1/jobs', req.body);
  assert.equal(viaJobs.status, 422, 'POST /jobs of the same body is 422 too');
  assert.equal(viaJobs.json.error.message, direct.json.error.message, 'same message from /jobs');
  assert.deepEqual(await jobIds(), before, 'no job was created');
  assert.match(await page.evaluate(() => location.hash), /^#\/submit/, 'still on the submit page');
  await shot(page, 'submit-invalid-puzzle-error');
  await checkPhone(page, 'submit-invalid-puzzle-error-phone');

  // malformed JSON-ish text
  sent.length = 0;
  await f.text.fill('{"name": "broken", "board": {"size": [3, 1]},');
  await f.submit.click();
  const shown2 = await eventually('submit-error shows an error for malformed text', async () => {
    const s = ((await f.error.textContent()) || '').trim();
    return s !== '' && s !== shown ? s : false;
  });
  log(`malformed text: page shows ${JSON.stringify(shown2)}; requests ${JSON.stringify(sent.map((s) => [s.path, s.status]))}`);
  const req2 = sent.find((s) => s.status >= 400);
  if (req2) {
    // the page left the parsing to the server: its message, with the line and column in words
    const d2 = await api('POST', '/api/v1/validate', req2.body);
    const m = d2.json.error.message.match(/^request body:(\d+):(\d+): (.*)$/);
    assert.ok(m, `the server names line and column: ${d2.json.error.message}`);
    const want2 = `line ${m[1]}, column ${m[2]}: ${m[3]}`;
    assert.equal(shown2, want2, 'submit-error shows the syntax error at its line');
    assert.equal(await page.locator('[data-testid=error-line]').textContent(), '{"name": "broken", "board": {"size": [3, 1]},', 'the line is marked');
  }
  assert.ok(!sent.some((s) => s.path === '/api/v1/jobs' && s.status === 201), 'no successful submit');
  assert.deepEqual(await jobIds(), before, 'no job was created by malformed text');
  await shot(page, 'submit-malformed-error');
}));

test('upload a BurrTools file: inflated in the browser, counted as BurrTools counts it', { timeout: T(100) }, withPage(async (page) => {
  await gotoRoute(page, '#/submit');
  const f = form(page);
  // the Soma cube as BurrTools saves it (gzip-compressed XML, written for the tests)
  await f.file.setInputFiles(path.join(PUZZLES, '..', 'tests', 'fuzz', 'corpus', 'xmpuzzle', 'soma.xmpuzzle'));
  await eventually('the textarea holds the XML', async () => (await f.text.inputValue()).startsWith('<?xml'));
  await f.preview.click();
  await eventually('the preview names 27 cells and 7 pieces', async () => {
    const s = (await f.summary.textContent()) || '';
    return mentionsCount(s, 27, 'cells') && mentionsCount(s, 7, 'pieces');
  });
  await f.unique.selectOption('mirror');
  await page.locator('[data-testid=estimate]').click();
  await eventually('the estimate counts the published 240', async () =>
    estimateSays(await page.locator('[data-testid=estimate-result]').textContent(), /^Exact: 240 solutions/));
  await shot(page, 'submit-xmpuzzle-estimate');
}));

test('upload a file (soma cube): textarea filled, 3D preview', { timeout: T(100) }, withPage(async (page) => {
  await gotoRoute(page, '#/submit');
  const f = form(page);
  await f.file.setInputFiles(path.join(PUZZLES, 'soma-cube.json'));
  await waitTextareaHolds(f, 'soma-cube.json');
  await f.preview.click();
  await eventually('the preview draws the 3D puzzle (canvas or layers)', async () => {
    const n = await f.previewArea.locator('canvas, [data-testid=layer], svg').count();
    assert.ok(n > 0, 'preview-area has a canvas, layers or svg');
    return true;
  });
  await eventually('the preview summary names 27 cells and 7 pieces', async () => {
    const s = (await f.summary.textContent()) || '';
    assert.ok(mentionsCount(s, 27, 'cells'), `summary mentions 27 cells: ${JSON.stringify(s)}`);
    assert.ok(mentionsCount(s, 7, 'pieces'), `summary mentions 7 pieces: ${JSON.stringify(s)}`);
    return true;
  });
  await shot(page, 'submit-soma-upload-preview');
}));

test('the form\'s options reach the job (unique, limit, threads, priority)', { timeout: T(100) }, withPage(async (page) => {
  await gotoRoute(page, '#/submit');
  const f = form(page);
  await f.library.selectOption('pentominoes-6x10.json');
  await waitTextareaHolds(f, 'pentominoes-6x10.json');
  await f.unique.selectOption('raw');
  await f.limit.fill('7');
  await f.threads.fill('1');
  await f.priority.fill('3');
  await clearReady(page);
  await f.submit.click();
  const id = await eventually('Submit lands on #/jobs/ID', async () => {
    const m = (await page.evaluate(() => location.hash)).match(/^#\/jobs\/(\d+)$/);
    return m ? Number(m[1]) : false;
  });
  trackJob(id);
  await waitReady(page, `job page ${id}`);
  const job = await waitJob(id);
  assert.equal(job.state, 'completed', 'the job completed');
  assert.equal(job.options.unique, 'raw', 'unique=raw');
  assert.equal(job.options.limit, 7, 'limit=7');
  assert.equal(job.options.threads, 1, 'threads=1');
  assert.equal(job.options.priority, 3, 'priority=3');
  assert.equal(job.solutions, 7, 'the limit stopped the search at 7 solutions');
  await eventually('the job page shows 7 solutions', async () => {
    const v = await readJobWidgets(page.locator('[data-testid=job-header]'));
    assert.equal(v.state, 'completed', JSON.stringify(v));
    assert.equal(num(v.solutions), 7, JSON.stringify(v));
    return true;
  });
}));

test('a pasted job keeps its options; the library choice is dropped', { timeout: T(100) }, withPage(async (page) => {
  await gotoRoute(page, '#/submit');
  const f = form(page);
  await f.library.selectOption('soma-cube.json');
  await waitTextareaHolds(f, 'soma-cube.json');
  // paste: select all, then text typed in at once (as a paste inserts it)
  const paste = async (text) => {
    await f.text.focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(text);
  };
  // options a pasted job leaves out are the defaults, not the form's earlier values
  await f.unique.selectOption('mirror');
  await f.limit.fill('5');
  await f.threads.fill('2');
  await f.priority.fill('9');
  await paste(JSON.stringify({ puzzle: readPuzzle('soma-cube.json'), options: { unique: 'raw' } }, null, 2));
  await eventually('the options the pasted job leaves out are reset', async () => {
    assert.equal(await f.unique.inputValue(), 'raw');
    assert.equal(await f.limit.inputValue(), '0', 'limit: the default');
    assert.equal(await f.threads.inputValue(), '0', 'threads: the default');
    assert.equal(await f.priority.inputValue(), '0', 'priority: the default');
    return true;
  });
  await f.priority.fill('9');
  const options = { unique: 'mirror', limit: 7, threads: 1 };
  const doc = JSON.stringify({ puzzle: readPuzzle('pentominoes-6x10.json'), options }, null, 2);
  await paste(doc);
  await eventually('the form shows the pasted options', async () => {
    assert.equal(await f.unique.inputValue(), 'mirror');
    assert.equal(await f.limit.inputValue(), '7');
    assert.equal(await f.threads.inputValue(), '1');
    assert.equal(await f.priority.inputValue(), '0', 'priority, left out: the default');
    return true;
  });
  assert.equal(await f.library.inputValue(), '', 'the library no longer names what is in the box');
  await shot(page, 'submit-pasted-job-options');
  await clearReady(page);
  await f.submit.click();
  const id = await eventually('Submit lands on #/jobs/ID', async () => {
    const m = (await page.evaluate(() => location.hash)).match(/^#\/jobs\/(\d+)$/);
    return m ? Number(m[1]) : false;
  });
  trackJob(id);
  await waitReady(page, `job page ${id}`);
  const job = await waitJob(id);
  for (const [k, v] of Object.entries(options)) assert.equal(job.options[k], v, `the job runs with ${k}=${v}`);
  assert.equal(job.options.priority, 0, 'the job runs with the default priority');
  assert.equal(job.solutions, 7, 'stopped at the pasted limit');
}));

test('the option fields are the daemon\'s list; engine options reach the job; a pasted one is the form\'s', { timeout: T(100) }, withPage(async (page, { allowConsole }) => {
  allowConsole(/Failed to load resource: the server responded with a status of 400/);
  const list = (await api('GET', '/api/v1/options')).json;
  await gotoRoute(page, '#/submit');
  const f = form(page);
  // a field per listed option, in its group, with the list's range and values
  for (const o of list.options) {
    const box = page.locator(`[data-testid=${o.group === 'engine' ? 'engine-options' : 'job-options'}]`);
    const c = box.locator(`[data-testid=${o.name}]`);
    assert.equal(await c.count(), 1, `option ${o.name}: one field, among the ${o.group} options`);
    if (o.integer && !o.choices) {
      assert.equal(await c.getAttribute('min'), String(o.integer.min), `${o.name}: min from the list`);
      assert.equal(await c.getAttribute('max'), String(o.integer.max), `${o.name}: max from the list`);
    }
    const values = await c.locator('option').evaluateAll((os) => os.map((x) => x.value));
    for (const ch of o.choices || []) {
      const v = typeof ch.value === 'string' ? ch.value : JSON.stringify(ch.value);
      assert.ok(values.includes(v), `${o.name}: offers ${v} (has ${values})`);
    }
  }
  const modes = (await page.locator('[data-option=unique] .mode-list').textContent()) || '';
  for (const m of list.counting_modes) assert.ok(modes.includes(m.text), `the modes are explained: ${m.name}`);
  assert.match(modes, /turned over is a rotation/, 'a flat board turned over is a rotation');

  await f.library.selectOption('soma-cube.json');
  await waitTextareaHolds(f, 'soma-cube.json');
  await page.locator('.engine-options > summary').click();
  await page.locator('input[data-testid=fila]').fill('0');
  await page.locator('select[data-testid=volume]').selectOption('false');
  await page.locator('select[data-testid=parity]').selectOption({ label: 'a number…' });
  await page.locator('input[data-testid=parity-value]').fill('2');
  await page.locator('select[data-testid=redundancy]').selectOption('false');
  await page.locator('select[data-testid=nof]').selectOption('false');
  await shot(page, 'submit-engine-options');
  await checkPhone(page, 'submit-engine-options-phone');
  await clearReady(page);
  await f.submit.click();
  const id = await eventually('Submit lands on #/jobs/ID', async () => {
    const m = (await page.evaluate(() => location.hash)).match(/^#\/jobs\/(\d+)$/);
    return m ? Number(m[1]) : false;
  });
  trackJob(id);
  await waitReady(page, `job page ${id}`);
  const job = await waitJob(id);
  for (const [k, v] of Object.entries({ fila: 0, volume: false, parity: 2, redundancy: false, nof: false })) {
    assert.deepEqual(job.options[k], v, `the job runs with ${k}=${JSON.stringify(v)}`);
  }
  assert.equal(job.solutions, 480, 'the Soma cube\'s 480 solutions up to rotations, whatever the tuning');

  // a pasted job's engine options fill their fields; the form's word is final
  await gotoRoute(page, '#/submit');
  await f.text.focus();
  await page.keyboard.insertText(JSON.stringify({ puzzle: readPuzzle('soma-cube.json'), options: { fila: 3, volume: 'once', store: 'none', speed: 1 } }));
  await eventually('the pasted options fill the fields', async () => {
    assert.equal(await page.locator('input[data-testid=fila]').inputValue(), '3');
    assert.equal(await page.locator('select[data-testid=volume]').inputValue(), 'once');
    assert.equal(await page.locator('select[data-testid=store]').inputValue(), 'none');
    return true;
  });
  await page.locator('.engine-options > summary').click();
  await page.locator('input[data-testid=fila]').fill('');
  const req = page.waitForRequest((r) => r.url().endsWith('/api/v1/validate'));
  await f.preview.click();
  const sent = JSON.parse((await req).postData()).options;
  assert.equal(sent.fila, undefined, 'fila set back to automatic is left out');
  assert.equal(sent.volume, 'once', 'volume as pasted');
  assert.equal(sent.store, 'none', 'store as pasted');
  assert.equal(sent.speed, 1, 'a key the list lacks goes to the server as written');
}));

test('errors in the user\'s terms: their path, the piece\'s name, the line marked; the format linked; loose pieces warned', { timeout: T(100) }, withPage(async (page, { allowConsole }) => {
  allowConsole(/Failed to load resource: the server responded with a status of (400|422)/);
  await gotoRoute(page, '#/submit');
  const f = form(page);
  // a bare puzzle (the form wraps it in {"puzzle": …}); the fault is in piece "Bad", the third
  const lines = [
    '{"name": "Faulty", "board": {"size": [4, 2]},',
    ' "pieces": [',
    '  {"name": "I", "rows": ["##"]},',
    '  {"name": "J", "rows": ["##"]},',
    '  {"name": "Bad", "rows": ["#x"]},',
    '  {"name": "K", "rows": ["##"]}',
    ' ]}',
  ];
  await f.text.fill(lines.join('\n'));
  await f.preview.click();
  const shown = await eventually('an error is shown', async () => ((await f.error.textContent()) || '').trim() || false);
  log(`page shows ${JSON.stringify(shown)}`);
  assert.match(shown, /^\$\.pieces\[2\]\.rows\[0\] \(piece "Bad", line 5\): invalid character 'x'/, 'the path as written, the piece by name, the line');
  assert.ok(!shown.includes('$.puzzle'), 'no "$.puzzle" the user never typed');
  assert.equal(await page.locator('[data-testid=error-line]').textContent(), lines[4], 'the offending line is marked in the text box');
  await shot(page, 'submit-error-line-marked');
  await checkPhone(page, 'submit-error-line-marked-phone');
  // typing clears the mark
  await f.text.press('End');
  await page.keyboard.insertText(' ');
  await eventually('the mark goes when the text changes', async () => (await page.locator('[data-testid=error-line]').count()) === 0);

  // the format is linked, and the daemon serves it
  const href = await page.locator('[data-testid=format-link]').getAttribute('href');
  assert.equal(href, '#/docs/puzzle-format.md', 'the format, rendered in the dashboard');
  const doc = await api('GET', '/docs/puzzle-format.md');
  assert.equal(doc.status, 200, 'the daemon serves docs/puzzle-format.md');
  assert.match(doc.text, /^# /, 'as the Markdown text');

  // a piece whose cells do not touch: previewed, with a warning
  await f.text.fill(JSON.stringify({ name: 'Loose', board: { size: [3, 1] }, pieces: [{ name: 'Gap', rows: ['#.#'] }, { name: 'M', rows: ['#'] }] }));
  await f.preview.click();
  const warning = page.locator('[data-testid=submit-warning]');
  await warning.waitFor({ state: 'visible' });
  assert.match(await warning.textContent(), /piece "Gap" are not all connected/);
  assert.equal(((await f.error.textContent()) || '').trim(), '', 'a warning, not an error');
  await eventually('the preview is drawn', async () => (await f.previewArea.locator('svg').count()) > 0);
  await shot(page, 'submit-loose-piece-warning');
}));

test('the documentation renders: headings, tables, code, links between docs', { timeout: T(60) }, withPage(async (page) => {
  await gotoRoute(page, '#/docs/puzzle-format.md');
  const doc = page.locator('[data-testid=doc]');
  await doc.locator('h1').first().waitFor();
  assert.equal(await doc.locator('h2#burrtools-files').count(), 1, 'the BurrTools section has its heading');
  assert.ok(await doc.locator('table').count() > 2, 'tables are tables');
  assert.ok(await doc.locator('pre code').count() > 2, 'code blocks are code');
  const text = await doc.textContent();
  assert.ok(!/^#{1,4} /m.test(text) && !text.includes('**') && !text.includes('```'), 'no Markdown marks left in the text');
  // a link to another document stays in the dashboard
  await gotoRoute(page, '#/docs/api.md');
  await doc.locator('h1').first().waitFor();
  const other = doc.locator('a[href="#/docs/engine.md"]').first();
  await clearReady(page);
  await other.click();
  await waitReady(page, 'engine.md from api.md');
  assert.equal(await page.evaluate(() => location.hash), '#/docs/engine.md');
  await doc.locator('h1').first().waitFor();
  await shot(page, 'docs-rendered');
}));
