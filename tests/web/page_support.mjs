// page_support.mjs: what the browser tests (browser_test.mjs, follow_test.mjs) share: their
// --key value arguments, skip and fail with ctest's statuses, playwright-core from the web
// build's node folder, and Debian's headless Chromium as they launch it.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';

export const CHROMIUM = '/usr/bin/chromium';

// --key value pairs, as ctest passes them.
export function parseArgs(argv) {
  const args = {};
  for (let i = 2; i < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
  return args;
}

// CI sets ATTNVIZ_WEB_REQUIRED=1 after make web: there a missing piece is a failure.
export function skip(why) {
  if (process.env.ATTNVIZ_WEB_REQUIRED === '1') {
    console.log(`FAIL: ${why} (ATTNVIZ_WEB_REQUIRED=1)`);
    process.exit(1);
  }
  console.log(`SKIP: ${why}`);
  process.exit(77);
}
export function fail(why) {
  console.log(`FAIL: ${why}`);
  process.exitCode = 1;
  throw new Error(why);
}

// The site, the browser and playwright-core, or a skip that says which is missing.
export function loadPlaywright(args) {
  if (!args.site || !fs.existsSync(path.join(args.site, 'index.html')))
    skip(`the web site was not built (no ${args.site}/index.html); run make web first`);
  if (!fs.existsSync(CHROMIUM)) skip(`${CHROMIUM} is missing; make web installs Debian's chromium`);
  try {
    return createRequire(import.meta.url)(path.join(path.resolve(args['node-modules']), 'playwright-core'));
  } catch (e) {
    skip(`playwright-core is not installed in ${args['node-modules']}; make web installs it (tests/web/setup)`);
  }
}

export function launchChromium(playwright) {
  return playwright.chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--enable-unsafe-swiftshader', '--use-angle=swiftshader', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-default-apps'],
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A PNG (8 bits per channel, RGB or RGBA, not interlaced: what the app and Chromium write)
// as { w, h, rgb(x, y) -> [r, g, b] }; null for any other PNG.
export function decodePng(buf) {
  if (buf.length < 33 || buf.toString('latin1', 1, 4) !== 'PNG') return null;
  let w = 0, h = 0, depth = 0, type = 0, interlace = 0;
  const idat = [];
  for (let i = 8; i + 8 <= buf.length;) {
    const n = buf.readUInt32BE(i), t = buf.toString('latin1', i + 4, i + 8), c = buf.subarray(i + 8, i + 8 + n);
    if (t === 'IHDR') [w, h, depth, type, interlace] = [c.readUInt32BE(0), c.readUInt32BE(4), c[8], c[9], c[12]];
    if (t === 'IDAT') idat.push(c);
    i += 12 + n;
  }
  const bpp = { 2: 3, 6: 4 }[type];
  if (depth !== 8 || !bpp || interlace !== 0) return null;
  const raw = zlib.inflateSync(Buffer.concat(idat)), stride = w * bpp, px = Buffer.alloc(stride * h);
  for (let y = 0; y < h; ++y) {
    const f = raw[y * (stride + 1)], row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; ++x) {
      const a = x >= bpp ? px[y * stride + x - bpp] : 0, b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= bpp && y > 0 ? px[(y - 1) * stride + x - bpp] : 0;
      let p = 0;
      if (f === 1) p = a;
      else if (f === 2) p = b;
      else if (f === 3) p = (a + b) >> 1;
      else if (f === 4) {
        const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - 2 * c);
        p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      px[y * stride + x] = (row[x] + p) & 255;
    }
  }
  return { w, h, rgb: (x, y) => [0, 1, 2].map((k) => px[y * stride + x * bpp + k]) };
}
