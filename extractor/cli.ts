// Runs one extraction from the command line into a directory (operators, the bench):
//   node extractor/cli.ts <file> '<options json>' <out-dir> [auto|dense|sparse]
// Prints the ExtractResult-shaped outcome as JSON on stdout, and on stderr the job's own time
// (`job_seconds=…`: probe, decode, encode and write, without Node's start-up), which is what
// a job costs in the long-running service. A run that can leave out pictures it does not need
// reads the file through a loopback relay, as the service reads every source
// (sources/local-file.ts).

import type { JobOptions } from "../schema/messages.ts";
import { extractFrames } from "./job.ts";
import { DirectorySink } from "./output/directory-sink.ts";
import { localFileSource } from "./sources/local-file.ts";

const [input, optionsJson = "{}", outDir = "frames-out", strategy = "auto"] = process.argv.slice(2);
if (!input) {
  console.error(
    "usage: node extractor/cli.ts <file> '<options json>' <out-dir> [auto|dense|sparse]",
  );
  process.exit(2);
}
const options: JobOptions = {
  mode: "interval",
  format: "jpg",
  resolution: 1080,
  output: "urls",
  ...(JSON.parse(optionsJson) as Partial<JobOptions>),
};
const started = performance.now();
const source = localFileSource(input);
const outcome = await extractFrames(
  {
    input: source.input,
    source,
    options,
    maxVideoSeconds: 6 * 3600,
    clipToMax: false,
    maxFrames: 100_000,
  },
  new DirectorySink(outDir),
  { strategy: strategy as "auto" | "dense" | "sparse" },
);
await source.close();
process.stderr.write(`job_seconds=${((performance.now() - started) / 1000).toFixed(3)}\n`);
process.stdout.write(`${JSON.stringify(outcome)}\n`);
process.exit(outcome.status === "completed" ? 0 : 1);
