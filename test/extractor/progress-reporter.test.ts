// The progress reporter's cadence (extractor/output/progress-reporter.ts, decisions 0230 and
// 0280), on a fake clock and counted: nothing in an attempt's first REPORT_EVERY_MS, so an
// attempt that ends sooner costs the edge no report at all; after that, every tick (every
// WAITING_REPORT_EVERY_MS while it only waits for a slot: decision 0282) and at once on a new
// stage, and the last one before the result.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { EdgeClient } from "../../extractor/output/edge-sink.ts";
import {
  ProgressReporter,
  REPORT_EVERY_MS,
  WAITING_REPORT_EVERY_MS,
} from "../../extractor/output/progress-reporter.ts";

interface Sent {
  stage: string;
  frames_done: number;
  frames_total: number | null;
}

function fakeEdge() {
  const sent: Sent[] = [];
  const client = {
    call: async (_method: string, _path: string, body: string) => {
      sent.push(JSON.parse(body) as Sent);
      return new Response("{}");
    },
  } as unknown as EdgeClient;
  return { client, sent };
}

const attempt = { kind: "job", jobId: "j1", attemptId: "a1" };

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("progress cadence", () => {
  it("an attempt that ends within its first interval reports nothing, not even the last", async () => {
    const { client, sent } = fakeEdge();
    const reporter = new ProgressReporter(client, attempt);
    reporter.stage("fetching");
    reporter.stage("probing");
    let done = 0;
    reporter.extracting(12, () => done);
    done = 12;
    reporter.stage("uploading");
    await vi.advanceTimersByTimeAsync(REPORT_EVERY_MS - 1);
    await reporter.finish(12, true);
    expect(sent).toEqual([]);
  });

  it("from the first interval on: every tick, at once on a new stage, and the last before the result", async () => {
    const { client, sent } = fakeEdge();
    const reporter = new ProgressReporter(client, attempt);
    reporter.stage("waiting");
    await vi.advanceTimersByTimeAsync(REPORT_EVERY_MS);
    expect(sent.map((r) => r.stage)).toEqual(["waiting"]);
    // Only waiting, nothing but the time changes: one report on the first tick at least
    // WAITING_REPORT_EVERY_MS after the last.
    const gap = Math.ceil(WAITING_REPORT_EVERY_MS / REPORT_EVERY_MS) * REPORT_EVERY_MS;
    await vi.advanceTimersByTimeAsync(gap - REPORT_EVERY_MS);
    expect(sent.map((r) => r.stage)).toEqual(["waiting"]);
    await vi.advanceTimersByTimeAsync(REPORT_EVERY_MS);
    expect(sent.map((r) => r.stage)).toEqual(["waiting", "waiting"]);
    // Leaving the room goes at once, and from then on every tick.
    reporter.stage("fetching");
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((r) => r.stage)).toEqual(["waiting", "waiting", "fetching"]);
    await vi.advanceTimersByTimeAsync(REPORT_EVERY_MS);
    expect(sent.map((r) => r.stage)).toEqual(["waiting", "waiting", "fetching", "fetching"]);
    let done = 0;
    reporter.extracting(24, () => done);
    await vi.advanceTimersByTimeAsync(0);
    done = 10;
    await vi.advanceTimersByTimeAsync(REPORT_EVERY_MS);
    expect(sent.at(-1)).toMatchObject({ stage: "extracting", frames_done: 10, frames_total: 24 });
    await reporter.finish(24, true);
    expect(sent.at(-1)).toEqual({
      attempt_id: "a1",
      stage: "finishing",
      frames_done: 24,
      frames_total: 24,
    });
    const count = sent.length;
    await vi.advanceTimersByTimeAsync(5 * REPORT_EVERY_MS);
    expect(sent.length).toBe(count);
  });
});
