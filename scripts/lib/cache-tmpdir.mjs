// The temporary directory that outlives a test run. `npm test` (scripts/test.mjs) gives each
// run a scratch TMPDIR of its own and removes it when the run ends, so whatever a test, a
// stack or a child process leaves there goes with it (decision 0378). What is made once per
// machine and reused by later runs (test videos, the worker's bundle, the migrated D1) is kept
// here instead: the directory the run was started with, or the machine's outside a run.
import { tmpdir } from "node:os";

export const CACHE_TMPDIR_VARIABLE = "STILLS_CACHE_TMPDIR";

/** Where things made once per machine are kept (the machine's temporary directory). */
export function cacheTmpdir(env = process.env) {
  return env[CACHE_TMPDIR_VARIABLE] || tmpdir();
}
