// The progress reporter's cadence (extractor/output/progress-reporter.ts, decisions 0230, 0280
// and 0288), on a fake clock and counted: nothing in an attempt's first REPORT_EVERY_MS, so an
// attempt that ends sooner costs the edge no report at all; after that, waiting is said once,
// a run out of the room has a first interval of its own (decision 0284), a running attempt
// reports on every tick and no more often (a new stage goes at once only
// when the last report is an interval old), and the last one goes before the result.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { EdgeClient } from "../../extractor/output/edge-sink.ts";
import { ProgressReporter, REPORT_EVERY_MS } from "../../extractor/output/progress-reporter.ts";

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

  it("a run that leaves the room and ends within its first interval sends nothing more, not even the last", async () => {
    const { client, sent } = fakeEdge();
    const reporter = new ProgressReporter(client, attempt);
    reporter.stage("waiting");
    await vi.advanceTimersByTimeAsync(3 * REPORT_EVERY_MS);
    expect(sent.map((r) => r.stage)).toEqual(["waiting"]);
    // Out of the room a third of the way to a tick: the attempt's own ticks would report at
    // once (its last report is old) and on the next tick; the run's first interval holds both.
    await vi.advanceTimersByTimeAsync(REPORT_EVERY_MS / 3);
    reporter.stage("fetching");
    reporter.stage("probing");
    let done = 0;
    reporter.extracting(6, () => done);
    done = 6;
    reporter.stage("uploading");
    await vi.advanceTimersByTimeAsync(REPORT_EVERY_MS - 1);
    await reporter.finish(6, true);
    expect(sent.map((r) => r.stage)).toEqual(["waiting"]);
    await vi.advanceTimersByTimeAsync(5 * REPORT_EVERY_MS);
    expect(sent.length).toBe(1);
  });

  it("from the first interval on: waiting once, then one report a tick at most, the last before the result", async () => {
    const { client, sent } = fakeEdge();
    const reporter = new ProgressReporter(client, attempt);
    const stages = () => sent.map((r) => r.stage);
    reporter.stage("waiting");
    await vi.advanceTimersByTimeAsync(REPORT_EVERY_MS);
    expect(stages()).toEqual(["waiting"]);
    // Only waiting, nothing but the time changes: said once, however long it waits.
    await vi.advanceTimersByTimeAsync(40 * REPORT_EVERY_MS);
    expect(stages()).toEqual(["waiting"]);
    // Leaving the room starts the run's own first interval: nothing at once (decision 0284).
    await vi.advanceTimersByTimeAsync(REPORT_EVERY_MS / 3);
    reporter.stage("fetching");
    await vi.advanceTimersByTimeAsync(0);
    expect(stages()).toEqual(["waiting"]);
    // Stages within the interval wait for its end, which carries the latest of them.
    reporter.stage("probing");
    let done = 0;
    reporter.extracting(24, () => done);
    done = 3;
    await vi.advanceTimersByTimeAsync(REPORT_EVERY_MS - 1);
    expect(stages()).toEqual(["waiting"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.length).toBe(2);
    expect(sent.at(-1)).toMatchObject({ stage: "extracting", frames_done: 3, frames_total: 24 });
    // Running: one report every tick, even when nothing moved but the time.
    await vi.advanceTimersByTimeAsync(REPORT_EVERY_MS);
    expect(sent.length).toBe(3);
    // New stages right after a tick's report wait for the next tick: one report for both.
    done = 10;
    reporter.stage("encoding");
    reporter.stage("uploading");
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.length).toBe(3);
    await vi.advanceTimersByTimeAsync(REPORT_EVERY_MS);
    expect(sent.length).toBe(4);
    expect(sent.at(-1)).toMatchObject({ stage: "uploading", frames_done: 10, frames_total: 24 });
    // Never more than one a tick, however many stages come: 12 ticks, 12 reports.
    for (let tick = 0; tick < 12; tick++) {
      done++;
      await vi.advanceTimersByTimeAsync(REPORT_EVERY_MS);
    }
    expect(sent.length).toBe(16);
    await reporter.finish(24, true);
    expect(sent.at(-1)).toEqual({
      attempt_id: "a1",
      stage: "finishing",
      frames_done: 24,
      frames_total: 24,
    });
    const count = sent.length;
    expect(count).toBe(17);
    await vi.advanceTimersByTimeAsync(5 * REPORT_EVERY_MS);
    expect(sent.length).toBe(count);
  });
});
