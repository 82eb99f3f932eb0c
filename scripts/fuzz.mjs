// `npm run fuzz [-- --files N --seed S|random --deadline SECONDS]`: mutated MP4, MOV, WebM and
// MKV files (bit flips, header noise, lying box and element sizes, truncations) through the
// extractor's real job path (test/support/fuzz.ts). Prints the seed, a tally and every file
// not handled cleanly, then "N of N files handled cleanly"; exits 1 unless all were.
import { parseArgs } from "node:util";
import { formatReport, runFuzz } from "../test/support/fuzz.ts";

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "1000" },
    seed: { type: "string", default: "20261123" },
    deadline: { type: "string", default: "8" },
  },
});
const files = Number(values.files);
const seed = values.seed === "random" ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const deadlineSeconds = Number(values.deadline);
if (!(files > 0) || !Number.isInteger(seed) || !(deadlineSeconds > 0)) {
  console.error("usage: npm run fuzz -- [--files N] [--seed S|random] [--deadline SECONDS]");
  process.exit(2);
}
console.log(`fuzzing ${files} files with seed ${seed} (rerun: npm run fuzz -- --seed ${seed})`);
const started = performance.now();
const report = await runFuzz({
  seed,
  files,
  deadlineSeconds,
  progress: (line) => console.log(`  ${line}`),
});
console.log(formatReport(report));
console.log(`(${((performance.now() - started) / 1000).toFixed(0)} s)`);
process.exit(report.clean === files ? 0 : 1);
