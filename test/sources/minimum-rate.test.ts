// A source must keep a minimum rate once a grace period of reading has passed: a body that
// trickles (a byte now and then, never silent long enough for the idle timeout) ends as
// DownloadFailed instead of holding an extractor slot until the job's deadline. Time a reader
// holds the body paused is not the origin's slowness.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SourceError } from "../../extractor/sources/errors.ts";
import { openSource } from "../../extractor/sources/index.ts";
import type { MinimumRate } from "../../extractor/sources/minimum-rate.ts";
import { readBody, safeFetch } from "../../extractor/sources/safe-fetch.ts";
import { PUBLIC_LOOPBACK, testPolicy } from "./support/policies.ts";
import type { TestServer } from "./support/servers.ts";
import { startTestServer } from "./support/servers.ts";

const RATE: MinimumRate = { graceMs: 300, windowMs: 500, bytesPerSecond: 1000 };
const LARGE_BYTES = 8 * 1024 * 1024;

let server: TestServer;
/** Per trickle request: bytes sent, and whether the reader hung up before the end. */
const trickles: { sent: number; cut: boolean }[] = [];

beforeAll(async () => {
  server = await startTestServer(PUBLIC_LOOPBACK);
  // ?bytes=N: N bytes, one every 100 ms (10 B/s), headers at once.
  server.route("/trickle.mp4", (req, res) => {
    const total = Number(new URL(req.url ?? "", "http://x").searchParams.get("bytes") ?? 100);
    const state = { sent: 0, cut: false };
    trickles.push(state);
    res.writeHead(200, { "content-type": "video/mp4", "content-length": total });
    const timer = setInterval(() => {
      res.write(Buffer.from([0]));
      state.sent += 1;
      if (state.sent === total) {
        clearInterval(timer);
        res.end();
      }
    }, 100);
    res.on("close", () => {
      clearInterval(timer);
      state.cut = state.sent < total;
    });
  });
  server.route("/fast", (_req, res) => res.end(Buffer.alloc(2 * 1024 * 1024, 7)));
  server.route("/large", (_req, res) => {
    res.writeHead(200, { "content-length": LARGE_BYTES });
    res.end(Buffer.alloc(LARGE_BYTES, 1));
  });
});

afterAll(() => server.close());

async function refusal(promise: Promise<unknown>): Promise<SourceError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SourceError);
    return error as SourceError;
  }
  throw new Error("expected a refusal");
}

async function hungUp(state: { cut: boolean }) {
  for (let i = 0; i < 50 && !state.cut; i++) await new Promise((r) => setTimeout(r, 20));
  return state.cut;
}

describe("minimum transfer rate", () => {
  it("ends a body that trickles once the grace period is over, as DownloadFailed", async () => {
    const response = await safeFetch(`${server.origin}/trickle.mp4?bytes=100`, {
      policy: testPolicy(),
      minRate: RATE,
    });
    const error = await refusal(readBody(response.body, 1000));
    expect(error.name).toBe("DownloadFailed");
    expect(error.message).toMatch(
      /sent \d+ bytes in [\d.]+ s of reading, below the minimum of 1000 bytes\/s/,
    );
    expect(error.userMessage).toMatch(/too slowly/);
    const state = trickles.at(-1) as { sent: number; cut: boolean };
    // Cut long before the 100 bytes (10 s) the origin meant to drip.
    expect(await hungUp(state)).toBe(true);
    expect(state.sent).toBeLessThan(30);
  });

  it("lets the same trickle run to its end when no minimum is set", async () => {
    const response = await safeFetch(`${server.origin}/trickle.mp4?bytes=12`, {
      policy: testPolicy(),
    });
    const body = await readBody(response.body, 1000);
    expect(body).toEqual(Buffer.alloc(12));
  });

  it("passes a body that keeps the rate", async () => {
    const response = await safeFetch(`${server.origin}/fast`, {
      policy: testPolicy(),
      minRate: RATE,
    });
    const body = await readBody(response.body, 4 * 1024 * 1024);
    expect(body).toEqual(Buffer.alloc(2 * 1024 * 1024, 7));
  });

  it("does not count time the reader holds the body paused", async () => {
    const response = await safeFetch(`${server.origin}/large`, {
      policy: testPolicy(),
      // Loopback delivers far more than this while it is read; nothing while paused.
      minRate: { graceMs: 100, windowMs: 300, bytesPerSecond: 1024 * 1024 },
    });
    const reader = response.body;
    let received = 0;
    await new Promise<void>((resolve, reject) => {
      reader.once("data", (chunk: Buffer) => {
        received += chunk.length;
        // Backpressure for five windows: an origin judged by wall time would fail here.
        reader.pause();
        setTimeout(() => {
          reader.on("data", (more: Buffer) => {
            received += more.length;
          });
          reader.resume();
        }, 1500);
      });
      reader.on("end", resolve);
      reader.on("error", reject);
    });
    expect(received).toBe(LARGE_BYTES);
  });

  it("applies to a video source: opening a trickling origin fails as DownloadFailed", async () => {
    const error = await refusal(
      openSource(`${server.origin}/trickle.mp4?bytes=400`, "direct", {
        resolution: 720,
        allowPrivate: false,
        policy: testPolicy(),
        maxBytes: 1024 * 1024,
        deadlineMs: 60_000,
        minRate: RATE,
      }),
    );
    expect(error.name).toBe("DownloadFailed");
    expect(error.message).toMatch(/below the minimum of 1000 bytes\/s/);
    expect(await hungUp(trickles.at(-1) as { cut: boolean })).toBe(true);
  });
});
