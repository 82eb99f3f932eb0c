// `npm test` (scripts/test.mjs, decision 0299): the type-check, the import rules and vitest run
// at once, and the run fails if any of them failed. Fake `npm` and `vitest` commands stand in
// for the real ones, so each outcome is chosen and nothing heavy runs.
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeBin } from "./fake-bin.ts";

const SCRIPT = resolve(import.meta.dirname, "../../scripts/test.mjs");

/** Runs scripts/test.mjs with `npm run <check>` and `vitest` exiting with the codes given. */
function npmTest(codes: { typecheck: number; deps: number; vitest: number }, args: string[] = []) {
  const bin = fakeBin();
  // `npm run --silent <name>`: $3 is the check's name.
  bin.add(
    "npm",
    `case "$3" in
  typecheck) echo "typecheck says $3"; sleep 0.2; exit ${codes.typecheck} ;;
  deps) echo "deps says $3"; exit ${codes.deps} ;;
esac
exit 99`,
  );
  bin.add("vitest", `echo "vitest ran with $*"; exit ${codes.vitest}`);
  // fakeBin's log notes DEBIAN_FRONTEND; the machine's own setting is not this test's business.
  const { DEBIAN_FRONTEND: _, ...env } = process.env;
  const run = spawnSync(process.execPath, [SCRIPT, ...args], {
    env: { ...env, PATH: `${bin.dir}:${process.env.PATH}` },
    encoding: "utf8",
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, calls: bin.calls() };
}

describe("npm test", () => {
  it("runs both checks and vitest with the arguments after --, and passes when all pass", () => {
    const run = npmTest({ typecheck: 0, deps: 0, vitest: 0 }, ["test/e2e/x.test.ts", "-t", "ZIP"]);
    expect(run.status).toBe(0);
    expect(run.calls.sort()).toEqual([
      "npm run --silent deps",
      "npm run --silent typecheck",
      "vitest run test/e2e/x.test.ts -t ZIP",
    ]);
    expect(run.stdout).toContain("vitest ran with run test/e2e/x.test.ts -t ZIP");
    // A passing check's output comes after vitest's.
    expect(run.stdout.indexOf("typecheck says")).toBeGreaterThan(
      run.stdout.indexOf("vitest ran with"),
    );
    expect(run.stderr).not.toContain("failed");
  });

  it("fails when the type-check fails, with its output, though the tests passed", () => {
    const run = npmTest({ typecheck: 2, deps: 0, vitest: 0 });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("npm run typecheck failed:\ntypecheck says typecheck");
    expect(run.stderr).toContain("npm test failed: typecheck\n");
  });

  it("names every part that failed", () => {
    const run = npmTest({ typecheck: 0, deps: 1, vitest: 1 });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("npm run deps failed:\ndeps says deps");
    expect(run.stderr).toContain("npm test failed: deps, vitest\n");
  });
});
