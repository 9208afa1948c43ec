// Loads a tiletune report in Debian's headless Chromium (playwright-core drives it; no browser is
// downloaded) and checks what a person would: the page loads with no console error and no
// request leaving the file, every plot has data points, and a screenshot of it is not blank.
//
//   node browser_test.mjs REPORT.html SCREENSHOT.png
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [report, screenshot] = process.argv.slice(2);
if (!report || !screenshot) {
  console.error('usage: node browser_test.mjs REPORT.html SCREENSHOT.png');
  process.exit(2);
}
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(executablePath)) {
  console.error(`${executablePath} is missing: ./scripts/setup.sh installs Debian's chromium`);
  process.exit(1);
}

let failures = 0;
let passed = 0;
function check(ok, what) {
  if (ok) {
    passed++;
    console.log(`ok: ${what}`);
  } else {
    failures++;
    console.log(`FAILED: ${what}`);
  }
}

// A fresh profile, and everything that would reach for the network switched off: on a machine
// without a network Chromium's own background requests otherwise retry and stall.
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tiletune-chromium-'));
// (playwright passes the profile to Chromium as --user-data-dir.)
const browser = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1400, height: 1000 },
  timeout: 60000,
});
try {
  const page = await browser.newPage();
  const errors = [];
  const requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
  await page.goto('file://' + path.resolve(report), { waitUntil: 'load', timeout: 60000 });

  check(errors.length === 0, `no console error (${errors.join(' | ')})`);
  check(requests.length === 0, `no request leaves the file (${requests.join(' ')})`);
  check((await page.locator('script').count()) === 0, 'the report has no script');

  const plots = await page.$$eval('svg.plot', (svgs) => svgs.map((s) => ({
    name: s.getAttribute('data-plot'),
    declared: Number(s.getAttribute('data-points')),
    drawn: s.querySelectorAll('.pt').length,
    width: s.getBoundingClientRect().width,
    height: s.getBoundingClientRect().height,
  })));
  check(plots.length > 0, `the report has plots (${plots.length})`);
  const empty = plots.filter((p) => p.drawn === 0 || p.drawn !== p.declared || p.width < 50 || p.height < 50);
  check(empty.length === 0, `every plot is drawn with its data points (${empty.map((p) => p.name).join(', ')})`);
  const names = new Set(plots.map((p) => p.name.split(':')[0]));
  for (const n of ['status', 'param', 'heatmap', 'occupancy', 'registers', 'progress', 'devices', 'speedup'])
    check(names.has(n), `a '${n}' plot is there`);

  // The first screen, saved, then decoded by the browser itself (in a blank page: the report's
  // Content-Security-Policy rightly refuses even data: images) and checked for ink.
  const png = await page.screenshot({ path: screenshot, fullPage: false });
  const scratch = await browser.newPage();
  const stats = await scratch.evaluate(async (b64) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + b64;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let ink = 0;
    const colors = new Set();
    for (let i = 0; i < d.length; i += 4) {
      if (d[i] < 235 || d[i + 1] < 235 || d[i + 2] < 235) ink++;
      if (i % 64 === 0) colors.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    }
    return { width: c.width, height: c.height, ink: ink / (c.width * c.height), colors: colors.size };
  }, png.toString('base64'));
  check(stats.width === 1400 && stats.height === 1000, `screenshot is 1400x1000 (${stats.width}x${stats.height})`);
  check(stats.ink > 0.02, `screenshot is not blank (${(100 * stats.ink).toFixed(1)} % of its pixels have ink)`);
  check(stats.colors > 20, `screenshot has colors, not one flat shade (${stats.colors} sampled)`);
} finally {
  await browser.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
