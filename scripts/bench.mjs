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
};
const wanted = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(PARTS);
let failed = false;
for (const part of wanted) {
  const script = join(import.meta.dirname, PARTS[part] ?? "");
  if (!PARTS[part] || !existsSync(script)) {
    console.error(`no benchmark part "${part}" (parts: ${Object.keys(PARTS).join(", ")})`);
    failed = true;
    continue;
  }
  console.log(`\n=== ${part} ===`);
  const run = spawnSync(process.execPath, [script], { stdio: "inherit" });
  failed ||= run.status !== 0;
}
process.exit(failed ? 1 : 0);
