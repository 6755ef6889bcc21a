// web/page.js: the page's own script (make web copies it beside index.html). It is a file,
// not inline in index.html, because the classroom server's Content-Security-Policy runs only
// the page's own script files (src/serve/follow_http.cpp).
//  - Module: the canvas and the status line attnviz.js writes to;
//  - the app's keys, the file picker;
//  - the class code's prompt: a page the teacher's window served asks for the code when it
//    has none or the window refused it (src/app/web_follow.cpp calls attnvizAskCode), and
//    gives the typed code to the app (attnviz_follow_code).
var statusLine = document.getElementById('status'); // not "status": that is window.status, a string
var Module = {
  canvas: document.getElementById('canvas'),
  print: function (text) { console.log(text); },
  printErr: function (text) { console.error(text); statusLine.textContent = text; },
  setStatus: function (text) { statusLine.textContent = text || 'Files you save are downloaded.'; },
  onAbort: function (what) { statusLine.textContent = 'attnviz stopped: ' + what; }
};
// The app's own keys win over the browser's while the canvas has the focus: Ctrl+P saves a
// PNG rather than printing, Ctrl+S a session, Ctrl+O opens one; F1, F2 and F6 are the app's.
// F11 (full screen) and F5 (reload) stay the browser's.
window.addEventListener('keydown', function (e) {
  if (document.activeElement !== Module.canvas) return;
  if (((e.ctrlKey || e.altKey) && e.key.length === 1) || ['F1', 'F2', 'F6'].includes(e.key)) e.preventDefault();
}, true);
window.addEventListener('error', function (e) { statusLine.textContent = 'attnviz stopped: ' + e.message; });
// The browser's file picker: the file goes into the page's files (/files), and the app
// puts its name in the field that loads it.
document.getElementById('open').onclick = function () { document.getElementById('picker').click(); };
// Several files at once: a session with the model files saved beside it.
document.getElementById('picker').onchange = function (e) {
  var files = Array.from(e.target.files);
  Promise.all(files.map(function (file) {
    return file.arrayBuffer().then(function (data) { return { name: file.name.replace(/[\/\\]/g, '_'), data: data }; });
  })).then(function (loaded) {
    loaded.sort(function (a, b) { return /\.json$/i.test(a.name) - /\.json$/i.test(b.name); }); // sessions last
    loaded.forEach(function (f) {
      Module.FS.writeFile('/files/' + f.name, new Uint8Array(f.data));
      Module.ccall('attnviz_web_file_added', null, ['string'], [f.name]);
    });
    statusLine.textContent = loaded.map(function (f) { return f.name; }).join(', ') + ' in the page: see the app\'s status line.';
    document.getElementById('canvas').focus();
  });
  e.target.value = '';
};
document.getElementById('canvas').focus();
document.getElementById('canvas').addEventListener('contextmenu', function (e) { e.preventDefault(); });

// The class code this page was given: the address's ?code= (the QR code's URL), else the one
// typed in this tab before (sessionStorage); "" for none. 'code' is follow_protocol.h's
// code_param (the test follow_protocol_names checks that both say the same).
function attnvizCode() {
  var code = new URLSearchParams(location.search).get('code') || '';
  try {
    if (code) sessionStorage.setItem('attnviz-code', code);
    else code = sessionStorage.getItem('attnviz-code') || '';
  } catch (e) {
  }
  return code.replace(/[\s-]/g, '').toUpperCase().slice(0, 12);
}
// Shows the prompt, saying why (no code yet, or the window refused it).
function attnvizAskCode(why) {
  document.getElementById('code-why').textContent = why;
  document.getElementById('code-prompt').hidden = false;
  document.getElementById('code-input').focus();
}
document.getElementById('code-form').addEventListener('submit', function (e) {
  e.preventDefault();
  var code = document.getElementById('code-input').value.replace(/[\s-]/g, '').toUpperCase().slice(0, 12);
  if (!code) return;
  try {
    sessionStorage.setItem('attnviz-code', code);
  } catch (err) {
  }
  document.getElementById('code-prompt').hidden = true;
  document.getElementById('canvas').focus();
  Module.ccall('attnviz_follow_code', null, ['string'], [code]);
});
