// A stand-in for the edge's /internal endpoints, implementing the upload contract exactly as
// extractor/output/edge-sink.ts documents it, and recording what it received.

import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeFileBatch, FILE_BATCH_TYPE } from "../../schema/file-batch.ts";
import { contentTypeOf } from "../../schema/job-files.ts";
import type { ExtractRequest, ExtractResult, ProgressReport } from "../../schema/messages.ts";

export interface FakeEdge {
  baseUrl: string;
  token: string;
  files: Map<string, { bytes: Buffer; contentType: string }>;
  /** The keys of each batch call (POST /internal/file-batches/…), in the order they came. */
  batches: string[][];
  /** Completed multipart objects, and the part sizes they were made of. */
  uploads: Map<string, { bytes: Buffer; partSizes: number[] }>;
  results: ExtractResult[];
  calls: string[];
  /** Answer the next N calls whose "METHOD path" matches with 500. */
  failNext(pattern: RegExp, times: number): void;
  /** Answer every results post with this status (default 202). */
  resultsStatus: number;
  /** Lease renewals received: job path and the attempt they named. */
  leases: { kind: string; jobId: string; attemptId: string }[];
  /** Answer lease renewals with this status (default 200; 409 = another attempt took over). */
  leaseStatus: number;
  /** Progress reports received, with the job they named and when (ms since the epoch). */
  progress: (ProgressReport & { jobId: string; at: number })[];
  /** Answer progress reports with this status (default 200; 409 = the job ended). */
  progressStatus: number;
  close(): Promise<void>;
}

/**
 * The result the extractor posted for a job: POST /extract answers 202 and runs the job in the
 * background, so a caller waits here for how it ended (null when nothing came in time).
 */
export async function resultFor(
  edge: FakeEdge,
  jobId: string,
  timeoutMs: number,
): Promise<ExtractResult | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = edge.results.find((r) => r.job_id === jobId);
    if (found) return found;
    if (Date.now() > deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function startFakeEdge(token = "edge-token"): Promise<FakeEdge> {
  const files: FakeEdge["files"] = new Map();
  const uploads: FakeEdge["uploads"] = new Map();
  const pending = new Map<string, { key: string; parts: Map<number, Buffer> }>();
  const failures: { pattern: RegExp; left: number }[] = [];
  const edge = {
    files,
    uploads,
    batches: [] as string[][],
    results: [] as ExtractResult[],
    calls: [] as string[],
    resultsStatus: 202,
    leases: [] as FakeEdge["leases"],
    leaseStatus: 200,
    progress: [] as FakeEdge["progress"],
    progressStatus: 200,
    token,
    failNext(pattern: RegExp, times: number) {
      failures.push({ pattern, left: times });
    },
  };
  let uploadCounter = 0;

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://edge");
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    const call = `${req.method} ${url.pathname}`;
    edge.calls.push(call);
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (req.headers.authorization !== `Bearer ${token}`)
      return json(401, { error: "unauthorized" });
    const failure = failures.find((f) => f.left > 0 && f.pattern.test(call));
    if (failure) {
      failure.left--;
      return json(500, { error: "injected failure" });
    }
    const path = url.pathname;
    if (req.method === "PUT" && path.startsWith("/internal/files/")) {
      const key = path.slice("/internal/files/".length);
      files.set(key, { bytes: body, contentType: String(req.headers["content-type"]) });
      return json(200, { key, bytes: body.length });
    }
    const batch = /^\/internal\/file-batches\/((?:job|demo)\/[^/]+\/[^/]+)$/.exec(path);
    if (batch && req.method === "POST") {
      // Framed as the extractor sends it (schema/file-batch.ts), typed by name as the edge does.
      if (String(req.headers["content-type"]) === FILE_BATCH_TYPE) {
        const decoded = decodeFileBatch(
          body.buffer.slice(body.byteOffset, body.byteOffset + body.length) as ArrayBuffer,
        );
        if ("error" in decoded) return json(400, decoded);
        const stored = decoded.map((f) => ({
          key: `${batch[1]}/${f.name}`,
          bytes: f.bytes.length,
        }));
        for (const f of decoded) {
          files.set(`${batch[1]}/${f.name}`, {
            bytes: Buffer.from(f.bytes),
            contentType: contentTypeOf(f.name),
          });
        }
        edge.batches.push(stored.map((f) => f.key));
        return json(200, { files: stored });
      }
      const form = await new Request("http://edge/", {
        method: "POST",
        headers: { "content-type": String(req.headers["content-type"]) },
        body,
      }).formData();
      const stored = [];
      for (const [name, value] of form.entries()) {
        if (typeof value === "string") return json(400, { error: `${name} is not a file` });
        const key = `${batch[1]}/${name}`;
        files.set(key, { bytes: Buffer.from(await value.arrayBuffer()), contentType: value.type });
        stored.push({ key, bytes: value.size });
      }
      edge.batches.push(stored.map((f) => f.key));
      return json(200, { files: stored });
    }
    const lease = /^\/internal\/jobs\/(job|demo)\/([^/]+)\/lease$/.exec(path);
    if (lease && req.method === "POST") {
      const named = JSON.parse(body.toString("utf8")) as { attempt_id: string };
      edge.leases.push({ kind: lease[1], jobId: lease[2], attemptId: named.attempt_id });
      return json(edge.leaseStatus, { lease_seconds: 30 });
    }
    const progress = /^\/internal\/jobs\/job\/([^/]+)\/progress$/.exec(path);
    if (progress && req.method === "POST") {
      const report = JSON.parse(body.toString("utf8")) as ProgressReport;
      edge.progress.push({ ...report, jobId: progress[1], at: Date.now() });
      return json(edge.progressStatus, { progress: report });
    }
    if (path === "/internal/results" && req.method === "POST") {
      edge.results.push(JSON.parse(body.toString("utf8")));
      return json(edge.resultsStatus, { ok: edge.resultsStatus < 300 });
    }
    const complete = /^\/internal\/uploads\/(.+)\/complete$/.exec(path);
    if (complete && req.method === "POST") {
      const upload = pending.get(url.searchParams.get("upload_id") ?? "");
      if (!upload || upload.key !== complete[1]) return json(404, { error: "no such upload" });
      const listed = (
        JSON.parse(body.toString("utf8")) as { parts: { part: number; etag: string }[] }
      ).parts;
      const ordered = listed.map((p) => {
        const data = upload.parts.get(p.part);
        if (!data || p.etag !== `etag-${p.part}-${data.length}`)
          throw new Error(`bad part ${p.part}`);
        return data;
      });
      const bytes = Buffer.concat(ordered);
      uploads.set(upload.key, { bytes, partSizes: ordered.map((b) => b.length) });
      return json(200, { key: upload.key, bytes: bytes.length });
    }
    const uploadPath = /^\/internal\/uploads\/(.+)$/.exec(path);
    if (uploadPath && req.method === "POST") {
      const uploadId = `u${++uploadCounter}`;
      pending.set(uploadId, { key: uploadPath[1], parts: new Map() });
      return json(200, { upload_id: uploadId });
    }
    if (uploadPath && req.method === "PUT") {
      const upload = pending.get(url.searchParams.get("upload_id") ?? "");
      const part = Number(url.searchParams.get("part"));
      if (!upload || upload.key !== uploadPath[1] || !(part >= 1))
        return json(404, { error: "no upload" });
      upload.parts.set(part, body);
      return json(200, { part, etag: `etag-${part}-${body.length}` });
    }
    json(404, { error: `no route ${call}` });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(edge, {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

/**
 * A request as the edge sends it to POST /extract: an account's count-3 job of a direct link,
 * called back at `callback`; `overrides` replace any field.
 */
export function extractRequest(
  callback: ExtractRequest["callback"],
  overrides: Partial<ExtractRequest> = {},
): ExtractRequest {
  return {
    job_id: "11111111-2222-3333-4444-555555555555",
    kind: "job",
    tenant: "account:a1",
    url: "https://example.com/v.mp4",
    platform: "direct",
    options: { mode: "count", count: 3, format: "jpg", resolution: 720, output: "urls" },
    max_video_seconds: 900,
    clip_to_max: false,
    max_frames: 300,
    callback,
    ...overrides,
  };
}
