// Reuse at the edge (decision 0350): the keys as data (what changes them and what does not),
// and expiry of a shared prefix: the cron deletes it only once no completed, unexpired job
// holds it, whichever of the earlier job and its repeat expires first.
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { optionsKey, sourceKey } from "../../edge/jobs/reuse.ts";
import { expireJobs } from "../../edge/maintenance.ts";
import type { JobOptions } from "../../schema/messages.ts";
import { PLANS } from "../../schema/plans.ts";
import { createAccount } from "./support/api.ts";

const OPTIONS: JobOptions = {
  mode: "count",
  count: 3,
  format: "jpg",
  resolution: 360,
  output: "urls",
};

it("keys the options that shape the frames, in any order, with the plan's limits", async () => {
  const key = await optionsKey(OPTIONS, PLANS.starter);
  const reordered = { output: "urls", resolution: 360, format: "jpg", count: 3, mode: "count" };
  expect(await optionsKey(reordered as JobOptions, PLANS.starter)).toBe(key);
  // Nothing delivered changes with the webhook or the opt-out itself.
  expect(await optionsKey({ ...OPTIONS, webhook_url: "https://h.test/x" }, PLANS.starter)).toBe(
    key,
  );
  expect(await optionsKey({ ...OPTIONS, reuse: true }, PLANS.starter)).toBe(key);
  // The plan's own width is what an absent max_width means.
  expect(await optionsKey({ ...OPTIONS, max_width: 1920 }, PLANS.starter)).toBe(key);
  for (const other of [
    { ...OPTIONS, format: "png" as const },
    { ...OPTIONS, count: 4 },
    { ...OPTIONS, start: 1 },
    { ...OPTIONS, max_width: 640 },
    { ...OPTIONS, text: true },
  ]) {
    expect(await optionsKey(other, PLANS.starter), JSON.stringify(other)).not.toBe(key);
  }
  // Another plan's limits (width, length, frames) can change the result.
  expect(await optionsKey(OPTIONS, PLANS.pro)).not.toBe(key);
});

it("keys a file by its final URL, validators and size, and a platform video by its id", async () => {
  const file = {
    final_url: "https://cdn.test/v.mp4",
    etag: '"a"',
    last_modified: "Wed, 01 Jul 2026 10:00:00 GMT",
    size: 1000,
  };
  const key = await sourceKey(file);
  expect(await sourceKey({ ...file })).toBe(key);
  for (const other of [
    { ...file, etag: '"b"' },
    { ...file, last_modified: "Thu, 02 Jul 2026 10:00:00 GMT" },
    { ...file, size: 1001 },
    { ...file, final_url: "https://cdn.test/w.mp4" },
  ]) {
    expect(await sourceKey(other), JSON.stringify(other)).not.toBe(key);
  }
  expect(await sourceKey({ platform_id: "youtube:abc" })).toBe(
    await sourceKey({ platform_id: "youtube:abc" }),
  );
  expect(await sourceKey({ platform_id: "youtube:abc" })).not.toBe(
    await sourceKey({ platform_id: "youtube:abd" }),
  );
});

async function completedJob(
  accountId: string,
  expiresAt: string,
  filesFrom: string | null = null,
): Promise<string> {
  const id = crypto.randomUUID();
  await env.DB.prepare(
    `INSERT INTO jobs (id, account_id, status, url, source_url, platform, options, expires_at,
       reused_from, files_from)
     VALUES (?1, ?2, 'completed', 'https://a.test/v.mp4', 'https://a.test/v.mp4', 'direct', '{}',
       ?3, ?4, ?4)`,
  )
    .bind(id, accountId, expiresAt, filesFrom)
    .run();
  if (filesFrom === null) await env.FILES.put(`job/${id}/attempt/frame-0001.jpg`, "jpeg");
  return id;
}

const status = (id: string) =>
  env.DB.prepare("SELECT status FROM jobs WHERE id = ?").bind(id).first("status");
const files = async (id: string) => (await env.FILES.list({ prefix: `job/${id}/` })).objects.length;

it("keeps the earlier job's files while the repeat lives, and deletes them with the repeat", async () => {
  const { accountId } = await createAccount();
  const earlier = await completedJob(accountId, "2030-01-02T00:00:00.000Z");
  const repeat = await completedJob(accountId, "2030-01-10T00:00:00.000Z", earlier);

  await expireJobs(env, Date.parse("2030-01-05T00:00:00.000Z"));
  // The earlier job reads expired, but its files are the repeat's frames.
  expect([await status(earlier), await files(earlier)]).toEqual(["expired", 1]);
  expect(await status(repeat)).toBe("completed");

  await expireJobs(env, Date.parse("2030-01-11T00:00:00.000Z"));
  expect([await status(repeat), await files(earlier)]).toEqual(["expired", 0]);
});

it("keeps the files when the repeat expires first, until the earlier job does", async () => {
  const { accountId } = await createAccount();
  const earlier = await completedJob(accountId, "2031-01-10T00:00:00.000Z");
  // A repeat on a plan with a shorter retention.
  const repeat = await completedJob(accountId, "2031-01-05T00:00:00.000Z", earlier);
  const other = await completedJob(accountId, "2031-01-20T00:00:00.000Z", earlier);

  await expireJobs(env, Date.parse("2031-01-06T00:00:00.000Z"));
  expect([await status(repeat), await files(earlier)]).toEqual(["expired", 1]);

  // The earlier job's own expiry: another repeat still holds the files.
  await expireJobs(env, Date.parse("2031-01-11T00:00:00.000Z"));
  expect([await status(earlier), await files(earlier)]).toEqual(["expired", 1]);

  await expireJobs(env, Date.parse("2031-01-21T00:00:00.000Z"));
  expect([await status(other), await files(earlier)]).toEqual(["expired", 0]);
});
