// `npm run bench`: every benchmark part in turn, each in its own process so one part's
// memory and caches do not colour the next. Every figure is a ratio against a baseline
// measured in the same run. `npm run bench -- api` runs one part.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

const PARTS = {
  api: "bench-api.mjs",
  extract: "bench-extract.mjs",
  range: "bench-range.mjs",
  latency: "bench-latency.mjs",
  http: "bench-http.mjs",
  load: "bench-load.mjs",
};
// Part names come first; from the first `--flag` on, the rest goes to each part's script
// (`npm run bench -- load --rounds 5`).
const args = process.argv.slice(2);
const firstFlag = args.findIndex((arg) => arg.startsWith("--"));
const named = firstFlag === -1 ? args : args.slice(0, firstFlag);
const flags = firstFlag === -1 ? [] : args.slice(firstFlag);
const wanted = named.length > 0 ? named : Object.keys(PARTS);
let failed = false;
for (const part of wanted) {
  const script = join(import.meta.dirname, PARTS[part] ?? "");
  if (!PARTS[part] || !existsSync(script)) {
    console.error(`no benchmark part "${part}" (parts: ${Object.keys(PARTS).join(", ")})`);
    failed = true;
    continue;
  }
  console.log(`\n=== ${part} ===`);
  const run = spawnSync(process.execPath, [script, ...flags], { stdio: "inherit" });
  failed ||= run.status !== 0;
}
process.exit(failed ? 1 : 0);
