// The Python client (sdk/python, issue 37), installed as a user installs it: pip into a fresh
// virtual environment of Debian's python3 (offline: --no-build-isolation --no-index over
// Debian's setuptools and wheel), then its core flows run against the shared stack by
// test/sdk/python/flows.py: create with wait, get, wait_for with progress, list over pages,
// usage, pricing, frames on disk, errors as typed exceptions, 429 retried after Retry-After,
// webhook verification of a delivery the stack made, and a batch (create with wait, items over
// pages, list, the same Idempotency-Key, refusals), and the demo without a key.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { download, type Harness, startHarness, startReceiver } from "../e2e/support/harness.ts";
import { freshLoopbackAddress } from "../support/from-address.ts";
import { readImagePattern } from "../support/videos.ts";
import { frameNumberAt, makeSdkVideo, VIDEO } from "./support.ts";

const PYTHON = "/usr/bin/python3";
const SDK_PYTHON = fileURLToPath(new URL("../../sdk/python", import.meta.url));
const FLOWS = fileURLToPath(new URL("./python/flows.py", import.meta.url));

/** Why the Python client cannot be tested here, or null when it can. */
function missing(): string | null {
  if (!existsSync(PYTHON)) return `${PYTHON} is missing (apt-get install python3)`;
  const check = spawnSync(PYTHON, ["-c", "import venv, ensurepip, setuptools, wheel"]);
  if (check.status !== 0) {
    return `Debian's python3 lacks venv, setuptools or wheel (apt-get install python3-venv python3-setuptools python3-wheel): ${check.stderr}`;
  }
  return null;
}
const skipReason = missing();
if (skipReason) console.warn(`test/sdk/python.test.ts skipped: ${skipReason}`);

let h: Harness;
let work: string;
let venvPython: string;

beforeAll(async () => {
  if (skipReason) return;
  h = await startHarness();
  work = mkdtempSync(join(tmpdir(), "stills-py-"));
  // A copy: pip builds in the source tree, and the checkout must stay clean.
  const source = join(work, "src");
  cpSync(SDK_PYTHON, source, {
    recursive: true,
    filter: (path) => !/(__pycache__|\.egg-info|\/build)$/.test(path),
  });
  const venv = join(work, "venv");
  const made = spawnSync(PYTHON, ["-m", "venv", "--system-site-packages", venv], {
    encoding: "utf8",
  });
  expect(made.status, made.stderr).toBe(0);
  const pip = spawnSync(
    join(venv, "bin/pip"),
    ["install", "--no-build-isolation", "--no-index", "--disable-pip-version-check", source],
    { encoding: "utf8" },
  );
  expect(pip.status, `${pip.stdout}\n${pip.stderr}`).toBe(0);
  venvPython = join(venv, "bin/python");
});

afterAll(async () => {
  await h?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

function runPython(
  file: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; input: string },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(options.input);
  });
}

async function exhaust(key: string) {
  for (let i = 0; i < 40; i++) {
    const response = await fetch(`${h.stack.apiUrl}/usage`, {
      headers: { authorization: `Bearer ${key}`, connection: "close" },
    });
    await response.arrayBuffer();
    if (response.status === 429) return;
  }
  throw new Error("the key was never refused");
}

describe.skipIf(skipReason !== null)("the Python client, pip-installed in a fresh venv", () => {
  it("runs the core flows against the stack", async () => {
    const videoUrl = h.serveVideo("/media/python.mp4", await makeSdkVideo());
    const account = await h.newKey("starter");
    const broke = await h.newKey("free");
    await h.execute(
      `UPDATE accounts SET plan_credits = 0, pack_credits = 0 WHERE email = '${broke.email}'`,
    );

    // A real delivery for the client to verify.
    const receiver = await startReceiver();
    const hooked = await fetch(`${h.stack.apiUrl}/jobs?wait=true`, {
      method: "POST",
      headers: { ...account.auth, "content-type": "application/json" },
      body: JSON.stringify({ url: videoUrl, count: 2, webhook_url: receiver.url }),
    });
    const hookedJob = (await hooked.json()) as { id: string; status: string };
    expect(hookedJob.status).toBe("completed");
    for (let i = 0; i < 100 && receiver.received.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await receiver.close();
    const [hook] = receiver.received;

    const limited = await h.newKey("free");
    const limited2 = await h.newKey("free");
    await exhaust(limited.key);
    await exhaust(limited2.key);
    // Not spawnSync: this process serves the video the stack fetches while the script runs.
    const run = await runPython(venvPython, [FLOWS], {
      cwd: work,
      env: {
        PATH: process.env.PATH ?? "",
        // The frames it downloads (tempfile.mkdtemp) go in the test's own directory, removed with it.
        TMPDIR: work,
        STILLS_API_KEY: account.key,
        STILLS_BASE_URL: h.stack.apiUrl,
      },
      input: JSON.stringify({
        base_url: h.stack.apiUrl,
        video_url: videoUrl,
        missing_url: `${new URL(videoUrl).origin}/media/no-such-video.mp4`,
        broke_key: broke.key,
        exhausted_key: limited.key,
        exhausted_key_2: limited2.key,
        secret: await h.webhookSecret(account.email),
        demo_address: freshLoopbackAddress(),
        hook: { body: hook.body, headers: hook.headers },
      }),
    });
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout);

    // The installed package, not the checkout's copy.
    expect(out.module_file).toContain(join(work, "venv"));
    expect(out.version).toBe(
      JSON.parse(readFileSync(join(SDK_PYTHON, "../package.json"), "utf8")).version,
    );
    expect(out.base_url).toBe(h.stack.apiUrl);

    expect(out.rate_limited).toMatchObject({
      class: "RateLimitError",
      status: 429,
      name: "RateLimited",
    });
    expect(out.rate_limited.retry_after).toBeGreaterThan(0);
    expect(out.retried_usage_plan).toBe("free");
    // The retried key's own Retry-After (whole seconds, at least 1) may be shorter than the
    // first key's: a retry that honoured it took at least about a second.
    expect(out.retried_seconds).toBeGreaterThanOrEqual(0.9);

    expect(out.created).toMatchObject({ status: "completed", frames_count: 4, credits_charged: 1 });
    expect(out.got).toEqual(out.created);
    expect(out.waited).toMatchObject({ status: "completed", frames_count: 5 });
    expect(["queued", "processing"]).toContain(out.progress_statuses[0]);
    expect(out.progress_statuses.at(-1)).toBe("completed");

    // Newest first, one per page, across every page: the hooked job, then the two the script made.
    expect(out.listed).toEqual([out.waited.id, out.created.id, hookedJob.id]);
    expect(out.pages).toEqual([
      [3, 0, 1],
      [3, 1, 1],
      [3, 2, 1],
    ]);
    expect(out.usage.credits.available).toBe(out.usage.credits.monthly_allowance - 3);
    expect(out.pricing_keys.length).toBeGreaterThan(0);

    expect(out.files.map((f: { index: number }) => f.index)).toEqual([1, 2, 3, 4]);
    for (const [i, file] of out.files.entries()) {
      const bytes = readFileSync(file.path);
      expect(file.path).toMatch(new RegExp(`frame-000${i + 1}\\.jpg$`));
      expect(file.bytes).toBe(bytes.length);
      const frame = out.created.frames[i];
      expect(Buffer.compare(bytes, (await download(frame.url)).bytes)).toBe(0);
      expect((await readImagePattern(bytes)).number).toBe(frameNumberAt(frame.timestamp));
    }

    const errors = out.errors;
    expect(errors["400"]).toMatchObject({
      class: "InvalidRequestError",
      status: 400,
      name: "InvalidUrl",
    });
    expect(errors["400"].params).toEqual(expect.arrayContaining(["url", "count"]));
    expect(errors["400"].request_id).toBe(errors["400"].header_request_id);
    expect(errors["400"].doc_url).toMatch(/#InvalidUrl$/);
    expect(errors["401"]).toMatchObject({
      class: "AuthenticationError",
      status: 401,
      name: "InvalidApiKey",
    });
    expect(errors["401_none"]).toMatchObject({ status: 401, name: "AuthenticationRequired" });
    expect(errors["402"]).toMatchObject({
      class: "InsufficientBalanceError",
      status: 402,
      name: "InsufficientBalance",
    });
    expect(errors["404"]).toMatchObject({
      class: "NotFoundError",
      status: 404,
      name: "JobNotFound",
    });

    // The batch: the good link's job with its 2 frames, the 404 a failed item, charged once.
    const batch = out.batch;
    expect(batch).toMatchObject({ object: "batch", status: "completed" });
    expect(batch.counts).toMatchObject({ total: 2, completed: 1, failed: 1, pending: 0 });
    expect(out.batch_again_id).toBe(batch.id);
    expect(out.batch_items.map((i: { index: number }) => i.index)).toEqual([1, 2]);
    expect(out.batch_items.map((i: { status: string }) => i.status)).toEqual([
      "completed",
      "failed",
    ]);
    expect(out.batch_items[1].error.name).toBeTruthy();
    const good = out.batch_jobs.find((j: { id: string }) => j.id === out.batch_items[0].job_id);
    expect(good).toMatchObject({ status: "completed", frames_count: 2 });
    for (const frame of good.frames) {
      const bytes = (await download(frame.url)).bytes;
      expect((await readImagePattern(bytes)).number).toBe(frameNumberAt(frame.timestamp));
    }
    const charged = out.batch_jobs.reduce(
      (sum: number, j: { credits_charged: number }) => sum + j.credits_charged,
      0,
    );
    expect(batch.credits_charged).toBe(charged);
    expect(batch.credits_charged).toBeGreaterThan(0);
    expect(out.batch_spent).toBe(batch.credits_charged);
    expect(out.batches_listed).toEqual([batch.id]);
    expect(out.batch_errors["400"]).toMatchObject({ class: "InvalidRequestError", status: 400 });
    expect(out.batch_errors["400"].params).toContain("url");
    expect(out.batch_errors["404"]).toMatchObject({ class: "NotFoundError", status: 404 });

    expect(out.webhook_event).toEqual({ type: "job.completed", job_id: hookedJob.id });
    expect(out.webhook_refusals.tampered).toMatch(/no webhook-signature matches/);
    expect(out.webhook_refusals.old).toMatch(/refusing a replay/);
    expect(out.webhook_refusals.missing).toMatch(/missing/);

    // The demo without a key: six frames of the video, each the picture at its pts; read
    // again by id; a bad link refused with the spec's error.
    expect(out.demo).toMatchObject({ object: "demo_job", status: "completed", frames_count: 6 });
    expect(out.demo_again).toEqual(
      expect.objectContaining({ id: out.demo.id, status: "completed", frames_count: 6 }),
    );
    expect(out.demo.frames).toHaveLength(6);
    for (const frame of out.demo.frames) {
      const picture = await download(frame.url);
      expect(picture.status).toBe(200);
      // The picture at the delivered frame's pts: a frame's own start time, to 6 decimals.
      expect((await readImagePattern(picture.bytes)).number).toBe(
        Math.round(frame.pts * VIDEO.fps),
      );
    }
    expect(out.demo_error).toMatchObject({
      class: "InvalidRequestError",
      status: 400,
      name: "InvalidUrl",
    });
  });
});
