// follow_test.mjs: Follow the teacher (attnviz --serve) in Debian's headless Chromium, driven
// by playwright-core like browser_test.mjs. Registered with ctest as web_follow, label web.
//
//   1. the teacher's window (attnviz_harness --serve --follow-stdin, under xvfb-run) serves
//      build-web/site/ on 127.0.0.1 with a free port and a class code; three pages open the
//      URL of its QR code (the code in it); a page without the code asks for it, and joins
//      when it is typed;
//   2. each page shows the teacher's state (view, perturbed position, strength) on arrival;
//   3. the window changes view and strength five times: every page applies each change (waited
//      for with a generous deadline; how long it took is printed, a measurement, not a bound:
//      CI's machine is loaded);
//   4. one page explores on its own (its switch), changes view with a key and keeps it while
//      the teacher changes; Back to the teacher gives it the teacher's latest at once;
//   5. in the check view the pages answer question 1 with a click (one changes its mind): the
//      teacher's window counts each page once, its latest answer; its Show the answer shows
//      it on every page, and its Clear clears the pages;
//   6. every page shows the teacher's numbers bit for bit (a hash of the shown x, weights and
//      y), for the lesson and after the window opens a trained model (--model-file): the
//      pages fetch its weights from the window, as they fetch a weights file's block
//      (--weights-file, layer 1); a GPT model (--gpt-dir) from the parts the window sends of
//      what is on screen (its layers 0 and 1, the walk, Model and causality views), never
//      its weights file, and an exploring page says the model lives on the teacher's computer;
//      The Train view: the window trains to step 120, each page's run goes on with it to the
//      same weights, up to the products' rounding (OpenBLAS in the window, Eigen in the page);
//      the Generate view: the window takes three steps, of the lesson's module (every page
//      writes the same rows again) and of the GPT model (sent): every page shows the same
//      generation (a hash of its tokens, the picture's rows and the next-token bars);
//   7. a page's canvas (900 x 560, the window's size) has the window's pixels in every matrix
//      and colour bar the window drew, up to the two GL implementations' rounding (Mesa's
//      in the window, SwiftShader's in Chromium): no channel of any pixel off by more than 4.
// Exit status 0: passed; 1: failed (one line says what); 77: skipped, as browser_test.mjs.
//
//   node tests/web/follow_test.mjs --site build-web/site --node-modules build-web/node/node_modules \
//        --harness build/attnviz_harness [--gpt-dir tests/data/gpt_tiny/gpt2 --shots DIR]
// (--shots DIR keeps page 0's canvas at each step of the GPT model as DIR/follow-gpt-*.png,
// and a 1280 x 800 page following the Generate view as DIR/follow-{lesson,gpt}-generate-1280.png.)
import { spawn } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodePng, fail, launchChromium, loadPlaywright, parseArgs, sleep } from './page_support.mjs';

const args = parseArgs(process.argv);
const playwright = loadPlaywright(args);

const port = await new Promise((resolve) => {
  const s = net.createServer();
  s.listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});

// The teacher's window: its stdout says where it serves, then "published LINE" per edit.
const teacher = spawn('xvfb-run', ['-a', args.harness, '--serve', '--bind', '127.0.0.1', '--port', String(port),
  '--site', args.site, '--follow-stdin', '--size', '900x560', '--view', 'causality', '--perturb', '2',
  '--strength', '0.25'], { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
let teacherOut = '';
let qrUrl = ''; // the URL its QR code holds, with the class code
const published = [];
const answerLines = [];
const fingerprints = [];
const shots = [];
const trainPrints = [];
const gridPrints = [];
const generatePrints = [];
teacher.stdout.on('data', (d) => {
  teacherOut += d;
  for (let nl; (nl = teacherOut.indexOf('\n')) >= 0; teacherOut = teacherOut.slice(nl + 1)) {
    const line = teacherOut.slice(0, nl);
    const m = line.match(/^published (\d+) (.*)$/);
    if (m) published.push({ line: m[2], at: Number(m[1]) });
    else if (line.startsWith('answers ')) answerLines.push(line);
    else if (line.startsWith('fingerprint ')) fingerprints.push(line.slice(12));
    else if (line.startsWith('shot ')) shots.push(line.slice(5));
    else if (line.startsWith('train-fingerprint ')) trainPrints.push(line.slice(18));
    else if (line.startsWith('grid-fingerprint ')) gridPrints.push(line.slice(17));
    else if (line.startsWith('generate-fingerprint ')) generatePrints.push(line.slice(21));
    else {
      const q = line.match(/^attnviz: serving the class at (\S+\?code=[A-Z0-9]{6}) /);
      if (q) qrUrl = q[1];
      console.log(`teacher: ${line}`);
    }
  }
});
async function untilTrue(what, test, ms) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(10)) if (await test()) return Date.now();
  fail(`${typeof what === 'function' ? what() : what} within ${ms / 1000} s`);
}
// Waits for the teacher's server: /follow.json answers.
await untilTrue('the teacher\'s window did not serve', async () => {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/follow.json`);
    return r.ok;
  } catch (e) {
    return false;
  }
}, 60000);
await untilTrue('the teacher\'s window printed no URL with a class code', () => qrUrl !== '', 10000);
const url = qrUrl;

const browser = await launchChromium(playwright);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-follow-')); // the window's pictures (7.)

async function edit(line) {
  const n = published.length;
  teacher.stdin.write(line + '\n');
  await untilTrue(`the teacher's window did not publish "${line}"`, () => published.length > n, 10000);
  return published[n].at;
}

try {
  const pages = [];
  for (let i = 0; i < 3; ++i) {
    const page = await browser.newPage({ viewport: { width: 900, height: 592 }, deviceScaleFactor: 1 });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.stack || e.message));
    await page.goto(url);
    pages.push({ page, errors });
  }
  const state = async (p) => JSON.parse(await p.page.evaluate(() =>
    (typeof Module !== 'undefined' && Module.calledRun) ? Module.ccall('attnviz_web_state', 'string', [], []) : '{}'));
  const same = (s, want) => s.view === want.view && s.p === want.p && Math.abs(s.strength - want.strength) < 1e-6;

  // 2. On arrival: the teacher's state.
  let want = { view: 'causality', p: 2, strength: 0.25 };
  for (const [i, p] of pages.entries())
    await untilTrue(`page ${i} did not show the teacher's state on arrival (errors: ${p.errors})`,
      async () => { const s = await state(p); return s.follow === 'follow' && same(s, want); }, 60000);
  console.log('three pages show the teacher\'s state on arrival');

  // 1b. A page opened without the code asks for it, and follows once it is typed.
  {
    const page = await browser.newPage({ viewport: { width: 900, height: 592 }, deviceScaleFactor: 1 });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.stack || e.message));
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForSelector('#code-prompt:not([hidden])', { timeout: 60000 });
    if (args.shots) await page.screenshot({ path: path.join(args.shots, 'follow-code-prompt.png') });
    await page.fill('#code-input', url.slice(url.indexOf('?code=') + 6).toLowerCase());
    await page.click('#code-join');
    await untilTrue(`the page did not follow after its code was typed (errors: ${errors})`,
      async () => { const s = await state({ page }); return s.follow === 'follow' && same(s, want); }, 60000);
    await page.close();
    console.log('a page without the code asked for it and followed once it was typed');
  }

  // 3. Five changes of view and strength: every page follows each (measured, not bounded).
  const steps = [['view scores', { view: 'scores' }], ['strength 0.75', { strength: 0.75 }], ['view walk', { view: 'walk' }],
                 ['view causality', { view: 'causality' }], ['strength 1', { strength: 1 }]];
  let worst = 0;
  const lat = [];
  for (const [line, change] of steps) {
    want = { ...want, ...change };
    const at = await edit(line);
    for (const [i, p] of pages.entries()) {
      let s;
      await untilTrue(`page ${i} did not follow "${line}"`, async () => same((s = await state(p)), want), 30000);
      // The page's own clock when it applied the state (the same machine's clock as the window's).
      worst = Math.max(worst, s.follow_applied_ms - at);
      lat.push(`${s.follow_received_ms - at}/${s.follow_applied_ms - at}`);
    }
  }
  console.log(`every page followed five changes, the slowest ${worst} ms after publishing (each page and change, arrived/applied: ${lat.join(" ")} ms)`);

  // 4. Explore on my own, then Back to the teacher.
  const p0 = pages[0];
  async function click(label) {
    const r = (await p0.page.evaluate((l) => Module.ccall('attnviz_web_widget', 'string', ['string'], [l]), label))
      .split(' ').map(Number);
    if (r.length !== 4 || Number.isNaN(r[0])) fail(`the page has no "${label}" widget`);
    await p0.page.mouse.click(r[0] + r[2] / 2, r[1] + r[3] / 2);
  }
  await click('Explore on my own');
  await untilTrue('the page did not switch to exploring', async () => (await state(p0)).follow === 'explore', 10000);
  await p0.page.focus('#canvas');
  await p0.page.keyboard.down('Digit2');
  await sleep(200);
  await p0.page.keyboard.up('Digit2');
  await untilTrue('the exploring page did not take its own key 2', async () => (await state(p0)).view === 'qkv', 10000);
  want = { ...want, view: 'scores', strength: 0.5 };
  // The exploring page receives each of the teacher's states (its follow_received_ms moves)
  // and keeps its own view: waited for the arrival, not for a fixed time.
  const arrived = async (after, what) => {
    let r = after;
    await untilTrue(`the exploring page did not receive the teacher's "${what}"`,
      async () => (r = (await state(p0)).follow_received_ms) > after, 10000);
    return r;
  };
  const r0 = (await state(p0)).follow_received_ms;
  await edit('view scores');
  const r1 = await arrived(r0, 'view scores');
  await edit('strength 0.5');
  for (const [i, p] of pages.slice(1).entries())
    await untilTrue(`page ${i + 1} did not follow while page 0 explored`, async () => same(await state(p), want), 10000);
  await arrived(r1, 'strength 0.5');
  if ((await state(p0)).view !== 'qkv') fail('the exploring page was moved by the teacher');
  await click('Back to the teacher');
  await untilTrue('Back to the teacher did not give the teacher\'s latest state',
    async () => { const s = await state(p0); return s.follow === 'follow' && same(s, want); }, 10000);
  console.log('a page explored on its own, kept its view while the teacher changed, and came back');

  // 5. Check yourself: each page clicks its answer to question 1; the teacher's window counts.
  await edit('view check');
  for (const [i, p] of pages.entries())
    await untilTrue(`page ${i} did not follow to the check view`, async () => (await state(p)).view === 'check', 10000);
  async function answer(p, label) {
    let r = [];
    await untilTrue(`the page has no "${label}" widget`, async () => {
      r = (await p.page.evaluate((l) => Module.ccall('attnviz_web_widget', 'string', ['string'], [l]), label))
        .split(' ').map(Number);
      return r.length === 4 && !Number.isNaN(r[0]);
    }, 10000);
    await p.page.mouse.click(r[0] + r[2] / 2, r[1] + r[3] / 2);
  }
  // Asks the window for its counts until they are `want`, each reply waited for.
  const teacherCounts = async (want) => {
    let got = '';
    await untilTrue(() => `the teacher's window did not count "${want}" (last: "${got}")`, async () => {
      const n = answerLines.length;
      teacher.stdin.write('answers\n');
      await untilTrue('the teacher\'s window did not print its answers', () => answerLines.length > n, 10000);
      got = answerLines[n];
      return got === want;
    }, 30000);
  };
  await answer(pages[0], 'A##answer1');
  await answer(pages[1], 'C##answer1');
  await answer(pages[2], 'A##answer1');
  await teacherCounts('answers 2,0,1,0 0,0,0 0,0,0 0,0,0 0,0,0,0 0,0,0,0');
  await answer(pages[1], 'B##answer1'); // a change of mind replaces the earlier answer
  await teacherCounts('answers 2,1,0,0 0,0,0 0,0,0 0,0,0 0,0,0,0 0,0,0,0');
  for (const [i, p] of pages.entries()) {
    const s = await state(p);
    if (s.answers[0] !== [0, 1, 0][i] || s.answers_pending[0]) fail(`page ${i} shows answer ${s.answers[0]} (pending ${s.answers_pending[0]})`);
  }
  // The teacher's Show the answer shows it on every page.
  await edit('reveal 0');
  for (const [i, p] of pages.entries())
    await untilTrue(`page ${i} did not show question 1's answer when the teacher did`,
      async () => (await state(p)).answers_shown[0] === true, 10000);
  await edit('clear 0');
  await teacherCounts('answers 0,0,0,0 0,0,0 0,0,0 0,0,0 0,0,0,0 0,0,0,0');
  for (const [i, p] of pages.entries())
    await untilTrue(`page ${i} kept its answer after the teacher cleared it`, async () => (await state(p)).answers[0] === -1, 10000);
  console.log('three pages answered question 1, the teacher\'s window counted each once, and its Clear cleared the pages');

  // 6. The same numbers, bit for bit: the lesson, then a trained model the window opens.
  async function teacherFingerprint() {
    const n = fingerprints.length;
    teacher.stdin.write('fingerprint\n');
    await untilTrue('the teacher\'s window did not print its fingerprint', () => fingerprints.length > n, 10000);
    return fingerprints[n];
  }
  async function sameNumbers(what, extra = () => true) {
    const want = await teacherFingerprint();
    for (const [i, p] of pages.entries()) {
      let s = {};
      await untilTrue(() => `page ${i} did not show the teacher's numbers for ${what} (teacher ${want}, page ` +
                      `${s.fingerprint}, model "${s.model}", view ${s.view}, status "${s.status}", note "${s.follow_note}", ` +
                      `errors ${JSON.stringify(p.errors)})`,
        async () => { s = await state(p); return s.fingerprint === want && extra(s); }, 20000);
    }
    return want;
  }
  // 7. The same pixels where the numbers are drawn (the side panels differ: a page's has
  // the Follow switch). The window's picture and layout (harness "screenshot"), the page's canvas.
  await edit('hide-address');
  async function samePixels(what) {
    const file = path.join(tmp, `teacher-${shots.length}.png`);
    const n = shots.length;
    teacher.stdin.write(`screenshot ${file}\n`);
    await untilTrue('the teacher\'s window did not write its picture', () => shots.length > n, 10000);
    const want = decodePng(fs.readFileSync(file));
    const items = JSON.parse(fs.readFileSync(file + '.json', 'utf8')).items
      .filter((it) => it.kind === 'heatmap' || it.kind === 'colorbar');
    if (!want || items.length === 0) fail(`the teacher's picture of ${what} has no matrix to compare`);
    let report = '';
    for (const [i, p] of pages.entries()) {
      await p.page.mouse.move(2, want.h - 2); // off the matrices: a hovered cell is outlined on that screen only
      await untilTrue(() => `page ${i} does not show the teacher's pixels for ${what}: ${report}`, async () => {
        const got = decodePng(await p.page.locator('#canvas').screenshot());
        if (!got || got.w !== want.w || got.h !== want.h) {
          report = `its canvas is ${got && got.w} x ${got && got.h}, the window ${want.w} x ${want.h}`;
          return false;
        }
        let compared = 0, differ = 0, worst = 0, off = 0;
        for (const it of items)
          for (let y = Math.ceil(it.y); y < Math.floor(it.y + it.h); ++y)
            for (let x = Math.ceil(it.x); x < Math.floor(it.x + it.w); ++x) {
              const a = want.rgb(x, y), b = got.rgb(x, y);
              const d = Math.max(...a.map((v, k) => Math.abs(v - b[k])));
              ++compared;
              if (d > 0) ++differ;
              if (d > 4) ++off;
              worst = Math.max(worst, d);
            }
        report = `${compared} pixels of ${items.length} matrices and colour bars, ${differ} differ, ${off} by more than 4, ` +
                 `the most by ${worst}`;
        return off === 0;
      }, 10000);
    }
    console.log(`every page has the window's pixels for ${what} (page ${pages.length - 1}: ${report})`);
  }

  await edit('view scores');
  const lesson = await sameNumbers('the lesson');
  await samePixels('the lesson\'s scores view');
  // The Train view: the window trains its run; every page's copy goes on with it (not from
  // step 0 at each of the teacher's steps) and has the same weights at the same step.
  await edit('view train');
  await edit('train 120');
  let teacherTrain = '';
  await untilTrue(() => `the teacher's window did not train to step 120 (${teacherTrain})`, async () => {
    const n = trainPrints.length;
    teacher.stdin.write('train-fingerprint\n');
    await untilTrue('the teacher\'s window did not print its Train view\'s fingerprint', () => trainPrints.length > n, 10000);
    teacherTrain = trainPrints[n];
    return teacherTrain.startsWith('120 ');
  }, 60000);
  // The window's products are OpenBLAS's and the page's Eigen's: the same weights up to
  // their rounding (the sums within 1e-5 of the magnitudes'), bit for bit when they agree.
  const [tStep, tHash, tSum, tAbs] = teacherTrain.split(' ');
  let bitwise = 0, worstTrain = 0;
  for (const [i, p] of pages.entries()) {
    let s = {};
    await untilTrue(() => `page ${i} did not train to the teacher's weights (${teacherTrain}; page ${s.train_fingerprint})`,
      async () => {
        s = await state(p);
        const [step, , sum] = String(s.train_fingerprint).split(' ');
        return step === tStep && Math.abs(Number(sum) - Number(tSum)) <= 1e-5 * Number(tAbs);
      }, 60000);
    const [, hash, sum] = s.train_fingerprint.split(' ');
    if (hash === tHash) ++bitwise;
    worstTrain = Math.max(worstTrain, Math.abs(Number(sum) - Number(tSum)) / Number(tAbs));
  }
  console.log(`every page's Train view trained with the window's to step ${tStep}: the same weights up to rounding ` +
              `(${bitwise} of ${pages.length} bit for bit; the sums differ by at most ${worstTrain.toExponential(2)} of the magnitudes')`);
  await edit('view scores');

  // The Generate view: the window writes on (its Step), and every page shows the same
  // generation: the lesson's module's rows of x here, a GPT model's tokens below.
  async function sameGeneration(what, extra = () => true) {
    const n = generatePrints.length;
    teacher.stdin.write('generate-fingerprint\n');
    await untilTrue('the teacher\'s window did not print its generation\'s fingerprint', () => generatePrints.length > n, 10000);
    const want = generatePrints[n];
    if (want === 'none' || want.split(' ')[2] === '0') fail(`the teacher's window wrote nothing for ${what} (${want})`);
    let s = {};
    for (const [i, p] of pages.entries())
      await untilTrue(() => `page ${i} does not show the teacher's generation for ${what} (teacher ${want}, page ` +
                      `${s.generate_fingerprint}, view ${s.view}, why not "${s.generate_why_not}", note "${s.follow_note}", ` +
                      `errors ${JSON.stringify(p.errors)})`,
        async () => { s = await state(p); return s.view === 'generate' && s.generate_fingerprint === want && extra(s); }, 20000);
    return { want, text: s.generate_text };
  }
  // With --shots: a page at a classroom projector's size following the Generate view.
  async function projectorShot(name, fingerprint) {
    if (!args.shots) return;
    const big = await browser.newPage({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
    await big.goto(url);
    await untilTrue(`a 1280 x 800 page did not show the teacher's generation (${name})`, async () =>
      (await state({ page: big })).generate_fingerprint === fingerprint, 60000);
    await big.screenshot({ path: path.join(args.shots, `follow-${name}-1280.png`) });
    await big.close();
  }
  await edit('view generate');
  await edit('generate 3');
  const lessonGen = await sameGeneration('the lesson\'s module');
  await projectorShot('lesson-generate', lessonGen.want);
  console.log(`every page shows the teacher's generation of the lesson's module (${lessonGen.want})`);
  await edit('view scores');

  if (args['weights-file']) {
    // Layer 1 of a GPT-2 file: the window sends that block alone, the page reads it as layer 0.
    await edit(`weights 1 ${args['weights-file']}`);
    const block = await sameNumbers('a weights file\'s layer 1');
    if (block === lesson) fail('the weights file shows the lesson\'s numbers');
    await samePixels('a weights file\'s layer 1 in the scores view');
    console.log(`every page shows the numbers of the weights file's layer 1 the window loaded (${block})`);
  }
  if (args['model-file']) {
    await edit(`open ${args['model-file']}`);
    // The page names the model by its file's name: the teacher's folders never reach it.
    const trained = await sameNumbers('the trained model', (s) => s.model === path.basename(args['model-file']));
    if (trained === lesson) fail('the trained model shows the lesson\'s numbers');
    await samePixels('the trained model\'s scores view');
    await edit('view causality');
    await samePixels('the trained model\'s causality view');
    console.log(`every page shows the teacher's numbers bit for bit: the lesson (${lesson}) and the trained model it opened (${trained})`);
  }
  // A GPT model: the window sends what is on screen of it (follow_gpt.h), never its weights
  // file; every page shows the same layer and tokens with the teacher's numbers and pixels,
  // follows a layer change, fetches the walk view's weights and the Model view's grid when
  // the teacher shows those views, shows the causality table of a changed token, and a page
  // that explores says the model lives on the teacher's computer.
  if (args['gpt-dir']) {
    const shotsDir = args.shots; // optional: page 0's canvas at each step, for docs/web.md
    const keepShot = async (name) => {
      if (shotsDir) fs.writeFileSync(path.join(shotsDir, `follow-gpt-${name}.png`), await pages[0].page.locator('#canvas').screenshot());
    };
    const sameWords = (s) => s.words.length > 0 && s.words.join(' ') === pages.words;
    await edit('view scores');
    await edit(`open ${args['gpt-dir']}`);
    let first = {};
    await untilTrue(() => `page 0 did not show the teacher's GPT layer (note "${first.follow_note}", status "${first.status}")`,
      async () => { first = await state(pages[0]); return first.gpt_layer === 0; }, 20000);
    pages.words = first.words.join(' ');
    const gpt0 = await sameNumbers('the GPT model\'s layer 0', (s) => s.gpt_layer === 0 && sameWords(s));
    await samePixels('the GPT model\'s layer 0 in the scores view');
    await keepShot('scores');
    await edit('layer 1');
    const gpt1 = await sameNumbers('the GPT model\'s layer 1', (s) => s.gpt_layer === 1 && sameWords(s));
    if (gpt1 === gpt0) fail('layer 1 of the GPT model shows layer 0\'s numbers');
    await samePixels('the GPT model\'s layer 1 in the scores view');
    await edit('view walk');
    await sameNumbers('the GPT model\'s layer 1 in the walk view', (s) => s.view === 'walk' && s.gpt_layer === 1);
    await samePixels('the GPT model\'s layer 1 in the walk view (its weights fetched for it)');
    await keepShot('walk');
    await edit('view model');
    await sameNumbers('the GPT model\'s Model view', (s) => s.view === 'model');
    await keepShot('model');
    // The grid's numbers bit for bit (its 6-pixel cells' edges are where Mesa and SwiftShader
    // round differently, so its pixels are not compared).
    const n = gridPrints.length;
    teacher.stdin.write('grid-fingerprint\n');
    await untilTrue('the teacher\'s window did not print its grid\'s fingerprint', () => gridPrints.length > n, 10000);
    const grid = gridPrints[n];
    if (grid.startsWith('0 ')) fail('the teacher\'s window has no grid to compare');
    for (const [i, p] of pages.entries()) {
      let s = {};
      await untilTrue(() => `page ${i} does not show the teacher's grid (teacher ${grid}, page ${s.grid_fingerprint})`,
        async () => { s = await state(p); return s.grid_fingerprint === grid; }, 20000);
    }
    await edit('view causality');
    await edit('replace 7');
    await sameNumbers('the GPT model with a token changed', (s) => s.view === 'causality' && s.p >= 0 && s.strength > 0);
    // (Its chart and table are text and bars, no matrix: serve_tests' FollowGpt compares the table.)
    await keepShot('causality');
    // Explore: the page cannot compute the model, and says so in one sentence.
    await click('Explore on my own');
    let ex = {};
    await untilTrue(() => `the exploring page did not say the model lives on the teacher's computer (note "${ex.follow_note}")`,
      async () => { ex = await state(p0); return ex.follow === 'explore' && /^The GPT model lives on the teacher's computer/.test(ex.follow_note); }, 10000);
    await keepShot('explore');
    await click('Back to the teacher');
    await untilTrue('Back to the teacher did not follow the GPT model again',
      async () => { const s = await state(p0); return s.follow === 'follow' && s.gpt_layer === 1; }, 10000);
    console.log(`every page shows the teacher's GPT model bit for bit: layer 0 (${gpt0}), layer 1 (${gpt1}), the walk, ` +
                `Model and causality views; an exploring page says "${ex.follow_note}"`);
    // The Generate view: the window writes three tokens; the pages show them as sent.
    await edit('view generate');
    await edit('generate 3');
    const gptGen = await sameGeneration('the GPT model', (s) => s.generate_received && s.generate_text !== '');
    await keepShot('generate');
    await projectorShot('gpt-generate', gptGen.want);
    console.log(`every page shows the teacher's GPT generation (${gptGen.want}): "${gptGen.text}"`);
  } else {
    console.log(`every page shows the teacher's numbers bit for bit (${lesson})`);
  }
  console.log('PASS');
} catch (e) {
  if (!process.exitCode) {
    console.log(`FAIL: ${e.message}`);
    process.exitCode = 1;
  }
} finally {
  await browser.close();
  try { fs.rmSync(tmp, { recursive: true, force: true }); } catch (e) { /* none */ }
  // The window quits on "quit"; waited for (xvfb-run and Xvfb go with it), then its group
  // is stopped whether or not it did.
  const exited = teacher.exitCode !== null || teacher.signalCode !== null ? Promise.resolve()
    : new Promise((resolve) => teacher.once('exit', resolve));
  teacher.stdin.end('quit\n');
  await Promise.race([exited, sleep(10000)]);
  try { process.kill(-teacher.pid, 'SIGTERM'); } catch (e) { /* gone */ }
}
