/** The loader hooks of module-recorder.mjs (they run on the loader's own thread). */
import { appendFileSync } from "node:fs";

let pid = 0;
let file = "";

export function initialize(data) {
  pid = data.pid;
  file = data.file;
}

export async function load(url, context, nextLoad) {
  // One short append per module: lines of a few hundred bytes are written whole even with several processes.
  appendFileSync(file, `${pid} ${url}\n`);
  return nextLoad(url, context);
}
