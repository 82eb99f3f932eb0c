// Many jobs at once on the real stack (issue 41, decision 0190): one account's burst, with a
// second account's job posted behind it. Every job delivers exactly its own frames (the pixels
// say which frame each is), each is started once by the extractor (the burst waits in the
// extractor's room), and the credits taken equal the sum of the charges, to the credit.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestVideo, readImagePattern } from "../support/videos.ts";
import { call, creditsAvailable, download, type Harness, startHarness } from "./support/harness.ts";

const FPS = 25;
const frameAt = (t: number) => Math.floor(t * FPS + 1e-6);

let h: Harness;
let videoUrl: string;

beforeAll(async () => {
  h = await startHarness();
  const file = await makeTestVideo({
    width: 320,
    height: 180,
    fps: FPS,
    durationSeconds: 20,
    gop: 50,
  });
  videoUrl = h.serveVideo("/media/burst.mp4", file);
});

afterAll(async () => {
  await h?.close();
});

/** Each job's own moments: job i asks for i + 2 of them, none shared with another job. */
function momentsOf(i: number): number[] {
  return Array.from({ length: i + 2 }, (_, k) => Number((0.37 + i * 0.13 + k * 1.41).toFixed(2)));
}

describe("one account's ten jobs at once, another account's job behind them", () => {
  it("every job completes with exactly its frames, each handed over once, charged once", async () => {
    const a = await h.newKey("pro"); // 10 active jobs allowed
    const b = await h.newKey("starter");
    const before = {
      a: await creditsAvailable(h.stack, a.auth),
      b: await creditsAvailable(h.stack, b.auth),
    };

    const burst = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(h.stack, "POST", "/jobs", {
          body: { url: videoUrl, timestamps: momentsOf(i) },
          headers: a.auth,
        }),
      ),
    );
    const behind = await call(h.stack, "POST", "/jobs", {
      body: { url: videoUrl, count: 6 },
      headers: b.auth,
    });
    for (const res of [...burst, behind]) expect(res.status, JSON.stringify(res.body)).toBe(201);

    const done = await Promise.all(
      [...burst, behind].map(async (res) => {
        const read = await call(h.stack, "GET", `/jobs/${res.body.id}?wait=true`, {
          headers: res === behind ? b.auth : a.auth,
        });
        expect(read.status).toBe(200);
        return read.body;
      }),
    );

    for (const [i, job] of done.slice(0, 10).entries()) {
      expect(job.status, JSON.stringify(job.error)).toBe("completed");
      expect(job.frames.map((f: any) => [f.timestamp, f.status])).toEqual(
        momentsOf(i).map((t) => [t, "ok"]),
      );
      for (const frame of job.frames) {
        const file = await download(frame.url);
        expect(file.status).toBe(200);
        expect((await readImagePattern(file.bytes)).number, `job ${i} at ${frame.timestamp}`).toBe(
          frameAt(frame.timestamp),
        );
      }
    }
    const last = done[10];
    expect(last.status).toBe("completed");
    expect(last.frames).toHaveLength(6);
    for (const frame of last.frames) {
      const file = await download(frame.url);
      expect((await readImagePattern(file.bytes)).number).toBe(frameAt(frame.timestamp));
    }

    // Handed over once each: one attempt, started once by the extractor; and A's burst waited
    // in the extractor's room (a job.waiting line), not in busy answers and queue retries.
    const ids = done.map((job) => job.id);
    const rows = await h.query(
      `SELECT id, attempts, status FROM jobs WHERE id IN (${ids.map(() => "?").join(",")})`,
      ids,
    );
    expect(rows).toHaveLength(11);
    expect(rows.every((row) => row.attempts === 1 && row.status === "completed")).toBe(true);
    const extractorLog = h.stack.logFiles?.extractor;
    if (!extractorLog) throw new Error("this file runs on the shared stack, whose logs are files");
    const events = readFileSync(extractorLog, "utf8")
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { event?: string; job?: string })
      .filter((line) => line.job !== undefined && ids.includes(line.job));
    const startedOnce = ids.map(
      (id) => events.filter((e) => e.event === "job.started" && e.job === id).length,
    );
    expect(startedOnce).toEqual(ids.map(() => 1));
    expect(events.filter((e) => e.event === "job.waiting").length).toBeGreaterThan(0);

    // Credits: what each account lost is the sum of what its jobs say they charged.
    const chargedA = done.slice(0, 10).reduce((sum, job) => sum + job.credits_charged, 0);
    expect(chargedA).toBeGreaterThanOrEqual(10);
    expect(before.a - (await creditsAvailable(h.stack, a.auth))).toBe(chargedA);
    expect(before.b - (await creditsAvailable(h.stack, b.auth))).toBe(last.credits_charged);
  });
});
