// Khronos glTF-Validator (npm `gltf-validator`, installed by tools/setup.sh) over files:
//   node tools/gltf_validate.js VALIDATOR_DIR FILE...
// prints one JSON object per line: {"file", "numErrors", "numWarnings", "numInfos",
// "numHints", "codes": {CODE: count}, "messages": [first few "CODE at POINTER: text"]}.
// External resources (a .gltf's buffers and images) are read from the file's folder.
"use strict";
const fs = require("fs");
const path = require("path");

async function main() {
  const [dir, ...files] = process.argv.slice(2);
  const validator = require(path.resolve(dir, "node_modules", "gltf-validator"));
  for (const file of files) {
    const folder = path.dirname(file);
    const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)), {
      uri: path.basename(file),
      maxIssues: 0,
      externalResourceFunction: (uri) =>
        new Promise((resolve, reject) => {
          fs.readFile(path.join(folder, decodeURIComponent(uri)), (err, data) =>
            err ? reject(err.toString()) : resolve(new Uint8Array(data)));
        }),
    });
    const codes = {};
    const messages = [];
    for (const m of report.issues.messages) {
      codes[m.code] = (codes[m.code] || 0) + 1;
      if (messages.length < 10) messages.push(`${m.code} at ${m.pointer}: ${m.message}`);
    }
    const i = report.issues;
    console.log(JSON.stringify({
      file, numErrors: i.numErrors, numWarnings: i.numWarnings, numInfos: i.numInfos,
      numHints: i.numHints, codes, messages,
    }));
  }
}

main().catch((e) => { console.error(String(e)); process.exit(1); });
