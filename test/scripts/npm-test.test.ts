// `npm test` (scripts/test.mjs, decision 0299): the type-check, the import rules and vitest run
// at once, and the run fails if any of them failed. Each run works in a scratch TMPDIR of its
// own, removed when it ends (decision 0378). Fake `npm` and `vitest` commands stand in for the
// real ones, so each outcome is chosen and nothing heavy runs.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fakeBin } from "./fake-bin.ts";

const SCRIPT = resolve(import.meta.dirname, "../../scripts/test.mjs");

/** The machine's temporary directory as each run here sees it: one of the test's own. */
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "stills-npm-test-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** `env` as on a machine whose temporary directory is `directory`, outside any run. */
function withTmpdir(env: NodeJS.ProcessEnv, directory: string): NodeJS.ProcessEnv {
  const { STILLS_CACHE_TMPDIR: _, ...rest } = env;
  return { ...rest, TMPDIR: directory };
}

const SCRATCH = /^stills-test-run-(\d+)-[A-Za-z0-9]{6}$/;
const scratchDirs = () => readdirSync(root).filter((name) => SCRATCH.test(name));

/** Runs scripts/test.mjs with `npm run <check>` and `vitest` exiting with the codes given. */
function npmTest(
  codes: { typecheck: number; deps: number; vitest: number },
  args: string[] = [],
  vitestBody = "",
) {
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
  bin.add("vitest", `echo "vitest ran with $*"\n${vitestBody}\nexit ${codes.vitest}`);
  // fakeBin's log notes DEBIAN_FRONTEND; the machine's own setting is not this test's business.
  const { DEBIAN_FRONTEND: _, ...env } = process.env;
  const run = spawnSync(process.execPath, [SCRIPT, ...args], {
    env: { ...withTmpdir(env, root), PATH: `${bin.dir}:${process.env.PATH}` },
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

  it("gives vitest a scratch TMPDIR of its own and removes it, with what the tests left, at the end", () => {
    const seen = join(root, "seen");
    const run = npmTest(
      { typecheck: 0, deps: 0, vitest: 0 },
      [],
      `echo "$TMPDIR $STILLS_CACHE_TMPDIR" > "${seen}"
stat -c %a "$TMPDIR" >> "${seen}"
mkdir "$TMPDIR/left-behind" && echo junk > "$TMPDIR/left-behind/file" || exit 7`,
    );
    expect(run.status).toBe(0);
    const [line, mode] = readFileSync(seen, "utf8").trim().split("\n");
    const [scratch, cache] = line.split(" ");
    // Its own directory in the machine's, writable by every user as /tmp is.
    expect(scratch.startsWith(`${root}/`)).toBe(true);
    expect(scratch.slice(root.length + 1)).toMatch(SCRATCH);
    expect(mode).toBe("1777");
    // What later runs reuse stays in the machine's directory.
    expect(cache).toBe(root);
    // Gone, with what the test wrote there.
    expect(existsSync(scratch)).toBe(false);
    expect(scratchDirs()).toEqual([]);
  });

  it("waits for what the run left running there before it removes the scratch", () => {
    const done = join(root, "straggler-done");
    // A process of the run that outlives vitest (as a stack stopping after its starter does).
    const run = npmTest(
      { typecheck: 0, deps: 0, vitest: 0 },
      [],
      `(sleep 1; [ -d "$TMPDIR" ] && echo still-there > "${done}") > /dev/null 2>&1 &`,
    );
    expect(run.status).toBe(0);
    expect(readFileSync(done, "utf8").trim()).toBe("still-there");
    expect(scratchDirs()).toEqual([]);
  });

  it("removes the scratch of runs that ended before it, and leaves a running one's", () => {
    const ended = spawnSync("true").pid;
    const old = join(root, `stills-test-run-${ended}-abcDEF`);
    mkdirSync(join(old, "stills-extract-xyz"), { recursive: true });
    const running = join(root, `stills-test-run-${process.pid}-ghiJKL`);
    mkdirSync(running);
    const other = join(root, "stills-test-videos-v4");
    mkdirSync(other);
    // A run whose script was killed outright while one of its processes still works there.
    const orphaned = join(root, `stills-test-run-${spawnSync("true").pid}-mnoPQR`);
    mkdirSync(orphaned);
    const worker = spawn("sleep", ["30"], { env: { ...process.env, TMPDIR: orphaned } });
    try {
      const run = npmTest({ typecheck: 0, deps: 0, vitest: 0 });
      expect(run.status).toBe(0);
      expect(existsSync(old)).toBe(false);
      expect(existsSync(running)).toBe(true);
      expect(existsSync(other)).toBe(true);
      expect(existsSync(orphaned)).toBe(true);
    } finally {
      worker.kill("SIGKILL");
    }
  });

  it.each(["SIGTERM", "SIGHUP", "SIGINT"] as const)(
    "stopped by %s: stops vitest, removes its scratch and ends by the signal",
    async (signal) => {
      const bin = fakeBin();
      const seen = join(root, "seen");
      const got = join(root, "vitest-got");
      bin.add("npm", "exec sleep 30");
      bin.add(
        "vitest",
        `for s in INT TERM HUP; do trap "echo SIG$s > '${got}'; exit 1" $s; done
echo "$TMPDIR" > "${seen}"
# Ends on its own in about 30 s: a test that fails before its signal leaves no endless loop.
i=0; while [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done`,
      );
      const child = spawn(process.execPath, [SCRIPT], {
        env: { ...withTmpdir(process.env, root), PATH: `${bin.dir}:${process.env.PATH}` },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      const closed = new Promise<NodeJS.Signals | null>((done) =>
        child.on("close", (_code, ended) => done(ended)),
      );
      await expect.poll(() => existsSync(seen), { timeout: 10_000, interval: 50 }).toBe(true);
      const scratch = readFileSync(seen, "utf8").trim();
      expect(existsSync(scratch)).toBe(true);
      child.kill(signal);
      expect(await closed).toBe(signal);
      expect(readFileSync(got, "utf8").trim()).toBe(signal);
      expect(existsSync(scratch)).toBe(false);
      expect(stderr).toContain(`npm test stopped by ${signal}`);
    },
  );
});
