// A local stack whose process dies, even by SIGKILL (a killed `vitest`, a closed terminal), takes
// its extractor, its edge host, the host's workerd and the client-address proxy with it: each
// child reads a pipe the stack's process holds as its stdin, and stops when that pipe closes
// (scripts/lib/stack.mjs). Before, they stayed as orphans holding their ports and state.
// Each of those children leads a session of its own, so the kernel schedules it as a group of
// its own, apart from the process that started the stack (decision 0375).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { descendants, ROOT } from "../../scripts/lib/stack.mjs";
import { alive, procStat } from "../support/processes.ts";

const stateDir = mkdtempSync(join(tmpdir(), "stills-lifeline-"));
let starter: ChildProcess | undefined;
const started: number[] = [];

afterAll(() => {
  starter?.kill("SIGKILL");
  // A failed run leaves nothing behind either.
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  rmSync(stateDir, { recursive: true, force: true });
});

/** The session a process belongs to (/proc/<pid>/stat's sixth field). */
function session(pid: number): number {
  return Number(procStat(pid)?.[3]);
}

function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "?";
  }
}

it("runs the extractor, the edge host and the proxy each in a session of its own, and stops them and workerd when the process that started them is killed", async () => {
  // The stack's process: a stack started as the benchmarks start theirs (the edge host, quiet).
  const script = `
    import { startBenchStack } from ${JSON.stringify(join(ROOT, "scripts/lib/stack.mjs"))};
    const stack = await startBenchStack(${JSON.stringify(stateDir)});
    console.log(JSON.stringify({
      edge: stack.children.edge.pid,
      extractor: stack.children.extractor.pid,
      proxy: stack.children.proxy.pid,
      extractorUrl: stack.extractorUrl,
      baseUrl: stack.baseUrl,
    }));
    setInterval(() => {}, 60_000);
  `;
  starter = spawn(process.execPath, ["--input-type=module", "-e", script], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    starter?.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const end = out.indexOf("\n");
      if (end >= 0) resolve(out.slice(0, end));
    });
    starter?.once("exit", (code) => reject(new Error(`the stack's process exited (${code})`)));
  });
  const stack = JSON.parse(line) as {
    edge: number;
    extractor: number;
    proxy: number;
    extractorUrl: string;
    baseUrl: string;
  };
  const workerds = (await descendants(stack.edge)).filter((pid) => comm(pid) === "workerd");
  const pids = [stack.edge, stack.extractor, stack.proxy, ...workerds];
  started.push(...pids);
  expect(workerds.length).toBeGreaterThan(0);
  expect(pids.filter(alive)).toEqual(pids);
  // Each leads its own session, so none is in the session of the process that started it.
  const leaders = [stack.edge, stack.extractor, stack.proxy];
  expect(leaders.map(session)).toEqual(leaders);
  expect((await fetch(`${stack.extractorUrl}/healthz`)).status).toBe(200);
  expect((await fetch(`${stack.baseUrl}/v1/pricing`)).status).toBe(200);

  starter.kill("SIGKILL");

  // The extractor lets running jobs go (none here) and exits; the host disposes of workerd.
  const deadline = Date.now() + 20_000;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(
    pids.filter(alive).map((pid) => `${pid} ${comm(pid)}`),
    "still running after the stack's process was killed",
  ).toEqual([]);
  await expect(fetch(`${stack.extractorUrl}/healthz`)).rejects.toThrow();
}, 90_000);
