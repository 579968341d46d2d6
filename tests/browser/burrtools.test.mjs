// BurrTools files in the dashboard.  A file with two problems (the Soma
// cube, "Cube", and a 3x3 square with an optional centre and 0 to 3
// V-trominoes, "Square": tests/fuzz/corpus/xmpuzzle/soma.xmpuzzle) shows a
// chooser of its problems, by number and name, on the submit page and in
// the designer, and the problem chosen is what preview, estimate, submit
// and Open use (the request carries it; the job's puzzle is the square's
// 9 cells).  The designer's "Save as BurrTools" downloads the daemon's
// gzip-compressed file, which opens back as the same design; a design
// BurrTools cannot express (one-sided 3D pieces) is refused, the piece and
// the rule named.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import zlib from 'node:zlib';
import {
  setup, teardown, withPage, gotoRoute, shot, checkPhone, eventually, api, trackJob, waitJob,
  clickDownload, downloadBytes, keepDownload, num, T, PUZZLES,
} from './lib.mjs';

before(setup, { timeout: T(60) });
after(teardown, { timeout: T(60) });

const TWO_PROBLEMS = path.join(PUZZLES, '..', 'tests', 'fuzz', 'corpus', 'xmpuzzle', 'soma.xmpuzzle');

/** The options of a problem chooser: their texts, and whether it shows. */
async function chooser(page, testid) {
  const sel = page.locator(`select[data-testid=${testid}]`);
  return {
    sel,
    visible: await sel.isVisible(),
    options: await sel.locator('option').allTextContents(),
  };
}

/** The bodies the page posts to `route` from now on. */
function posted(page, route) {
  const bodies = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === route) bodies.push(JSON.parse(r.postData() || 'null'));
  });
  return bodies;
}

test('submit page: a BurrTools file with two problems, the second chosen, previewed, estimated and submitted', { timeout: T(100) }, withPage(async (page) => {
  await gotoRoute(page, '#/submit');
  const summary = page.locator('[data-testid=preview-summary]');
  const validates = posted(page, '/api/v1/validate');
  const submits = posted(page, '/api/v1/jobs');
  assert.equal((await chooser(page, 'problem-select')).visible, false, 'no chooser before a BurrTools file');
  await page.locator('input[type=file][data-testid=puzzle-file]').setInputFiles(TWO_PROBLEMS);
  await eventually('the chooser lists the two problems by number and name', async () => {
    const c = await chooser(page, 'problem-select');
    assert.ok(c.visible, 'the chooser shows');
    assert.deepEqual(c.options, ['1: Cube', '2: Square']);
    return true;
  });
  await page.locator('button[data-testid=preview]').click();
  await eventually('problem 1 previewed: the Soma cube', async () => /27/.test(await summary.textContent()) && /Cube/.test(await summary.textContent()));
  await shot(page, 'burrtools-submit-problem-1');

  await page.locator('select[data-testid=problem-select]').selectOption('2');
  await page.locator('button[data-testid=preview]').click();
  await eventually('problem 2 previewed: the 3x3 square, 9 cells, one piece', async () => {
    const s = await summary.textContent();
    assert.match(s, /Square/, s);
    assert.deepEqual(await summary.locator('dd').allTextContents().then((t) => [num(t[0]), num(t[1])]), [9, 3], `9 cells, 3 pieces at most: ${s}`);
    return true;
  });
  assert.equal(validates.at(-1).problem, 2, 'the preview asked for problem 2');
  await page.locator('button[data-testid=estimate]').click();
  await eventually('the estimate is the square\'s: exactly 0 solutions', async () =>
    /^Exact: 0 solutions/.test(await page.locator('[data-testid=estimate-result]').textContent()));
  await shot(page, 'burrtools-submit-problem-2');
  await checkPhone(page, 'burrtools-submit-problem-2-phone');

  await page.locator('button[data-testid=submit]').click();
  await eventually('submit lands on the job', async () => /^#\/jobs\/\d+$/.test(await page.evaluate(() => location.hash)));
  const id = Number((await page.evaluate(() => location.hash)).split('/')[2]);
  trackJob(id);
  assert.equal(submits.at(-1).problem, 2, 'the job was submitted with problem 2');
  const pz = (await api('GET', `/api/v1/jobs/${id}/puzzle`)).json;
  assert.equal(pz.board.cells.length, 9, 'the job\'s puzzle is the 3x3 square');
  assert.deepEqual(pz.board.optional, [[1, 1, 0]], 'with its optional centre');
  const job = await waitJob(id);
  assert.equal(job.solutions, 0, 'which no set of V-trominoes tiles');

  // a file of one problem: no chooser
  await gotoRoute(page, '#/submit');
  await page.locator('input[type=file][data-testid=puzzle-file]').setInputFiles(path.join(PUZZLES, 'soma-cube.json'));
  await eventually('a JSON file hides the chooser', async () => (await chooser(page, 'problem-select')).visible === false);
}));

async function balance(page) {
  const b = page.locator('[data-testid=balance]');
  return {
    required: num(await b.locator('[data-testid=balance-required]').textContent()),
    optional: num(await b.locator('[data-testid=balance-optional]').textContent()),
    pieces: await page.locator('[data-testid=design-piece]').count(),
  };
}

test('designer: Open chooses the problem, Save as BurrTools downloads a file that opens back, refusals named', { timeout: T(100) }, withPage(async (page, { allowConsole }) => {
  await gotoRoute(page, '#/designer');
  const upload = page.locator('[data-testid=design-upload]');
  const result = page.locator('[data-testid=design-result]');
  await upload.setInputFiles(TWO_PROBLEMS);
  await eventually('problem 1 opened, the chooser shows both', async () => {
    assert.deepEqual(await balance(page), { required: 27, optional: 0, pieces: 7 });
    const c = await chooser(page, 'design-problem');
    assert.ok(c.visible);
    assert.deepEqual(c.options, ['1: Cube', '2: Square']);
    assert.equal(await result.textContent(), 'Opened soma.xmpuzzle, problem 1 of 2.');
    return true;
  });
  await page.locator('select[data-testid=design-problem]').selectOption('2');
  await eventually('problem 2 opened: 8 required cells, the optional centre, one piece', async () => {
    assert.deepEqual(await balance(page), { required: 8, optional: 1, pieces: 1 });
    assert.equal(await result.textContent(), 'Opened soma.xmpuzzle, problem 2 of 2.');
    const counts = await page.locator('[data-testid=design-piece] input').evaluateAll((els) => els.map((e) => e.value));
    assert.deepEqual(counts, ['0', '3'], 'the V in 0 to 3 copies');
    return true;
  });
  await shot(page, 'burrtools-designer-problem-2');
  await checkPhone(page, 'burrtools-designer-problem-2-phone');
  await page.locator('select[data-testid=design-problem]').selectOption('1');
  await eventually('problem 1 again', async () => (await balance(page)).required === 27);

  // Save as BurrTools: the daemon's file, gzip, its problem named after the design (the problem's name)
  const download = await clickDownload(page, page.locator('[data-testid=design-save-burrtools]'));
  assert.equal(download.suggestedFilename(), 'cube.xmpuzzle');
  const bytes = await downloadBytes(download);
  await keepDownload(download, 'burrtools-designer-saved.xmpuzzle');
  assert.deepEqual([...bytes.subarray(0, 2)], [0x1f, 0x8b], 'gzip-compressed');
  const xml = zlib.gunzipSync(bytes).toString('utf8');
  assert.match(xml, /<problem name="Cube" state="0">/);
  assert.equal((xml.match(/<voxel /g) || []).length, 8, 'seven pieces and the result');
  await eventually('the save is reported', async () => /^Saved cube\.xmpuzzle: BurrTools opens it\.$/.test(await result.textContent()));
  // ... and it opens back as the same design, one problem: no chooser
  await upload.setInputFiles({ name: 'saved.xmpuzzle', mimeType: 'application/gzip', buffer: bytes });
  await eventually('the saved file opens back', async () => {
    assert.deepEqual(await balance(page), { required: 27, optional: 0, pieces: 7 });
    assert.equal(await result.textContent(), 'Opened saved.xmpuzzle.');
    assert.equal((await chooser(page, 'design-problem')).visible, false, 'one problem: no chooser');
    return true;
  });

  // one-sided 3D pieces: BurrTools turns every piece all ways, so it is refused, named
  allowConsole(/status of 422/);
  await page.locator('select[data-testid=design-rotations]').selectOption('one-sided');
  await page.locator('[data-testid=design-save-burrtools]').click();
  await eventually('the refusal names the piece and the rule', async () => {
    const e = page.locator('[data-testid=design-error]');
    assert.ok(await e.isVisible());
    assert.match(await e.textContent(), /^Cannot save as BurrTools: piece V: "rotations": "one-sided" gives it 4 orientations on this board where BurrTools, which turns every piece all ways, gives it 12$/);
    return true;
  });
  await shot(page, 'burrtools-designer-refused');
}));
