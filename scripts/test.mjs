// `npm test`: the type-check and the import rules run beside vitest instead of before it
// (decision 0299). Each is one Node thread on a 2-core machine, and vitest's first group leaves
// a core partly idle while it starts, so running them at once takes about their time off the
// wall clock. A failure's output is printed when it ends; a pass's after vitest's, so it does
// not cut through vitest's. What follows `--` goes to vitest. The exit code is non-zero if
// any of the three failed.
//
// The run gets a scratch TMPDIR of its own, removed when it ends (also on Ctrl-C, a closed
// terminal or SIGTERM), so nothing a test leaves behind stays on the machine; runs killed
// outright leave theirs to the next run, which removes the scratch of runs no longer alive.
// What later runs reuse is kept in the machine's temporary directory (scripts/lib/cache-tmpdir.mjs,
// decision 0378), and Node's compile cache beside it.
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { CACHE_TMPDIR_VARIABLE, cacheTmpdir } from "./lib/cache-tmpdir.mjs";

const CHECKS = ["typecheck", "deps"];
const SCRATCH_PREFIX = "stills-test-run-";
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];

const machineTmp = cacheTmpdir();
removeScratchOfEndedRuns(machineTmp);
// Named by this process, so a later run can tell whether its owner still runs.
const scratch = mkdtempSync(join(machineTmp, `${SCRATCH_PREFIX}${process.pid}-`));
// As /tmp: other users' processes (the media tools' own user, decision 0037) make theirs in it.
chmodSync(scratch, 0o1777);
const env = {
  ...process.env,
  TMPDIR: scratch,
  [CACHE_TMPDIR_VARIABLE]: machineTmp,
  NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? join(machineTmp, "node-compile-cache"),
};
const children = new Set();
let stoppedBy;
for (const signal of SIGNALS) {
  process.on(signal, () => {
    stoppedBy ??= signal;
    for (const child of children) child.kill(signal);
  });
}

/** Removes the scratch directories of runs whose process has ended. */
function removeScratchOfEndedRuns(directory) {
  for (const name of readdirSync(directory)) {
    if (!name.startsWith(SCRATCH_PREFIX)) continue;
    const pid = Number(name.slice(SCRATCH_PREFIX.length).split("-")[0]);
    if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) continue;
    rmSync(join(directory, name), { recursive: true, force: true });
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

function run(command, args, options) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, env });
    children.add(child);
    child.on("exit", () => children.delete(child));
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      output += chunk;
    });
    child.on("error", (err) => resolve({ code: 1, output: `${output}${err.message}\n` }));
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const checks = CHECKS.map(async (name) => {
  const result = await run("npm", ["run", "--silent", name], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (result.code !== 0) process.stderr.write(`\nnpm run ${name} failed:\n${result.output}\n`);
  return { name, ...result };
});
const vitest = run("vitest", ["run", ...process.argv.slice(2)], { stdio: "inherit" });

const results = [...(await Promise.all(checks)), { name: "vitest", ...(await vitest) }];
rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
if (stoppedBy) {
  process.stderr.write(`\nnpm test stopped by ${stoppedBy}\n`);
  process.exit(128 + constants.signals[stoppedBy]);
}
for (const { name, code, output } of results) {
  if (code === 0 && output.trim() !== "") process.stdout.write(`npm run ${name}: ${output}`);
}
const failed = results.filter((result) => result.code !== 0).map((result) => result.name);
if (failed.length > 0) {
  process.stderr.write(`\nnpm test failed: ${failed.join(", ")}\n`);
  process.exit(1);
}
