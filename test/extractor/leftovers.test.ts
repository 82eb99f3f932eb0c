// What an extractor killed hard leaves behind is swept at the next start, and only that: temp
// directories and media process groups of an extractor that is gone, never those of one that
// still runs (this test process plays the live one).
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { once } from "node:events";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SOURCE_DIR_PREFIX, sweepLeftovers } from "../../extractor/leftovers.ts";
import { OWNER_ID, OWNER_MARKER, processStartTime } from "../../extractor/owner.ts";
import { freePort } from "../../scripts/lib/stack.mjs";
import { startFakeEdge } from "./fake-edge.ts";

const scratch = mkdtempSync(join(tmpdir(), "stills-sweep-test-"));
const started: ChildProcess[] = [];

afterAll(() => {
  for (const child of started) {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {}
  }
  rmSync(scratch, { recursive: true, force: true });
});

/** The owner id of a process that ran and is gone: a real pid and start time, now dead. */
async function deadOwner(): Promise<string> {
  const child = spawn("sleep", ["0.3"]);
  const pid = child.pid as number;
  const ticks = processStartTime(pid);
  await once(child, "exit");
  return `${pid}.${ticks}`;
}

/** A process group (sh plus a sleeping child) marked as started by `owner`. */
function markedGroup(owner: string): ChildProcess {
  const child = spawn("sh", ["-c", "sleep 60 & sleep 60; wait"], {
    detached: true,
    stdio: "ignore",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", [OWNER_MARKER]: owner },
  });
  started.push(child);
  return child;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function groupMembers(group: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return fields[0] !== "Z" && Number(fields[2]) === group;
      } catch {
        return false;
      }
    });
}

describe("sweeping at start", () => {
  it("removes the temp directories of dead extractors and keeps those of live ones", async () => {
    const dead = await deadOwner();
    const deadDir = join(scratch, `${SOURCE_DIR_PREFIX}${dead}-aB3dE1`);
    const liveDir = join(scratch, `${SOURCE_DIR_PREFIX}${OWNER_ID}-xY7zQ2`);
    const oldUnowned = join(scratch, `${SOURCE_DIR_PREFIX}Qw8eR2`);
    const newUnowned = join(scratch, `${SOURCE_DIR_PREFIX}Lk5jH9`);
    const unrelated = join(scratch, "stills-sources-test-videos-v5");
    for (const dir of [deadDir, liveDir, oldUnowned, newUnowned, unrelated]) {
      mkdirSync(dir);
    }
    const twoHoursAgo = new Date(Date.now() - 2 * 3600e3);
    utimesSync(oldUnowned, twoHoursAgo, twoHoursAgo);

    const swept = await sweepLeftovers({ tempDir: scratch });
    expect(swept.tempDirs.sort()).toEqual([deadDir, oldUnowned].sort());
    expect([deadDir, oldUnowned].map(existsSync)).toEqual([false, false]);
    expect([liveDir, newUnowned, unrelated].map(existsSync)).toEqual([true, true, true]);
  });

  it("kills the whole process group a dead extractor left, and nothing a live one runs", async () => {
    const orphan = markedGroup(await deadOwner());
    const ours = markedGroup(OWNER_ID);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const orphanGroup = orphan.pid as number;
    expect(groupMembers(orphanGroup).length).toBeGreaterThanOrEqual(2);

    const orphanExit = once(orphan, "exit");
    const swept = await sweepLeftovers({ tempDir: scratch });
    expect(swept.processGroups).toContain(orphanGroup);
    expect(swept.processGroups).not.toContain(ours.pid);
    const [, signal] = await orphanExit;
    expect(signal).toBe("SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(groupMembers(orphanGroup)).toEqual([]);
    expect(alive(ours.pid as number)).toBe(true);
  });

  it("a new extractor removes the download directory of one killed with SIGKILL", async () => {
    // A private temp root, so the directories seen are only these extractors'.
    const root = mkdtempSync(join(scratch, "root-"));
    const edge = await startFakeEdge("sweep-token");
    // An origin without byte ranges is downloaded to a temp file; it sends a little, then
    // holds the rest, so the job is mid-download when its extractor dies.
    const { createServer } = await import("node:http");
    const origin = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": 10_000_000 });
      res.write(
        Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from("ftypisom"), Buffer.alloc(8192)]),
      );
    });
    await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
    const originUrl = `http://127.0.0.1:${(origin.address() as { port: number }).port}/v.mp4`;
    const startExtractor = async () => {
      const port = await freePort();
      const child = spawn(
        process.execPath,
        [join(import.meta.dirname, "../../extractor/main.ts")],
        {
          env: {
            PATH: process.env.PATH,
            TMPDIR: root,
            INTERNAL_TOKEN: "t0ken",
            EXTRACTOR_PORT: String(port),
            STILLS_ALLOW_PRIVATE_NETWORK: "1",
            EXTRACTOR_MEDIA_USER: "self",
            EXTRACTOR_LOG: "info",
          },
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
      started.push(child);
      let log = "";
      child.stderr?.on("data", (chunk) => {
        log += chunk;
      });
      for (let i = 0; i < 100; i++) {
        if (log.includes("extractor listening")) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return { child, port, log: () => log };
    };
    try {
      const first = await startExtractor();
      void fetch(`http://127.0.0.1:${first.port}/extract`, {
        method: "POST",
        headers: { authorization: "Bearer t0ken", "content-type": "application/json" },
        body: JSON.stringify({
          job_id: "aaaaaaaa-0000-4000-8000-000000000001",
          kind: "job",
          tenant: "account:sweep",
          url: originUrl,
          platform: "direct",
          options: { mode: "count", count: 1, format: "jpg", resolution: 360, output: "urls" },
          max_video_seconds: 900,
          clip_to_max: false,
          max_frames: 10,
          callback: { base_url: edge.baseUrl, token: edge.token },
        }),
      }).catch(() => {});
      let left: string[] = [];
      for (let i = 0; i < 100 && left.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        left = readdirSync(root).filter((name) => name.startsWith(SOURCE_DIR_PREFIX));
      }
      const firstOwner = `${first.child.pid}.${processStartTime(first.child.pid as number)}`;
      expect(left).toEqual([
        expect.stringMatching(new RegExp(`^${SOURCE_DIR_PREFIX}${firstOwner}-`)),
      ]);
      first.child.kill("SIGKILL");
      await once(first.child, "exit");
      expect(readdirSync(root)).toEqual(left);

      const second = await startExtractor();
      expect(readdirSync(root).filter((name) => name.startsWith(SOURCE_DIR_PREFIX))).toEqual([]);
      expect(second.log()).toContain("swept what an earlier run left");
      second.child.kill("SIGTERM");
      await once(second.child, "exit");
    } finally {
      origin.closeAllConnections();
      origin.close();
      await edge.close();
    }
  });
});
