// hub_cache_test.mjs: attnviz and a Hugging Face client that no one here wrote share one cache.
// The client is npm's @huggingface/hub (installed by tests/web/setup into build-web/node/, as
// playwright-core is); the Hub is tests/hub's mock_hub on 127.0.0.1. Registered with ctest as
// web_hub_cache, label web; it skips (status 77, one line saying why) when the package is not
// installed, as the browser tests do.
//
//   1. @huggingface/hub's snapshotDownload fills cache A from the mock Hub (refs/main written
//      as Python writes it); attnviz opens the model from A by its id, offline (HF_HUB_OFFLINE=1,
//      no endpoint at all), and prints the same numbers as from the repository's own folder;
//   2. attnviz get on cache A downloads nothing (the mock counts the bytes it sent) and prints
//      the snapshot folder the client made;
//   3. attnviz get fills cache B; @huggingface/hub's scanCacheDir lists the repository with no
//      warning, its commit, refs ["main"], every file with the repository's size, and the sum.
// Exit status 0: passed; 1: failed (one line says what); 77: skipped.
//
//   node tests/web/hub_cache_test.mjs --node-modules build-web/node/node_modules \
//        --mock-hub build/mock_hub --attnviz build/attnviz --repo-dir tests/data/hub/gpt2
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

function fail(why) {
  console.error(`FAIL: ${why}`);
  process.exit(1);
}
function skip(why) {
  console.log(`SKIP: ${why}`);
  process.exit(77);
}
const args = {};
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const a of ['node-modules', 'mock-hub', 'attnviz', 'repo-dir'])
  if (!args[a]) fail(`--${a} is missing`);

let hub;
try {
  const require = createRequire(path.join(path.resolve(args['node-modules']), 'index.js'));
  hub = await import(require.resolve('@huggingface/hub'));
} catch (e) {
  if (process.env.ATTNVIZ_WEB_REQUIRED === '1') fail(`@huggingface/hub is not installed in ${args['node-modules']}: ${e.message}`);
  skip(`@huggingface/hub is not installed in ${args['node-modules']} (make web installs it)`);
}

const repo = 'openai-community/gpt2';
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-hub-js-'));
const cacheA = path.join(work, 'a');
const cacheB = path.join(work, 'b');
fs.mkdirSync(cacheA);
fs.mkdirSync(cacheB);

// The mock Hub: its first line of stdout is its port.
const mock = spawn(args['mock-hub'], ['--repo', `${repo}=${args['repo-dir']}`], { stdio: ['ignore', 'pipe', 'inherit'] });
const killAll = () => { try { mock.kill('SIGKILL'); } catch (e) { /* gone */ } };
process.on('exit', () => { killAll(); fs.rmSync(work, { recursive: true, force: true }); });
const timer = setTimeout(() => fail('the test took more than 120 s'), 120000);
const port = await new Promise((resolve) => {
  let out = '';
  const deadline = setTimeout(() => fail('mock_hub printed no port within 20 s'), 20000);
  mock.stdout.on('data', (d) => {
    out += d;
    const nl = out.indexOf('\n');
    if (nl >= 0) {
      clearTimeout(deadline);
      resolve(Number(out.slice(0, nl).trim()));
    }
  });
  mock.on('exit', (code) => fail(`mock_hub exited (${code}) before printing its port`));
});
if (!(port > 0)) fail('mock_hub printed no valid port');
const hubUrl = `http://127.0.0.1:${port}`;

async function sentBytes() {
  const r = await fetch(`${hubUrl}/__mock/stats`);
  if (!r.ok) fail(`the mock's stats answered ${r.status}`);
  const j = await r.json();
  if (typeof j.body_bytes !== 'number') fail(`the mock's stats have no body_bytes: ${JSON.stringify(j)}`);
  return j.body_bytes;
}

// attnviz with only the given environment of the Hub's (nothing of the machine's HF_* leaks in).
function attnviz(argv, env) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HF_')));
  const r = spawnSync(args.attnviz, argv, { env: { ...clean, ...env }, encoding: 'utf8', timeout: 60000 });
  return { status: r.status, stdout: r.stdout || '', stderr: r.stderr || '' };
}

// 1. The client fills A; attnviz opens it offline by the id.
const snapA = await hub.snapshotDownload({ repo, cacheDir: cacheA, hubUrl });
const repoFolder = path.join(cacheA, 'models--openai-community--gpt2');
const commit = fs.readFileSync(path.join(repoFolder, 'refs', 'main'), 'utf8');
if (!/^[0-9a-f]{40}$/.test(commit)) fail(`the client's refs/main is ${JSON.stringify(commit)}, not 40 hex digits`);
if (path.resolve(snapA) !== path.join(repoFolder, 'snapshots', commit)) fail(`the client's snapshot is ${snapA}`);
const fromId = attnviz(['trace', '--model', repo, '--tokens', '1,2,3'], { HF_HUB_CACHE: cacheA, HF_HUB_OFFLINE: '1' });
if (fromId.status !== 0) fail(`attnviz trace --model ${repo} on the client's cache exited ${fromId.status}: ${fromId.stderr.trim()}`);
const fromDir = attnviz(['trace', '--model', args['repo-dir'], '--tokens', '1,2,3'], {});
if (fromDir.status !== 0) fail(`attnviz trace --model ${args['repo-dir']} exited ${fromDir.status}: ${fromDir.stderr.trim()}`);
const y = (text) => JSON.stringify(JSON.parse(text).logits ?? JSON.parse(text).y ?? JSON.parse(text));
if (y(fromId.stdout) !== y(fromDir.stdout)) fail('the model opened from the client\'s cache gives other numbers than its own folder');
console.log(`ok: @huggingface/hub filled a cache (commit ${commit.slice(0, 8)}), attnviz opened ${repo} from it offline`);

// 2. attnviz get on A downloads nothing.
const before = await sentBytes();
const getA = attnviz(['get', repo], { HF_HUB_CACHE: cacheA, HF_ENDPOINT: hubUrl });
if (getA.status !== 0) fail(`attnviz get on the client's cache exited ${getA.status}: ${getA.stderr.trim()}`);
if (path.resolve(getA.stdout.trim()) !== path.resolve(snapA)) fail(`attnviz get printed ${getA.stdout.trim()}, not the client's ${snapA}`);
const after = await sentBytes();
if (after !== before) fail(`attnviz get on a full cache made the mock send ${after - before} bytes of files`);
console.log('ok: attnviz get on the client\'s cache downloaded nothing');

// 3. attnviz fills B; the client's scanCacheDir reads it.
const getB = attnviz(['get', repo], { HF_HUB_CACHE: cacheB, HF_ENDPOINT: hubUrl });
if (getB.status !== 0) fail(`attnviz get into an empty cache exited ${getB.status}: ${getB.stderr.trim()}`);
if (await sentBytes() === after) fail('attnviz get into an empty cache made the mock send nothing');
const scan = await hub.scanCacheDir(cacheB);
if (scan.warnings.length) fail(`scanCacheDir warns: ${scan.warnings.map((w) => w.message).join('; ')}`);
if (scan.repos.length !== 1) fail(`scanCacheDir lists ${scan.repos.length} repositories, not 1`);
const r = scan.repos[0];
if (r.id.name !== repo || r.id.type !== 'model') fail(`scanCacheDir names the repository ${JSON.stringify(r.id)}`);
if (r.revisions.length !== 1) fail(`scanCacheDir lists ${r.revisions.length} revisions, not 1`);
const rev = r.revisions[0];
if (rev.commitOid !== commit) fail(`scanCacheDir's commit is ${rev.commitOid}, the Hub's ${commit}`);
if (JSON.stringify(rev.refs) !== '["main"]') fail(`scanCacheDir's refs are ${JSON.stringify(rev.refs)}, not ["main"]`);
let total = 0;
for (const f of rev.files) {
  const name = path.basename(f.path);
  const size = fs.statSync(path.join(args['repo-dir'], name)).size;
  if (f.blob.size !== size) fail(`scanCacheDir gives ${name} ${f.blob.size} bytes, the repository's is ${size}`);
  if (path.dirname(f.blob.path) !== path.join(cacheB, 'models--openai-community--gpt2', 'blobs')) fail(`${name} is not a link into blobs/`);
  total += size;
}
const wanted = ['config.json', 'merges.txt', 'model.safetensors', 'vocab.json'];
const have = rev.files.map((f) => path.basename(f.path)).sort();
for (const w of wanted) if (!have.includes(w)) fail(`scanCacheDir lists ${have.join(', ')}: ${w} is missing`);
if (r.size !== total || rev.size !== total) fail(`scanCacheDir's size is ${r.size} (revision ${rev.size}), the files' sum ${total}`);
console.log(`ok: scanCacheDir lists attnviz's download: ${have.length} files, ${total} bytes, refs main -> ${commit.slice(0, 8)}`);
clearTimeout(timer);
process.exit(0);
