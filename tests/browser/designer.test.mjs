// The designer and batches: draw a 6x6 board with an optional centre by
// dragging, pick the free pentominoes (named F..Z from the library), see the
// balance refuse all 12 and accept "any of them" ranges, submit, and the job
// counts what the library's same puzzle counts; open the job back in the
// designer; a 3x3x3 board of three layers with the Soma set validates; the
// 8x8 board with a 2x2 hole at each position (10 classes) as a batch, its
// members listed fewest solutions first with the centre's 65, one opened.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  setup, teardown, withPage, gotoRoute, waitReady, clearReady, shot, checkPhone, eventually,
  api, trackJob, waitJob, readPuzzle, num, T, PUZZLES,
} from './lib.mjs';

before(setup, { timeout: T(60) });
after(teardown, { timeout: T(60) });

const cell = (page, x, y, z = 0) => page.locator(`svg[data-testid=design-layer][data-z="${z}"] rect[data-x="${x}"][data-y="${y}"]`);

/** Press on cell a, move over to cell b, release: one drag. */
async function drag(page, a, b) {
  const ba = await cell(page, ...a).boundingBox();
  const bb = await cell(page, ...b).boundingBox();
  await page.mouse.move(ba.x + ba.width / 2, ba.y + ba.height / 2);
  await page.mouse.down();
  await page.mouse.move((ba.x + bb.x) / 2 + bb.width / 2, (ba.y + bb.y) / 2 + bb.height / 2, { steps: 3 });
  await page.mouse.move(bb.x + bb.width / 2, bb.y + bb.height / 2, { steps: 3 });
  await page.mouse.up();
}

async function balance(page) {
  const b = page.locator('[data-testid=balance]');
  return {
    required: num(await b.locator('[data-testid=balance-required]').textContent()),
    optional: num(await b.locator('[data-testid=balance-optional]').textContent()),
    pieces: await b.locator('[data-testid=balance-pieces]').textContent(),
    verdict: await b.locator('[data-testid=balance-verdict]').textContent(),
    ok: (await b.getAttribute('data-ok')) === 'true',
  };
}

async function setSize(page, w, hgt, layers) {
  for (const [id, v] of [['board-width', w], ['board-height', hgt], ['board-layers', layers]]) {
    await page.locator(`[data-testid=${id}]`).fill(String(v));
    await page.locator(`[data-testid=${id}]`).dispatchEvent('change');
  }
}

async function addSet(page, label) {
  const sel = page.locator('select[data-testid=set-select]');
  const value = await sel.locator('option', { hasText: label }).first().getAttribute('value');
  await sel.selectOption(value);
}

test('draw a board, pick a set, set ranges, balance, submit, open the result', { timeout: T(100) }, withPage(async (page) => {
  await gotoRoute(page, '#/designer');
  assert.equal(await page.locator('[data-testid=nav-designer]').getAttribute('aria-current'), 'page');
  let b = await balance(page);
  assert.equal(b.required, 36, 'a new design is a 6x6 board, every cell required');
  // the centre 2x2 optional, by dragging a rectangle
  await page.locator('[data-testid=tool-rect]').click();
  await page.locator('[data-testid=brush-opt]').click();
  await drag(page, [2, 2], [3, 3]);
  await eventually('the rectangle made 4 optional cells', async () => {
    b = await balance(page);
    assert.equal(b.required, 32);
    assert.equal(b.optional, 4);
    return true;
  });
  assert.equal(await cell(page, 3, 3).getAttribute('data-state'), 'opt');
  assert.equal(await cell(page, 1, 3).getAttribute('data-state'), 'req');

  await addSet(page, 'Pentominoes, free (12)');
  const pieces = page.locator('[data-testid=design-piece]');
  await eventually('12 pieces listed', async () => (await pieces.count()) === 12);
  const names = await pieces.evaluateAll((els) => els.map((e) => e.dataset.name).sort());
  assert.deepEqual(names, ['F', 'I', 'L', 'N', 'P', 'T', 'U', 'V', 'W', 'X', 'Y', 'Z'], 'conventional names from the library');
  b = await balance(page);
  assert.ok(!b.ok && /at least 60 cells but the board has only 36/.test(b.verdict), `all 12 do not fit: ${b.verdict}`);
  // "any of them": every count 0..1
  const mins = page.locator('[data-testid=piece-min]');
  for (let i = 0; i < 12; i++) {
    await mins.nth(i).fill('0');
    await mins.nth(i).dispatchEvent('change');
  }
  b = await balance(page);
  assert.ok(b.ok, `ranges 0..1 balance: ${b.verdict}`);
  assert.match(b.pieces, /0–60/);
  assert.match(b.verdict, /35 cells covered, 3 of the optional/);
  await shot(page, 'designer-6x6-any7');
  await checkPhone(page, 'designer-6x6-any7-phone');
  // the counting fields come from the daemon's list of options
  const list = (await api('GET', '/api/v1/options')).json;
  const modes = await page.locator('select[data-testid=design-unique] option').evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(modes, list.counting_modes.map((m) => m.name), 'the counting modes of GET /api/v1/options');
  const limit = list.options.find((o) => o.name === 'limit');
  assert.equal(await page.locator('input[data-testid=design-limit]').getAttribute('min'), String(limit.integer.min));
  assert.match(await page.locator('[data-testid=design-modes]').textContent(), /turned over is a rotation/);

  await page.locator('[data-testid=design-validate]').click();
  await eventually('validated', async () => /Valid: 36 cells, 12 pieces/.test(await page.locator('[data-testid=design-result]').textContent()));
  // each piece's placements beside it: the X's centre on any of the 4x4 inner cells
  await eventually('X fits in 16 places', async () =>
    (await page.locator('[data-testid=design-piece][data-name=X] [data-testid=piece-fits]').textContent()) === '16 places');
  assert.equal(await page.locator('[data-testid=design-piece][data-name=I] [data-testid=piece-fits]').textContent(), '24 places', 'I: 6 rows x 2, twice');
  await shot(page, 'designer-6x6-fits');
  await clearReady(page);
  await page.locator('[data-testid=design-submit]').click();
  await eventually('Submit opens the job page', async () => /^#\/jobs\/\d+$/.test(await page.evaluate(() => location.hash)));
  await waitReady(page, 'job page');
  const id = Number((await page.evaluate(() => location.hash)).split('/')[2]);
  trackJob(id);
  const job = await waitJob(id);
  // the same puzzle from the library, counted by the daemon
  const ref = await api('POST', '/api/v1/jobs', readPuzzle('pentominoes-any7-6x6-optional-centre.json'));
  trackJob(ref.json.id);
  const refJob = await waitJob(ref.json.id);
  assert.equal(job.state, 'completed');
  assert.equal(job.solutions, refJob.solutions, 'the designed puzzle counts what the library file counts');
  await page.locator('[data-testid=solution-view]').waitFor();
  await shot(page, 'designer-result-job');

  // back into the designer from the job page
  await clearReady(page);
  await page.locator('[data-testid=open-designer]').click();
  await waitReady(page, 'designer from the job');
  await eventually('the job\'s puzzle in the designer', async () => {
    b = await balance(page);
    assert.equal(b.required, 32);
    assert.equal(b.optional, 4);
    assert.equal(await pieces.count(), 12);
    return true;
  });
}));

test('a piece that fits nowhere is named before anything is submitted', { timeout: T(60) }, withPage(async (page, { allowConsole }) => {
  allowConsole(/status of 422/); // the daemon's answers to validate and submit, on purpose
  await gotoRoute(page, '#/designer');
  // the chosen tool and brush show pressed; nothing to submit without pieces
  assert.equal(await page.locator('[data-testid=tool-paint]').getAttribute('aria-pressed'), 'true', 'Cells tool pressed');
  assert.equal(await page.locator('[data-testid=brush-req]').getAttribute('aria-pressed'), 'true', 'Required brush pressed');
  for (const id of ['design-submit', 'design-estimate', 'design-validate', 'design-batch'])
    assert.ok(await page.locator(`[data-testid=${id}]`).isDisabled(), `${id} is disabled without pieces`);
  await setSize(page, 4, 4, 1);
  await eventually('a 4x4 board', async () => (await balance(page)).required === 16);
  // draw a 5-long bar and an 11-cell block on the small grid
  await page.locator('details.designer-custom > summary').click();
  const grid = page.locator('[data-testid=custom-grid]');
  const draw = async (name, cells) => {
    for (const [x, y] of cells) await grid.locator(`[aria-label="cell ${x}, ${y}"]`).click();
    await page.locator('[data-testid=custom-name]').fill(name);
    await page.locator('[data-testid=custom-add]').click();
  };
  await draw('I5', [[0, 0], [1, 0], [2, 0], [3, 0], [4, 0]]);
  await draw('B', [[0, 0], [1, 0], [2, 0], [3, 0], [0, 1], [1, 1], [2, 1], [3, 1], [0, 2], [1, 2], [2, 2]]);
  const pieces = page.locator('[data-testid=design-piece]');
  await eventually('2 pieces', async () => (await pieces.count()) === 2);
  assert.ok((await balance(page)).ok, 'they balance: 5 + 11 = 16');
  const note = page.locator('[data-testid=design-fits-note]');
  await eventually('the designer names the piece that fits nowhere', async () =>
    (await note.isVisible()) && /^piece I5 fits nowhere on this 4x4 board$/.test(await note.textContent()));
  assert.equal(await page.locator('[data-testid=design-piece][data-name=I5] [data-testid=piece-fits]').textContent(), 'fits nowhere');
  await shot(page, 'designer-fits-nowhere');
  const before = (await api('GET', '/api/v1/jobs')).json.jobs.length;
  await page.locator('[data-testid=design-estimate]').click();
  await eventually('estimate refuses it, naming the piece, and says no more "Estimating"', async () =>
    /^\$\.puzzle: piece I5 fits nowhere on this 4x4 board$/.test(await page.locator('[data-testid=design-error]').textContent()) &&
    !/Estimating/.test(await page.locator('[data-testid=design-result]').textContent()));
  await page.locator('[data-testid=design-submit]').click();
  await eventually('submit refuses it, naming the piece', async () =>
    /piece I5 fits nowhere/.test(await page.locator('[data-testid=design-error]').textContent()));
  assert.equal(await page.evaluate(() => location.hash), '#/designer', 'still in the designer');
  assert.equal((await api('GET', '/api/v1/jobs')).json.jobs.length, before, 'no job was created');
  // a 4-long bar fits: the counts come back beside the pieces
  await page.locator('[aria-label="Remove I5"]').click();
  await draw('I4', [[0, 0], [1, 0], [2, 0], [3, 0]]);
  await draw('M', [[0, 0]]);
  // a drawn piece in two parts is added with a warning
  await draw('Two', [[0, 0], [2, 0]]);
  await eventually('the warning about a piece in parts', async () =>
    /cells of piece "Two" are not all connected/.test(await page.locator('.designer-pieces').evaluate((el) => el.closest('section').textContent)));
  await page.locator('[aria-label="Remove Two"]').click();
  await eventually('I4 fits in 8 places', async () =>
    (await page.locator('[data-testid=design-piece][data-name=I4] [data-testid=piece-fits]').textContent()) === '8 places');
  assert.ok(await note.isHidden(), 'no note once every piece fits');
}));

test('nothing lost: the design survives navigation and reload, leaving and replacing ask first', { timeout: T(90) }, withPage(async (page) => {
  const dialogs = [];
  page.on('dialog', (d) => dialogs.push(d.type())); // the harness accepts them
  await gotoRoute(page, '#/designer');
  // a larger board gets its new area as required cells
  await setSize(page, 8, 6, 1);
  await eventually('8x6: the two new columns filled', async () => (await balance(page)).required === 48);
  await page.locator('[data-testid=design-name]').fill('Kept');
  await page.locator('[data-testid=design-name]').dispatchEvent('change');
  await addSet(page, 'Pentominoes, free (12)');
  const pieces = page.locator('[data-testid=design-piece]');
  await eventually('12 pieces', async () => (await pieces.count()) === 12);
  // the same set again raises every count instead of adding F2, I2, ...
  await addSet(page, 'Pentominoes, free (12)');
  await eventually('counts raised to 2', async () =>
    (await page.locator('[data-testid=piece-max]').evaluateAll((els) => els.map((e) => e.value))).every((v) => v === '2'));
  assert.equal(await pieces.count(), 12, 'still 12 pieces');
  assert.match(await page.locator('.designer-pieces ~ p, [aria-live=polite]').allTextContents().then((t) => t.join(' ')), /counts went up/);
  // away and back: the same design
  await clearReady(page);
  await gotoRoute(page, '#/jobs');
  await gotoRoute(page, '#/designer');
  await eventually('the design is back after navigation', async () => {
    const b = await balance(page);
    return b.required === 48 && (await pieces.count()) === 12 &&
      (await page.locator('[data-testid=design-name]').inputValue()) === 'Kept';
  });
  // a reload asks first (the design was never downloaded or submitted), and keeps it
  await page.reload();
  await waitReady(page, 'designer after reload');
  assert.ok(dialogs.includes('beforeunload'), `leaving asked first: ${dialogs}`);
  await eventually('the design is back after a reload', async () =>
    (await balance(page)).required === 48 && (await pieces.count()) === 12);
  await shot(page, 'designer-kept-after-reload');
  // a new design asks first, then starts over
  await page.locator('[data-testid=design-new]').click();
  await eventually('a new design', async () => (await balance(page)).required === 36 && (await pieces.count()) === 0);
  assert.ok(dialogs.includes('confirm'), `replacing asked first: ${dialogs}`);
}));

test('Open a file: a BurrTools file, polycube text, and bad JSON named by its line', { timeout: T(60) }, withPage(async (page, { allowConsole }) => {
  allowConsole(/status of 400/); // the daemon's answer to the bad JSON, on purpose
  await gotoRoute(page, '#/designer');
  const upload = page.locator('[data-testid=design-upload]');
  const pieces = page.locator('[data-testid=design-piece]');
  await upload.setInputFiles(path.join(PUZZLES, '..', 'tests', 'fuzz', 'corpus', 'xmpuzzle', 'soma.xmpuzzle'));
  await eventually('the BurrTools Soma cube opened', async () =>
    (await balance(page)).required === 27 && (await pieces.count()) === 7);
  await shot(page, 'designer-open-xmpuzzle');
  // a coloured file opens with its colours, and says how many (colours.test.mjs tests them)
  await upload.setInputFiles(path.join(PUZZLES, '..', 'tests', 'fuzz', 'corpus', 'xmpuzzle', 'colours.xml'));
  await eventually('a coloured BurrTools file opened, its colours and pairs counted', async () =>
    (await balance(page)).required === 4 &&
    /^Opened colours\.xml, problem 1 of 2: 2 colours, 2 allowed pairs\.$/.test(await page.locator('[data-testid=design-result]').textContent()));
  assert.equal(await page.locator('svg[data-testid=design-layer] .dcell[data-color]').count(), 4, 'its board\'s 4 cells coloured');
  await shot(page, 'designer-open-coloured');
  await upload.setInputFiles(path.join(PUZZLES, 'polycube', 'pentominoes-6x10.txt'));
  await eventually('the polycube 6x10 opened', async () =>
    (await balance(page)).required === 60 && (await pieces.count()) === 12);
  await upload.setInputFiles({ name: 'bad.json', mimeType: 'application/json',
    buffer: Buffer.from('{"board": {"size": [2, 2]},\n "pieces": [\n  {"name": "D" "rows": ["##"]}]}') });
  await eventually('bad JSON: the file and the line named', async () =>
    /^bad\.json: line 3, column \d+: JSON syntax error/.test(await page.locator('[data-testid=design-error]').textContent()));
}));

test('the piece editor: layers, turn, mirror, shift, undo and redo, a library piece edited', { timeout: T(60) }, withPage(async (page) => {
  await gotoRoute(page, '#/designer');
  await page.locator('details.designer-custom > summary').click();
  const ed = page.locator('[data-testid=piece-editor]');
  const cellAt = (x, y, z) => ed.locator(`[aria-label="cell ${x}, ${y}, layer ${z}"]`);
  const on = async () => (await ed.locator('.custom-cell[aria-pressed=true]').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')))).sort();
  await ed.locator('[data-testid=edit-l]').fill('2');
  await ed.locator('[data-testid=edit-l]').dispatchEvent('change');
  for (const [x, y, z] of [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]]) await cellAt(x, y, z).click();
  const drawn = await on();
  assert.equal(drawn.length, 5, `five cubes drawn (no Soma piece): ${drawn}`);
  await ed.locator('[data-testid=edit-turn]').click();
  const turned = await on();
  assert.notDeepEqual(turned, drawn, 'a turn moves the cells');
  assert.equal(turned.length, 5);
  await ed.locator('[data-testid=edit-undo]').click();
  assert.deepEqual(await on(), drawn, 'undo takes the turn back');
  await ed.locator('[data-testid=edit-redo]').click();
  assert.deepEqual(await on(), turned, 'redo turns it again');
  await ed.locator('[data-testid=edit-undo]').click();
  await ed.locator('[data-testid=edit-right]').click();
  assert.ok((await on()).includes('cell 2, 0, layer 0'), 'shifted right');
  await ed.locator('[data-testid=edit-mirror]').click();
  assert.equal((await on()).length, 5, 'mirrored, still five cubes');
  await ed.locator('[data-testid=custom-name]').fill('Q');
  await ed.locator('[data-testid=custom-add]').click();
  const q = page.locator('[data-testid=design-piece][data-name=Q]');
  await q.waitFor();
  assert.equal(await q.locator('svg.piece-iso').count(), 1, 'a 3D piece is drawn as one solid piece');
  // a library piece, opened, turned over and saved over itself
  await addSet(page, 'Soma (7)');
  await eventually('8 pieces', async () => (await page.locator('[data-testid=design-piece]').count()) === 8);
  const kept = () => page.evaluate(() => JSON.parse(localStorage.getItem('tessera.designer')).puzzle);
  const before = (await kept()).pieces.find((p) => p.name === 'A').cells;
  await page.locator('[data-testid=design-piece][data-name=A] [data-testid=piece-edit]').click();
  assert.equal((await on()).length, 4, 'the screw A opened in the editor');
  assert.match(await ed.locator('[data-testid=custom-add]').textContent(), /Save A/);
  await ed.locator('[data-testid=edit-tip]').click();
  await ed.locator('[data-testid=custom-add]').click();
  await eventually('A saved with new cells', async () =>
    JSON.stringify((await kept()).pieces.find((p) => p.name === 'A').cells) !== JSON.stringify(before));
  assert.equal((await kept()).pieces.length, 8, 'saved over itself, not added');
  // how pieces may turn is the designer's to set
  await page.locator('[data-testid=design-rotations]').selectOption('one-sided');
  await eventually('one-sided kept', async () => (await kept()).rotations === 'one-sided');
  await shot(page, 'designer-piece-editor');
}));

test('fixed pieces: kept from a job, drawn with the fixed brush, counted as the JSON puzzle is', { timeout: T(90) }, withPage(async (page) => {
  // the 8x8 with a fixed 2x2 in the centre, opened from its job: the fixed piece is kept
  const ref = await api('POST', '/api/v1/jobs', { puzzle: readPuzzle('pentominoes-8x8-fixed-center.json'), options: { limit: 1 } });
  trackJob(ref.json.id);
  await waitJob(ref.json.id);
  await gotoRoute(page, `#/designer/job/${ref.json.id}`);
  await eventually('the board with its fixed centre', async () => (await balance(page)).required === 60 &&
    (await page.locator('rect[data-state=fix]').count()) === 4);
  const kept = () => page.evaluate(() => JSON.parse(localStorage.getItem('tessera.designer')).puzzle);
  const fixedOut = (await kept()).pieces.filter((p) => p.fixed);
  assert.deepEqual(fixedOut.map((p) => [p.name, p.cells.length]), [['O', 4]], 'written back as the fixed piece O');
  // a new design: a 4x4 board, two fixed corners drawn with the brush, seven dominoes
  await page.locator('[data-testid=design-new]').click();
  await setSize(page, 4, 4, 1);
  await eventually('4x4', async () => (await balance(page)).required === 16);
  await page.locator('[data-testid=brush-fix]').click();
  await cell(page, 0, 0).click();
  await cell(page, 3, 0).click();
  await eventually('two fixed cells, 14 required', async () => (await balance(page)).required === 14);
  await page.locator('details.designer-custom > summary').click();
  const ed = page.locator('[data-testid=piece-editor]');
  for (const x of [0, 1]) await ed.locator(`[aria-label="cell ${x}, 0"]`).click();
  await ed.locator('[data-testid=custom-name]').fill('D');
  await ed.locator('[data-testid=custom-add]').click();
  const lo = page.locator('[data-testid=design-piece][data-name=D] [data-testid=piece-min]');
  const hi = page.locator('[data-testid=design-piece][data-name=D] [data-testid=piece-max]');
  await hi.fill('7'); await hi.dispatchEvent('change');
  await lo.fill('7'); await lo.dispatchEvent('change');
  await eventually('balanced', async () => (await balance(page)).ok);
  const pz = await kept();
  assert.deepEqual(pz.pieces.filter((p) => p.fixed).map((p) => p.cells), [[[0, 0, 0]], [[3, 0, 0]]], 'two fixed pieces');
  await clearReady(page);
  await page.locator('[data-testid=design-submit]').click();
  await eventually('Submit opens the job page', async () => /^#\/jobs\/\d+$/.test(await page.evaluate(() => location.hash)));
  await waitReady(page, 'job page');
  const id = Number((await page.evaluate(() => location.hash)).split('/')[2]);
  trackJob(id);
  const job = await waitJob(id);
  const direct = await api('POST', '/api/v1/jobs', { puzzle: pz, options: { unique: 'rotations' } });
  trackJob(direct.json.id);
  assert.equal(job.solutions, (await waitJob(direct.json.id)).solutions, 'the designed puzzle counts what its JSON counts');
  assert.ok(job.solutions > 0, `some tilings (${job.solutions})`);
}));

test('a 3D board as stacked layers with the Soma set', { timeout: T(60) }, withPage(async (page) => {
  await gotoRoute(page, '#/designer');
  await setSize(page, 3, 3, 3);
  await eventually('three layers drawn', async () => (await page.locator('svg[data-testid=design-layer]').count()) === 3);
  // layer 0 kept its cells; fill the two new layers with the fill tool
  await page.locator('[data-testid=tool-fill]').click();
  await page.locator('[data-testid=brush-req]').click();
  await cell(page, 1, 1, 1).click();
  await cell(page, 0, 2, 2).click();
  await addSet(page, 'Soma (7)');
  await eventually('7 Soma pieces', async () => (await page.locator('[data-testid=design-piece]').count()) === 7);
  const b = await balance(page);
  assert.equal(b.required, 27);
  assert.ok(b.ok, b.verdict);
  await page.locator('[data-testid=design-validate]').click();
  await eventually('the cube validates', async () => /Valid: 27 cells, 7 pieces/.test(await page.locator('[data-testid=design-result]').textContent()));
  await shot(page, 'designer-soma-layers');
}));

test('a batch: the 8x8 with a 2x2 hole at each position', { timeout: T(100) }, withPage(async (page) => {
  await gotoRoute(page, '#/designer');
  await page.locator('[data-testid=design-name]').fill('Pentominoes 8x8');
  await setSize(page, 8, 8, 1);
  await page.locator('[data-testid=tool-fill]').click();
  await cell(page, 7, 7).click(); // the new cells, one region, made required
  await addSet(page, 'Pentominoes, free (12)');
  await eventually('12 pieces', async () => (await page.locator('[data-testid=design-piece]').count()) === 12);
  let b = await balance(page);
  assert.equal(b.required, 64);
  assert.ok(!b.ok && /4 short|cover at most 60/.test(b.verdict), `the whole 8x8 does not balance: ${b.verdict}`);
  await page.locator('select[data-testid=hole-shape]').selectOption('##/##');
  await clearReady(page);
  await page.locator('[data-testid=design-batch]').click();
  await eventually('the batch page opens', async () => /^#\/batches\/\d+$/.test(await page.evaluate(() => location.hash)));
  await waitReady(page, 'batch page');
  const rows = page.locator('tr[data-testid=member-row]');
  await eventually('10 members, every one completed', async () => {
    assert.equal(await rows.count(), 10, 'one member per symmetry class of the hole');
    const states = await rows.locator('[data-testid=job-state]').allTextContents();
    assert.deepEqual([...new Set(states)], ['completed'], `states: ${states}`);
    return true;
  }, { timeout: T(90) });
  const counts = (await rows.locator('[data-testid=member-solutions]').allTextContents()).map(num);
  assert.deepEqual(counts, [...counts].sort((x, y) => x - y), 'fewest solutions first');
  const centre = rows.filter({ hasText: 'hole at (3, 3)' });
  assert.equal(num(await centre.locator('[data-testid=member-solutions]').textContent()),
    readPuzzle('pentominoes-8x8-center-hole.json').expected.rotations, 'the centre hole: Scott\'s 65');
  for (const id of await rows.evaluateAll((els) => els.map((e) => Number(e.dataset.jobId)))) trackJob(id);
  await shot(page, 'batch-8x8-holes');
  await checkPhone(page, 'batch-8x8-holes-phone');
  // the list of batches, then one member's solutions
  await gotoRoute(page, '#/batches');
  await eventually('the batch is listed', async () => /Pentominoes 8x8/.test(await page.locator('[data-testid=batch-list]').textContent()));
  await page.goBack();
  await waitReady(page, 'batch page again');
  await clearReady(page);
  await centre.locator('[data-testid=member-name]').click();
  await waitReady(page, 'member job page');
  await page.locator('[data-testid=solution-view]').waitFor();
  assert.match(await page.locator('[data-testid=solution-index]').textContent(), /1 \/ 65/);
  assert.match(await page.locator('[data-testid=job-batch]').textContent(), /batch \d+/);
}));
