// web/pre.js: runs before attnviz's main in the page (linked with --pre-js).
//  - The address's query becomes the command line: ?view=causality&font-scale=2 is
//    --view causality --font-scale 2 (a key without a value is a flag), except code=, the
//    class code, which page.js keeps for src/app/web_follow.cpp.
//  - The settings folder, /home/web_user/.config, is an IDBFS folder: it is read from the
//    browser's IndexedDB before main starts, and src/app/web_platform.cpp writes it back.
Module['arguments'] = Module['arguments'] || [];
if (typeof location !== 'undefined') {
  new URLSearchParams(location.search).forEach(function (value, key) {
    if (key === 'code') return; // the class code (the QR code's URL): web_follow.cpp takes it
    Module['arguments'].push('--' + key);
    if (value !== '') Module['arguments'].push(value);
  });
}
Module['preRun'] = Module['preRun'] || [];
Module['preRun'].push(function () {
  var dir = '/home/web_user/.config';
  FS.mkdirTree(dir);
  FS.mount(IDBFS, {}, dir);
  addRunDependency('attnviz-settings');
  FS.syncfs(true, function (err) {
    if (err) console.warn('attnviz: the browser keeps no settings here (' + err + '); using the defaults');
    removeRunDependency('attnviz-settings');
  });
});
