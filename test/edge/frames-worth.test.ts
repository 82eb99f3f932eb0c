// Issue 14 at the edge: scenes/keyframes/storyboard credits as decided (per 10 delivered
// frames, the storyboard as one more frame, only the certain frame held at creation), the
// options stored as asked, the storyboard's signed URLs, and the thumbnail track served by the
// edge with its sprite reference rewritten to the sprite's signed URL (also when R2 presigning
// is configured), readable cross-origin.
import { createExecutionContext } from "cloudflare:test";
import { env, exports, withEnv } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import worker from "../../edge/index.ts";
import type { ExtractRequest, ExtractResult } from "../../schema/messages.ts";
import { api, balanceOf, createAccount, freshIp, ORIGIN } from "./support/api.ts";
import { expectLedgerSumsToBalance, setPlanCredits } from "./support/credits.ts";
import { setExtractor } from "./support/fake-extractor.ts";
import { internal, postResult, uploadAttempt } from "./support/pipeline.ts";

const VIDEO = "https://cdn.example.com/clips/lecture.mp4";
const SPRITE = new TextEncoder().encode("SPRITE-JPEG-BYTES");
const SHEET = new TextEncoder().encode("CONTACT-SHEET-JPEG-BYTES");
const TRACK = [
  "WEBVTT",
  "",
  "1",
  "00:00:00.000 --> 00:00:04.000",
  "sprite.jpg#xywh=0,0,320,180",
  "",
  "2",
  "00:00:04.000 --> 00:00:10.000",
  "sprite.jpg#xywh=320,0,320,180",
  "",
].join("\n");

async function put(key: string, body: Uint8Array) {
  const res = await internal(`/internal/files/${key}`, { method: "PUT", body });
  expect(res.ok).toBe(true);
}

/** A fake extraction of `frames` frames; with a storyboard when the job asked for one. */
function extractWith(frames: number, extra: (result: ExtractResult) => void = () => {}) {
  const seen: ExtractRequest[] = [];
  setExtractor(async (request) => {
    seen.push(request);
    const result = await uploadAttempt(request, { framesOk: frames, processedSeconds: 600 });
    result.frames.forEach((f, i) => {
      if (request.options.mode === "scenes") f.scene_score = i === 0 ? 1 : 0.5;
    });
    if (request.options.storyboard) {
      const prefix = `${request.kind}/${request.job_id}/${result.attempt_id}/`;
      await put(`${prefix}storyboard.jpg`, SHEET);
      await put(`${prefix}sprite.jpg`, SPRITE);
      await put(`${prefix}thumbnails.vtt`, new TextEncoder().encode(TRACK));
      result.storyboard = {
        image_key: `${prefix}storyboard.jpg`,
        sprite_key: `${prefix}sprite.jpg`,
        vtt_key: `${prefix}thumbnails.vtt`,
        columns: 5,
        rows: 3,
        tile_width: 320,
        tile_height: 180,
      };
    }
    extra(result);
    await postResult(result);
    return Response.json({ status: "completed" });
  });
  return seen;
}

async function fetchUrl(url: string) {
  const res = await exports.default.fetch(url);
  return {
    status: res.status,
    headers: res.headers,
    bytes: new Uint8Array(await res.arrayBuffer()),
  };
}

describe("credits for the quality modes", { timeout: 30_000 }, () => {
  it("scenes with a storyboard: 12 frames + the storyboard = 13 frames = 2 credits, over 10 minutes", async () => {
    const account = await createAccount();
    await setPlanCredits(account.accountId, 10);
    const seen = extractWith(12);
    const created = await api("POST", "/v1/jobs?wait=true", {
      body: {
        url: VIDEO,
        mode: "scenes",
        sensitivity: 0.7,
        storyboard: true,
        skip: ["duplicate", "black", "black"],
      },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe("completed");
    expect(created.body.credits_charged).toBe(2);
    expect(await balanceOf(account.accountId)).toEqual({ plan: 8, pack: 0, reserved: 0 });
    await expectLedgerSumsToBalance(account.accountId);
    // Options reach the extractor as asked, each skip reason once.
    expect(seen[0].options).toMatchObject({
      mode: "scenes",
      sensitivity: 0.7,
      storyboard: true,
      skip: ["black", "duplicate"],
    });
    expect(created.body.frames[0].scene_score).toBe(1);
    expect(created.body.frames[1].scene_score).toBe(0.5);
  });

  it("keyframes: charged per 10 delivered frames, not per minute", async () => {
    const account = await createAccount();
    await setPlanCredits(account.accountId, 10);
    extractWith(25);
    const created = await api("POST", "/v1/jobs?wait=true", {
      body: { url: VIDEO, mode: "keyframes" },
      headers: account.auth,
    });
    expect(created.body.status).toBe("completed");
    expect(created.body.credits_charged).toBe(3);
    expect(created.body.storyboard ?? null).toBeNull();
  });

  it("holds only the certain frame at creation: 1 credit for scenes, whatever its count", async () => {
    const account = await createAccount();
    await setPlanCredits(account.accountId, 10);
    setExtractor(() => Response.json({ status: "completed" }));
    const scenes = await api("POST", "/v1/jobs", {
      body: { url: VIDEO, mode: "scenes", count: 50, storyboard: true },
      headers: account.auth,
    });
    expect(scenes.status).toBe(201);
    expect((await balanceOf(account.accountId))?.reserved).toBe(1);
  });

  it("a result that claims more frames than count is refused by the edge's check", async () => {
    const account = await createAccount();
    await setPlanCredits(account.accountId, 10);
    let refused = "";
    setExtractor(async (request) => {
      const result = await uploadAttempt(request, { framesOk: 4 });
      await postResult(result).catch((error: Error) => {
        refused = error.message;
      });
      return Response.json({ status: "completed" });
    });
    await api("POST", "/v1/jobs", {
      body: { url: VIDEO, mode: "keyframes", count: 3 },
      headers: account.auth,
    });
    await vi.waitFor(() => expect(refused).toContain("at most 3"), { timeout: 10_000 });
  });

  it("GET /v1/pricing states the rules", async () => {
    const res = await api("GET", "/v1/pricing");
    expect(res.body.credit_rules).toMatchObject({
      scenes_and_keyframes: "like timestamps: 1 credit per 10 delivered frames",
      storyboard: "counts as 1 more delivered frame",
      captions: "free",
    });
  });
});

describe("the storyboard's files", { timeout: 30_000 }, () => {
  async function storyboardJob() {
    const account = await createAccount({ plan: "starter" });
    extractWith(3);
    const created = await api("POST", "/v1/jobs?wait=true", {
      body: { url: VIDEO, count: 3, storyboard: true },
      headers: account.auth,
    });
    expect(created.body.status).toBe("completed");
    return { account, job: created.body };
  }

  it("signed URLs for the sheet, sprite and track; the track's sprite reference is the sprite's signed URL", async () => {
    const { job } = await storyboardJob();
    const board = job.storyboard;
    expect(board).toMatchObject({ columns: 5, rows: 3, tile_width: 320, tile_height: 180 });
    expect((await fetchUrl(board.image_url)).bytes).toEqual(SHEET);
    expect((await fetchUrl(board.sprite_url)).bytes).toEqual(SPRITE);

    const track = await fetchUrl(board.vtt_url);
    expect(track.status).toBe(200);
    expect(track.headers.get("content-type")).toBe("text/vtt; charset=utf-8");
    expect(track.headers.get("access-control-allow-origin")).toBe("*");
    const text = new TextDecoder().decode(track.bytes);
    const targets = text.split("\n").filter((l) => l.includes("#xywh="));
    expect(targets).toEqual([
      `${board.sprite_url}#xywh=0,0,320,180`,
      `${board.sprite_url}#xywh=320,0,320,180`,
    ]);
    // The rewritten reference fetches the sprite; the cue timings are untouched.
    expect((await fetchUrl(targets[0].split("#")[0])).bytes).toEqual(SPRITE);
    expect(text.replaceAll(board.sprite_url, "sprite.jpg")).toBe(TRACK);
    // A tampered track URL is refused like any file URL.
    expect(
      (await fetchUrl(board.vtt_url.replace(/signature=[0-9a-f]+/, `signature=${"0".repeat(64)}`)))
        .status,
    ).toBe(403);
  });

  it("with R2 presigning configured, the track still comes from the edge and points at the presigned sprite", async () => {
    const { account, job } = await storyboardJob();
    const vars = {
      R2_ACCESS_KEY_ID: "test-r2-access-key",
      R2_SECRET_ACCESS_KEY: "test-r2-secret-access-key",
      R2_ACCOUNT_ID: "0123456789abcdef0123456789abcdef",
      R2_BUCKET_NAME: "stills-files",
    };
    const configured = { ...env, ...vars } as Env;
    const call = async (url: string, headers: Record<string, string> = {}) =>
      (await withEnv(configured, () =>
        worker.fetch(
          new Request(url, {
            headers: { "cf-connecting-ip": freshIp(), ...headers },
          }) as Parameters<typeof worker.fetch>[0],
          configured,
          createExecutionContext(),
        ),
      )) as Response;
    const read = await (await call(`${ORIGIN}/v1/jobs/${job.id}`, account.auth)).json<any>();
    const board = read.storyboard;
    expect(new URL(board.sprite_url).host).toBe(
      "0123456789abcdef0123456789abcdef.r2.cloudflarestorage.com",
    );
    expect(new URL(board.vtt_url).origin).toBe(ORIGIN);
    expect(new URL(board.vtt_url).pathname).toMatch(/^\/files\/job\/.+\/thumbnails\.vtt$/);
    const track = await call(board.vtt_url);
    expect(track.headers.get("access-control-allow-origin")).toBe("*");
    const text = await track.text();
    const target = text.split("\n").find((l) => l.includes("#xywh=")) ?? "";
    const spriteUrl = new URL(target.split("#")[0]);
    expect(spriteUrl.host).toBe(new URL(board.sprite_url).host);
    expect(spriteUrl.pathname).toBe(new URL(board.sprite_url).pathname);
    // Same expiry as the job's other URLs (X-Amz-Date + X-Amz-Expires = expires_at).
    const expiresOf = (u: URL) => {
      const date = u.searchParams.get("X-Amz-Date") ?? "";
      const iso = `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`;
      return Date.parse(iso) / 1000 + Number(u.searchParams.get("X-Amz-Expires"));
    };
    expect(Math.abs(expiresOf(spriteUrl) - Date.parse(read.expires_at) / 1000)).toBeLessThanOrEqual(
      1,
    );
  });
});
