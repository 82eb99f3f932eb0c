// One grep follows one job: the real stack (scripts/lib/stack.mjs, what `npm start` runs), both
// processes' output captured, a job on a local file with a webhook, then only the lines holding
// the job's id. They must name the job's steps in the order the job went through them, from
// both processes, with the request id of the call that created it and the attempt that ran it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, freePort, type Stack, startStack } from "../../scripts/lib/stack.mjs";
import { fileRoute, startTestServer, type TestServer } from "../sources/support/servers.ts";
import { makeTestVideo } from "../support/videos.ts";
import { call, startReceiver } from "./support/harness.ts";

/** A job's steps in the order they happen (edge/log.ts). */
const STEPS = [
  "job.created",
  "job.dispatched",
  "source.resolved",
  "video.probed",
  "frames.decoded",
  "files.stored",
  "job.settled",
  "webhook.delivered",
] as const;
/** Every step is written, so every one must show in the grep. */
const WRITTEN_TODAY: readonly (typeof STEPS)[number][] = STEPS;
/** Steps that happen inside the attempt: their lines name it. */
const IN_ATTEMPT = new Set([
  "job.dispatched",
  "source.resolved",
  "video.probed",
  "frames.decoded",
  "files.stored",
  "job.settled",
]);

interface Line {
  side: "edge" | "extractor";
  text: string;
}

let stack: Stack;
let videos: TestServer;
let stateDir: string;
const output: Line[] = [];

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "stills-trace-"));
  stack = await startStack({
    STILLS_STATE_DIR: stateDir,
    PORT: String(await freePort()),
    STILLS_ALLOW_PRIVATE_NETWORK: "1",
    quiet: true,
    snapshot: true,
    onOutput: (side, text) => output.push({ side, text }),
  });
  videos = await startTestServer();
});

afterAll(async () => {
  await videos?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** `grep <job id>`, then each line's JSON (wrangler may put a prefix before it). */
function grep(jobId: string) {
  return output
    .filter((line) => line.text.includes(jobId))
    .flatMap((line) => {
      const start = line.text.indexOf("{");
      try {
        const fields = JSON.parse(line.text.slice(start)) as Record<string, unknown>;
        const step = String(fields.event ?? fields.message);
        return [{ ...line, fields, step }];
      } catch {
        return [];
      }
    });
}

async function until(what: string, check: () => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("one grep of the stack's output", () => {
  it("shows a job's whole life in order, from both processes", async () => {
    const file = await makeTestVideo({ width: 320, height: 180, fps: 30, durationSeconds: 4 });
    videos.route("/media/trace.mp4", fileRoute(file, { ranges: true, contentType: "video/mp4" }));
    const receiver = await startReceiver();
    const { key } = await createKey({
      email: `${crypto.randomUUID()}@example.com`,
      plan: "starter",
      stack,
    });
    const requestId = `trace-${crypto.randomUUID()}`;

    const res = await call(stack, "POST", "/jobs?wait=true", {
      body: { url: `${videos.origin}/media/trace.mp4`, count: 2, webhook_url: receiver.url },
      headers: { authorization: `Bearer ${key}`, "X-Request-Id": requestId },
    });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe("completed");
    expect(res.headers.get("X-Request-Id")).toBe(requestId);
    const jobId: string = res.body.id;
    await until("the webhook", () => receiver.received.length > 0);
    await until(
      "its delivery line",
      () => grep(jobId).some((l) => l.step === "webhook.delivered"),
      30_000,
    );
    await receiver.close();

    const lines = grep(jobId);
    const steps = lines.map((l) => l.step).filter((s) => (STEPS as readonly string[]).includes(s));
    for (const step of WRITTEN_TODAY) expect(steps, `a ${step} line`).toContain(step);
    // In order: each step's first line comes after the first line of every earlier step.
    // job.dispatched is written when the extractor's 202 comes back, and the extractor starts
    // the job before it answers, so its first lines may come first: dispatched only has to
    // fall between created and settled.
    const ordered = STEPS.filter((s) => s !== "job.dispatched" && steps.includes(s));
    expect(ordered.map((s) => steps.indexOf(s))).toEqual(
      ordered.map((s) => steps.indexOf(s)).sort((a, b) => a - b),
    );
    const dispatched = steps.indexOf("job.dispatched");
    expect(dispatched).toBeGreaterThan(steps.indexOf("job.created"));
    expect(dispatched).toBeLessThan(steps.indexOf("job.settled"));

    // From both processes: the extractor's lines about this job carry its id too.
    expect(new Set(lines.map((l) => l.side))).toEqual(new Set(["edge", "extractor"]));
    for (const line of lines) expect(line.fields.side).toBe(line.side);

    // The call that created it is named by the request id it was answered with.
    const created = lines.find((l) => l.step === "job.created");
    expect(created?.fields.request).toBe(requestId);
    expect(created?.fields.job).toBe(jobId);

    // Every step inside the attempt names the same attempt.
    const attempts = new Set(
      lines.filter((l) => IN_ATTEMPT.has(l.step)).map((l) => l.fields.attempt),
    );
    expect(attempts.size).toBe(1);
    expect([...attempts][0]).toEqual(expect.any(String));
  });
});
