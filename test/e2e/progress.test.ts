// job.progress on the real stack (issue 36, decision 0230): a job on a 2-minute 1080p file,
// polled every 200 ms, moves through the stages in order, frames_done never goes back, rises
// several times and ends equal to frames_count, frames_total is right once known, and the job's
// D1 row changes far less often than its progress (the progress lives in the job's Durable
// Object). The list's processing row, MCP's get_job and the completed webhook carry it too.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROGRESS_STAGES, type Progress } from "../../schema/api.ts";
import { makeTestVideo } from "../support/videos.ts";
import { call, type Harness, startHarness, startReceiver } from "./support/harness.ts";

// Two minutes at 1080p; 10 fps keeps the file quick to make and to seek in.
const VIDEO = { width: 1920, height: 1080, fps: 10, durationSeconds: 120, gop: 20 };
// 240 frames at 1080p: several seconds of extraction, so progress has time to move.
const EVERY_SECONDS = 0.5;
const FRAMES = VIDEO.durationSeconds / EVERY_SECONDS;
const POLL_MS = 200;

let h: Harness;
let videoUrl: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  h = await startHarness();
  videoUrl = h.serveVideo("/media/progress-1080p.mp4", await makeTestVideo(VIDEO));
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

const rank = (stage: string) => PROGRESS_STAGES.indexOf(stage as Progress["stage"]);

describe("job.progress while a job runs", () => {
  it("moves through the stages, rises to frames_count, and costs no D1 write per frame", async () => {
    // Pro: its 300 reads a minute cover this loop's five a second (plus MCP's) for its 90 s;
    // starter's 120 ran out after about a minute of a slow run.
    const account = await h.newKey("pro");
    const created = await call(h.stack, "POST", "/jobs", {
      body: {
        url: videoUrl,
        every: EVERY_SECONDS,
        resolution: "1080",
        webhook_url: receiver.url,
      },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const mcp = new Client({ name: "stills-e2e-progress", version: "1.0.0" });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${h.stack.baseUrl}/mcp`), {
        requestInit: { headers: account.auth },
      }),
    );

    const seen: Progress[] = [];
    const rowVersions = new Set<string>();
    let firstProcessing = 0;
    let lastProcessing = 0;
    let listed: Progress | null = null;
    let fromMcp: { progress: Progress; text: string; listText: string } | null = null;
    let job: Record<string, any>;
    const deadline = Date.now() + 90_000;
    for (;;) {
      const read = await call(h.stack, "GET", `/jobs/${id}`, { headers: account.auth });
      expect(read.status).toBe(200);
      job = read.body;
      if (job.status !== "processing" && job.status !== "queued") break;
      if (job.status === "queued") expect(job.progress).toBeNull();
      if (job.status === "processing") {
        firstProcessing ||= Date.now();
        lastProcessing = Date.now();
        const [row] = await h.query("SELECT * FROM jobs WHERE id = ?", [id]);
        rowVersions.add(JSON.stringify(row));
        if (job.progress) seen.push(job.progress);
        // Once, mid-extraction: the list's row and MCP's get_job carry the same field.
        if (job.progress?.stage === "extracting" && job.progress.frames_done > 0 && !fromMcp) {
          const list = await call(h.stack, "GET", "/jobs?status=processing", {
            headers: account.auth,
          });
          listed = list.body.data.find((j: { id: string }) => j.id === id)?.progress ?? null;
          const tool = (await mcp.callTool({ name: "get_job", arguments: { job_id: id } })) as {
            structuredContent?: { progress?: Progress };
            content: { type: string; text?: string }[];
          };
          const listTool = (await mcp.callTool({
            name: "list_jobs",
            arguments: { status: "processing" },
          })) as { content: { type: string; text?: string }[] };
          if (tool.structuredContent?.progress) {
            fromMcp = {
              progress: tool.structuredContent.progress,
              text: tool.content.map((c) => c.text ?? "").join(" "),
              listText: listTool.content.map((c) => c.text ?? "").join(" "),
            };
          }
        }
      }
      if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status} after 90 s`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    await mcp.close();

    expect(job.status).toBe("completed");
    expect(job.frames_count).toBe(FRAMES);
    expect(seen.length).toBeGreaterThan(5);

    // Stages in order, frames_done never back, frames_total null until known and then right.
    for (const [i, p] of seen.entries()) {
      expect(PROGRESS_STAGES).toContain(p.stage);
      if (p.frames_total !== null) expect(p.frames_total).toBe(job.frames_count);
      if (i === 0) continue;
      const before = seen[i - 1];
      expect(rank(p.stage), `${before.stage} → ${p.stage}`).toBeGreaterThanOrEqual(
        rank(before.stage),
      );
      expect(p.frames_done).toBeGreaterThanOrEqual(before.frames_done);
      if (before.frames_total !== null) expect(p.frames_total).not.toBeNull();
      expect(Date.parse(p.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
    }
    const stages = [...new Set(seen.map((p) => p.stage))];
    expect(stages).toContain("extracting");
    expect(stages.map(rank)).toEqual([...stages.map(rank)].sort((a, b) => a - b));
    const rises = seen.filter((p, i) => i > 0 && p.frames_done > seen[i - 1].frames_done);
    expect(rises.length).toBeGreaterThanOrEqual(3);
    // Fresh: while it ran, the reports came about every second (each read shows the latest).
    const times = [...new Set(seen.map((p) => Date.parse(p.updated_at)))];
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    const sorted = [...gaps].sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThanOrEqual(1_000);

    // It ends equal to frames_count, and the completed job keeps it.
    expect(job.progress).toEqual({
      stage: "finishing",
      frames_done: job.frames_count,
      frames_total: job.frames_count,
      updated_at: job.completed_at,
    });

    // The progress took many values; the job's D1 row only a few: its start, the renewal that
    // tells the edge the probed span, and one lease renewal every 10 s.
    const values = new Set(seen.map((p) => `${p.stage}:${p.frames_done}:${p.frames_total}`));
    const renewals = Math.ceil((lastProcessing - firstProcessing) / 10_000);
    expect(rowVersions.size).toBeLessThanOrEqual(2 + renewals);
    expect(rowVersions.size).toBeLessThan(values.size);

    expect(listed).toMatchObject({ stage: "extracting", frames_total: FRAMES });
    expect(listed?.frames_done).toBeGreaterThan(0);
    expect(fromMcp?.progress.frames_total).toBe(FRAMES);
    expect(fromMcp?.text).toMatch(new RegExp(`of ${FRAMES} frames`));
    expect(fromMcp?.listText).toMatch(
      new RegExp(`${id} processing \\([a-z]+, \\d+ of ${FRAMES} frames\\)`),
    );

    // The completed event's job carries its final progress.
    const deadlineHook = Date.now() + 30_000;
    while (receiver.received.length === 0 && Date.now() < deadlineHook) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const event = JSON.parse(receiver.received[0]?.body ?? "{}");
    expect(event).toMatchObject({ type: "job.completed", data: { id } });
    expect(event.data.progress).toEqual(job.progress);
  });
});
