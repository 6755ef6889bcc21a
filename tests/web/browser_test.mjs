// browser_test.mjs: the web page (make web) in Debian's headless Chromium, driven by
// playwright-core (tests/web/setup installs it into build-web/node/). Registered with ctest
// as web_browser, label web (tests/CMakeLists.txt).
//
//   1. serves build-web/site/ on 127.0.0.1 (web/serve.py, a free port) and opens it;
//   2. the first four console lines must be `attnviz lesson`'s output, line for line;
//   3. keys 1 to 5 must show five different views (the canvas's pixels differ);
//   4. dragging the causality view's strength slider with the mouse must change the
//      applied strength and the picture;
//   5. the reference kernel's trace (every intermediate, x2, y2) must be the native
//      build's JSON byte for byte, at the lesson's size and two larger ones;
//   6. the Train view must train (Space) while the page keeps drawing;
//   7. Ctrl+P must download the view as a PNG; a weights file given to the page's file
//      picker must load with the side panel's Load weights… button; a theme changed with T
//      must still be there after the page is reloaded (the settings in the browser's storage).
// Exit status 0: passed; 1: failed (one line says what); 77: skipped (ctest SKIP_RETURN_CODE),
// when the site or the browser is not there (a failure with ATTNVIZ_WEB_REQUIRED=1).
//
//   node tests/web/browser_test.mjs --site build-web/site --node-modules build-web/node/node_modules \
//        --attnviz build/attnviz --serve web/serve.py [--shots DIR] [--bench FILE.json]
// --shots writes each view's picture (DIR/web-<view>.png); --bench also times forwards in
// the page (attnviz_web_bench) and writes them with the time to the first frame.
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fail, launchChromium, loadPlaywright, parseArgs, sleep } from './page_support.mjs';

const args = parseArgs(process.argv);
const playwright = loadPlaywright(args);

const expected = execFileSync(args.attnviz, ['lesson']).toString().trimEnd().split('\n');

// The server prints its address as its first line.
const server = spawn('python3', [args.serve, args.site, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    if (out.includes('\n')) resolve(out.split('\n')[0].trim());
  });
  server.on('exit', (code) => reject(new Error(`web/serve.py exited with status ${code}`)));
});

const browser = await launchChromium(playwright);

try {
  // 1280 x 720 for the canvas, plus the page's 32-pixel bar.
  const page = await browser.newPage({ viewport: { width: 1280, height: 752 }, deviceScaleFactor: 1 });
  const logs = [];
  const errors = [];
  page.on('console', (m) => (m.type() === 'error' ? errors : logs).push(m.text()));
  page.on('pageerror', (e) => errors.push(e.stack || e.message));
  const opened = Date.now();
  await page.goto(url);

  async function until(what, test, ms = 60000) {
    for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (await test()) return;
    fail(`${what} within ${ms / 1000} s (console: ${JSON.stringify(logs.slice(-5))}, errors: ${JSON.stringify(errors)})`);
  }
  await until('no first frame', () => logs.some((l) => l.startsWith('attnviz: first frame after')));
  const firstFrameMs = Date.now() - opened;

  // 2. The lesson's four lines, first on the console.
  const lesson = logs.slice(0, 4);
  if (JSON.stringify(lesson) !== JSON.stringify(expected))
    fail(`the console's first lines ${JSON.stringify(lesson)} are not attnviz lesson's ${JSON.stringify(expected)}`);
  console.log(`lesson lines match: ${lesson.join(' | ')}`);

  const state = async () => JSON.parse(await page.evaluate(() => Module.ccall('attnviz_web_state', 'string', [], [])));
  // Waits until the state passes `test` and then three more frames, so the picture is drawn.
  async function settle(what, test) {
    let s;
    await until(what, async () => test((s = await state())));
    await until(`${what}: no frames drawn`, async () => (await state()).frames >= s.frames + 3);
  }
  // A key held for two frames: ImGui 1.86 reads the keys' state once a frame, so a press
  // and release within one frame (a slow frame) would be missed, in the page as on a desktop.
  async function tap(key) {
    const s = await state();
    await page.keyboard.down(key);
    await until(`no frames drawn while ${key} was held`, async () => (await state()).frames >= s.frames + 2);
    await page.keyboard.up(key);
  }
  async function picture(name) {
    const png = await page.locator('#canvas').screenshot();
    if (args.shots) fs.writeFileSync(path.join(args.shots, `web-${name}.png`), png);
    return createHash('sha256').update(png).digest('hex');
  }

  // 3. Keys 1 to 5: five views, five different pictures.
  await page.focus('#canvas');
  const views = ['walk', 'qkv', 'scores', 'causality', 'check'];
  const seen = new Map();
  for (let k = 0; k < views.length; ++k) {
    await tap(`Digit${k + 1}`);
    await settle(`key ${k + 1} did not show the ${views[k]} view`, (s) => s.view === views[k]);
    const hash = await picture(views[k]);
    if (seen.has(hash)) fail(`the ${views[k]} view looks exactly like the ${seen.get(hash)} view`);
    seen.set(hash, views[k]);
  }
  console.log('keys 1-5 showed five different views');

  // 4. The causality view's strength slider, dragged with the mouse from 0 to 1.
  await tap('Digit4');
  await settle('key 4 did not bring the causality view back', (s) => s.view === 'causality');
  const before = await state();
  if (before.strength !== 0) fail(`the page starts at strength ${before.strength}, not 0`);
  const beforePicture = await picture('causality-0');
  const rect = await page.evaluate(() => Module.ccall('attnviz_web_widget', 'string', ['string'], ['##strength']));
  if (!rect) fail('the causality view drew no ##strength slider');
  const [x, y, w, h] = rect.split(' ').map(Number);
  await page.mouse.move(x + 4, y + h / 2);
  await page.mouse.down();
  for (let i = 1; i <= 10; ++i) {
    await page.mouse.move(x + 4 + ((w + 20) * i) / 10, y + h / 2);
    await sleep(30);
  }
  await page.mouse.up();
  await settle('dragging the strength slider did not apply strength 1', (s) => s.strength === 1);
  const afterPicture = await picture('causality');
  if (afterPicture === beforePicture) fail('the causality view looks the same at strength 1 as at 0');
  console.log(`dragging the strength slider took the causality view from strength 0 to ${(await state()).strength}`);

  // 5. The same bits as the native build: `attnviz trace` against the page's.
  for (const [c, hds, t, seed, p] of [[8, 2, 4, 0, 2], [64, 4, 32, 3, 5], [96, 6, 48, 1, 40]]) {
    const native = execFileSync(args.attnviz, ['trace', '--n-embd', `${c}`, '--n-head', `${hds}`, '--seq-len', `${t}`,
      '--seed', `${seed}`, '--perturb', `${p}`, '--kernel', 'reference', '--intermediates'], { maxBuffer: 1 << 28 })
      .toString().trimEnd();
    const web = (await page.evaluate((a) => Module.ccall('attnviz_web_trace', 'string',
      ['number', 'number', 'number', 'number', 'number', 'number'], a), [c, hds, t, seed, p, 0])).trimEnd();
    if (web !== native) {
      let at = 0;
      while (at < web.length && web[at] === native[at]) ++at;
      fail(`the page's trace at C ${c}, H ${hds}, T ${t} differs from the native build's at character ${at}: ` +
           `${JSON.stringify(web.slice(Math.max(0, at - 40), at + 40))} against ${JSON.stringify(native.slice(Math.max(0, at - 40), at + 40))}`);
    }
    console.log(`trace at C ${c}, H ${hds}, T ${t}: the native build's ${native.length} bytes, byte for byte`);
  }

  // 6. The Train view trains in slices of each frame: the step count rises and frames go on.
  await tap('Digit6');
  await settle('key 6 did not show the Train view', (s) => s.view === 'train');
  await tap('Space');
  const training = await state();
  await until('the Train view did not reach step 30 after Space', async () => (await state()).train_step >= 30, 120000);
  const trained = await state();
  // A page that trained without returning to the browser would draw no frame meanwhile.
  if (trained.frames < training.frames + 3) fail(`the page drew only ${trained.frames - training.frames} frames while training`);
  await picture('train');
  console.log(`the Train view trained to step ${trained.train_step} in the page, drawing ${trained.frames - training.frames} frames meanwhile`);
  await tap('Space');

  // 7. Files and settings: Ctrl+P downloads the view's PNG; T's theme survives a reload.
  const download = page.waitForEvent('download', { timeout: 60000 });
  await page.keyboard.down('Control');
  await tap('KeyP');
  await page.keyboard.up('Control');
  const file = await download;
  const png = fs.readFileSync(await file.path());
  if (file.suggestedFilename() !== 'attnviz-train.png' || png.subarray(1, 4).toString() !== 'PNG')
    fail(`Ctrl+P downloaded ${file.suggestedFilename()} (${png.length} bytes), not the Train view's PNG`);
  console.log(`Ctrl+P downloaded ${file.suggestedFilename()}, ${png.length} bytes`);
  const weights = path.join(fs.mkdtempSync('/tmp/attnviz-web-'), 'seed5-c16.safetensors');
  execFileSync(args.attnviz, ['save-weights', weights, '--seed', '5', '--n-embd', '16', '--n-head', '4']);
  await tap('Digit1');
  await settle('key 1 did not bring the shape walk back', (s) => s.view === 'walk');
  await page.setInputFiles('#picker', weights);
  await settle('the picked file did not reach the weights field', (s) => s.weights_field === path.basename(weights));
  const load = await page.evaluate(() => Module.ccall('attnviz_web_widget', 'string', ['string'], ['Load weights…']));
  if (!load) fail('the side panel drew no Load weights… button');
  const [lx, ly, lw, lh] = load.split(' ').map(Number);
  await page.mouse.click(lx + lw / 2, ly + lh / 2);
  await settle('Load weights… did not load the picked file', (s) => s.weights === path.basename(weights) && s.n_embd === 16);
  console.log(`the file picker's ${path.basename(weights)} loaded: n_embd ${(await state()).n_embd}`);
  fs.rmSync(path.dirname(weights), { recursive: true });

  const theme = (await state()).theme;
  await tap('KeyT');
  await settle('T did not change the theme', (s) => s.theme !== theme);
  const changed = (await state()).theme;
  await sleep(1000); // IndexedDB's write is asynchronous
  logs.length = 0;
  await page.reload();
  await until('no first frame after the reload', () => logs.some((l) => l.startsWith('attnviz: first frame after')));
  if ((await state()).theme !== changed) fail(`the theme went back from ${changed} to ${(await state()).theme} after a reload`);
  console.log(`the theme (${changed}) was kept across a reload`);

  if (errors.length) fail(`the page reported errors: ${JSON.stringify(errors)}`);

  if (args.bench) {
    const bench = (c, hds, t, kernel, repeat, inner) =>
      page.evaluate((a) => Module.ccall('attnviz_web_bench', 'number', Array(6).fill('number'), a),
                    [c, hds, t, kernel, repeat, inner]);
    const result = {
      first_frame_ms_page: Number(logs.find((l) => l.startsWith('attnviz: first frame after')).match(/after (\d+)/)[1]),
      first_frame_ms_test: firstFrameMs,
      lesson_forward_ms: await bench(8, 2, 4, 0, 7, 20000),
      forward_512_512_8_ms: await bench(512, 8, 512, 1, 7, 1),
    };
    fs.writeFileSync(args.bench, JSON.stringify(result, null, 1) + '\n');
    console.log(JSON.stringify(result));
  }
  console.log('PASS');
} catch (e) {
  if (!process.exitCode) {
    console.log(`FAIL: ${e.message}`);
    process.exitCode = 1;
  }
} finally {
  await browser.close();
  server.kill();
}
