// page_support.mjs: what the browser tests (browser_test.mjs, follow_test.mjs) share: their
// --key value arguments, skip and fail with ctest's statuses, playwright-core from the web
// build's node folder, and Debian's headless Chromium as they launch it.
import fs from 'node:fs';
import path from 'node:path';
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
