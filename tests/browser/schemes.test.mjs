// The dark colour scheme (the system's choice) and the print layout: with
// prefers-color-scheme: dark every page is dark with light text, the
// controls and badges included; printing a job page leaves out the
// navigation and the buttons and keeps the solution drawing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  setup, teardown, withPage, gotoRoute, shot, eventually, api, trackJob, waitJob, readPuzzle, T,
} from './lib.mjs';

before(setup, { timeout: T(60) });
after(teardown, { timeout: T(60) });

/** Relative luminance of a CSS rgb()/rgba() colour, 0 (black) to 1 (white). */
function luminance(css) {
  const [r, g, b] = css.match(/[\d.]+/g).slice(0, 3).map(Number).map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

const colours = (page, sel) => page.locator(sel).first().evaluate((el) => {
  const cs = getComputedStyle(el);
  return { bg: cs.backgroundColor, fg: cs.color };
});

test('dark scheme: pages, controls and badges dark with light text', { timeout: T(90) }, withPage(async (page) => {
  const sub = await api('POST', '/api/v1/jobs', { puzzle: readPuzzle('pentominoes-6x10.json'), options: { limit: 5 } });
  trackJob(sub.json.id);
  await waitJob(sub.json.id);
  await page.emulateMedia({ colorScheme: 'dark' });
  for (const [route, name] of [['#/', 'jobs'], ['#/submit', 'submit'], ['#/designer', 'designer'], [`#/jobs/${sub.json.id}`, 'job']]) {
    await gotoRoute(page, route);
    const body = await colours(page, 'body');
    assert.ok(luminance(body.bg) < 0.05, `${name}: the page is dark (${body.bg})`);
    assert.ok(luminance(body.fg) > 0.6, `${name}: its text is light (${body.fg})`);
    const card = await colours(page, '.card');
    assert.ok(luminance(card.bg) < 0.06, `${name}: cards are dark (${card.bg})`);
    const btn = await colours(page, '.btn');
    assert.ok(luminance(btn.bg) < 0.08 || /rgb\(9[0-9], 1[0-9][0-9], 255\)|rgb\(92, 156, 255\)/.test(btn.bg),
      `${name}: buttons are dark or the accent (${btn.bg})`);
    await shot(page, `dark-${name}`);
  }
  const badge = await colours(page, '[data-testid=job-state]');
  assert.ok(luminance(badge.bg) < 0.1 && luminance(badge.fg) > 0.4, `the state badge reads on dark (${badge.bg} / ${badge.fg})`);
}));

test('print: a job page without navigation and buttons, its solution drawn', { timeout: T(90) }, withPage(async (page) => {
  const sub = await api('POST', '/api/v1/jobs', { puzzle: readPuzzle('pentominoes-6x10.json'), options: { limit: 3 } });
  trackJob(sub.json.id);
  await waitJob(sub.json.id);
  await gotoRoute(page, `#/jobs/${sub.json.id}`);
  await page.locator('[data-testid=solution-view]').waitFor();
  assert.ok(await page.locator('.topbar').isVisible(), 'on screen the navigation shows');
  await page.emulateMedia({ media: 'print' });
  await eventually('printed: no navigation, no buttons', async () =>
    !(await page.locator('.topbar').isVisible()) && (await page.locator('.btn:visible, button:visible').count()) === 0);
  assert.ok(await page.locator('[data-testid=solution-view] svg').first().isVisible(), 'the solution is drawn');
  const body = await colours(page, 'body');
  assert.ok(luminance(body.bg) > 0.95, `printed on white (${body.bg})`);
  await shot(page, 'print-job');
}));

test('one-sided pieces l and I are told apart in drawings and legends', { timeout: T(90) }, withPage(async (page) => {
  const sub = await api('POST', '/api/v1/jobs', { puzzle: readPuzzle('onesided-pentominoes-3x30.json'), options: { limit: 1 } });
  trackJob(sub.json.id);
  await waitJob(sub.json.id);
  await gotoRoute(page, `#/jobs/${sub.json.id}`);
  await page.locator('[data-testid=solution-view] svg').first().waitFor();
  const font = await page.locator('[data-testid=solution-view] svg.tiling').first().getAttribute('font-family');
  assert.match(font, /Mono/, `piece names in a monospace face (${font})`);
  const legend = await page.locator('.legend-name').first().evaluate((el) => getComputedStyle(el).fontFamily);
  assert.match(legend, /Mono/, `legend names too (${legend})`);
  await shot(page, 'onesided-l-and-I');
}));

test('a flat solution fits above the fold at 1280x900', { timeout: T(90) }, withPage(async (page) => {
  const sub = await api('POST', '/api/v1/jobs', { puzzle: readPuzzle('pentominoes-6x10.json'), options: { limit: 2 } });
  trackJob(sub.json.id);
  await waitJob(sub.json.id);
  await page.setViewportSize({ width: 1280, height: 900 });
  await gotoRoute(page, `#/jobs/${sub.json.id}`);
  const svg = page.locator('[data-testid=solution-view] svg.tiling').first();
  await svg.waitFor();
  const box = await svg.boundingBox();
  assert.ok(box.y + box.height <= 900, `the drawing ends at ${Math.round(box.y + box.height)} px, above the fold`);
  assert.ok(box.width > 500, `and is still large (${Math.round(box.width)} px wide)`);
  await shot(page, 'job-1280x900');
}));
