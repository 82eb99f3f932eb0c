// `npm test`: the type-check and the import rules run beside vitest instead of before it
// (decision 0299). Each is one Node thread on a 2-core machine, and vitest's first group leaves
// a core partly idle while it starts, so running them at once takes about their time off the
// wall clock. A failure's output is printed when it ends; a pass's after vitest's, so it does
// not cut through vitest's. What follows `--` goes to vitest. The exit code is non-zero if
// any of the three failed.
//
// The run gets a scratch TMPDIR of its own (decision 0378). When vitest and the checks have
// ended (also after Ctrl-C, a closed terminal or SIGTERM, which are passed on to them), the
// script waits for every process still working there (a stack stopping after its starter, say),
// stops any left after ten seconds, and removes the directory. A run killed outright leaves its
// scratch to a later run, which removes it once no process of that run is left. What later
// runs reuse stays in the machine's temporary directory (scripts/lib/cache-tmpdir.mjs).
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { CACHE_TMPDIR_VARIABLE, cacheTmpdir } from "./lib/cache-tmpdir.mjs";

const CHECKS = ["typecheck", "deps"];
const SCRATCH_PREFIX = "stills-test-run-";
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];
const STRAGGLERS_MS = 10_000;

const machineTmp = cacheTmpdir();
removeScratchOfEndedRuns(machineTmp);
// Named by this process, so a later run can tell whether its owner still runs.
const scratch = mkdtempSync(join(machineTmp, `${SCRATCH_PREFIX}${process.pid}-`));
// As /tmp: other users' processes (the media tools' own user, decision 0037) make theirs in it.
chmodSync(scratch, 0o1777);
const env = { ...process.env, TMPDIR: scratch, [CACHE_TMPDIR_VARIABLE]: machineTmp };
const children = new Set();
let stoppedBy;
for (const signal of SIGNALS) {
  process.on(signal, () => {
    stoppedBy ??= signal;
    // vitest ends at once on SIGINT or SIGTERM (and by default on SIGHUP): twice is the same.
    for (const child of children) child.kill(signal);
  });
}

/**
 * Processes other than this one whose TMPDIR is `directory`: the run's (each inherits it), also
 * once their parent has ended and they belong to init.
 */
function processesIn(directory) {
  const mark = `TMPDIR=${directory}\0`;
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "latin1").includes(mark))
        found.push(Number(entry));
    } catch {
      // Gone meanwhile, or another user's.
    }
  }
  return found;
}

/** Waits up to STRAGGLERS_MS for the run's processes to end, then stops the rest. */
async function awaitStragglers(directory) {
  const deadline = Date.now() + STRAGGLERS_MS;
  let left = processesIn(directory);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    left = processesIn(directory);
  }
  for (const pid of left) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
}

/** Removes the scratch directories of this user's ended runs that no process still uses. */
function removeScratchOfEndedRuns(directory) {
  for (const name of readdirSync(directory)) {
    if (!name.startsWith(SCRATCH_PREFIX)) continue;
    const path = join(directory, name);
    const pid = Number(name.slice(SCRATCH_PREFIX.length).split("-")[0]);
    try {
      if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) continue;
      if (statSync(path).uid !== process.getuid?.() || processesIn(path).length > 0) continue;
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Not ours to remove, or half removed: a later run tries again.
    }
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
await awaitStragglers(scratch);
try {
  rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
} catch (err) {
  process.stderr.write(
    `\nnpm test could not remove ${scratch} (a later run will): ${err.message}\n`,
  );
}
if (stoppedBy) {
  process.stderr.write(`\nnpm test stopped by ${stoppedBy}\n`);
  // Ended by the signal, as the shell expects of a command it interrupted.
  for (const signal of SIGNALS) process.removeAllListeners(signal);
  process.kill(process.pid, stoppedBy);
  // Where the signal is ignored (a parent's choice), the code the shells give.
  setTimeout(() => process.exit(128 + constants.signals[stoppedBy]), 1000);
  await new Promise(() => {});
}
for (const { name, code, output } of results) {
  if (code === 0 && output.trim() !== "") process.stdout.write(`npm run ${name}: ${output}`);
}
const failed = results.filter((result) => result.code !== 0).map((result) => result.name);
if (failed.length > 0) {
  process.stderr.write(`\nnpm test failed: ${failed.join(", ")}\n`);
  process.exit(1);
}
