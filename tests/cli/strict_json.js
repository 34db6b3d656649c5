// Strict JSON check with Node (issue 17 D9): TextDecoder with fatal: true refuses ill-formed UTF-8
// (encoded surrogates included), then JSON.parse (one document, or JSON Lines with --lines), and no
// lone surrogate may come out of an escape. Exit 1 with a reason on the first problem.
const fs = require('fs');
let args = process.argv.slice(2), lines = false;
if (args[0] === '--lines') { lines = true; args = args.slice(1); }
const dec = new TextDecoder('utf-8', { fatal: true });
const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?:[^\ud800-\udbff]|^)[\udc00-\udfff]/;
function walk(v) {
  if (typeof v === 'string') { if (lone.test(v)) throw new Error('lone surrogate in ' + JSON.stringify(v)); }
  else if (Array.isArray(v)) v.forEach(walk);
  else if (v && typeof v === 'object') for (const k of Object.keys(v)) { walk(k); walk(v[k]); }
}
for (const f of args) {
  try {
    const text = dec.decode(fs.readFileSync(f));
    const docs = lines ? text.split('\n').filter((l) => l.length) : [text];
    docs.forEach((d) => walk(JSON.parse(d)));
  } catch (e) { console.log(f + ': ' + e.message); process.exit(1); }
}
