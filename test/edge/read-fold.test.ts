// GET /v1/jobs/{id} reads the job and its frames in one statement, the frames folded into a
// JSON column. Some SQLite versions write a REAL in JSON with 15 significant digits, so these
// tests use values that need 17 to come back as the same double, and compare the answer byte
// for byte with the one a plain drizzle select of the same rows gives.

import { env, exports } from "cloudflare:workers";
import { asc, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { describe, expect, it } from "vitest";
import { forgetSettledJobs } from "../../edge/jobs/read.ts";
import { foldedRows } from "../../edge/storage/prepared-select.ts";
import { frames } from "../../schema/db.ts";
import { api, createAccount, freshIp, ORIGIN, type TestAccount } from "./support/api.ts";
import { createJobRunBy } from "./support/pipeline.ts";
import { answerFromDrizzle } from "./support/reference-read.ts";

/** Doubles whose shortest form has 16 or 17 significant digits, and a few extremes. */
const HARD_REALS = [
  0.1 + 0.2,
  1 / 3,
  2 / 3,
  1e-7,
  Math.PI * 1e5,
  86_399.999_999_999_99,
  123_456_789.123_456_79,
  2 ** 53 + 2,
  5e-324,
  Number.MAX_VALUE,
  0.7 * 0.1,
];
/** Those a scene score (0 to 1) may be. */
const HARD_SCORES = HARD_REALS.filter((value) => value <= 1);

async function completedJob(account: TestAccount, count: number): Promise<string> {
  const created = await createJobRunBy(account, count, { framesOk: count, processedSeconds: 20 });
  expect(created.body.status).toBe("completed");
  return created.body.id;
}

async function readText(account: TestAccount, jobId: string) {
  const response = await exports.default.fetch(`${ORIGIN}/v1/jobs/${jobId}`, {
    headers: { ...account.auth, "cf-connecting-ip": freshIp() },
  });
  return { status: response.status, text: await response.text() };
}

/** Gives every frame of the job REAL values that need all 17 digits, rotating through them. */
async function setHardReals(jobId: string) {
  const { results } = await env.DB.prepare("SELECT idx FROM frames WHERE job_id = ? ORDER BY idx")
    .bind(jobId)
    .all<{ idx: number }>();
  const at = (i: number) => HARD_REALS[i % HARD_REALS.length];
  const score = (i: number) => HARD_SCORES[i % HARD_SCORES.length];
  await env.DB.batch(
    results.map(({ idx }, i) =>
      env.DB.prepare(
        `UPDATE frames SET timestamp = ?, pts = ?, scene_score = ?, moved_to = ?,
           moved_reason = 'blurry' WHERE job_id = ? AND idx = ?`,
      ).bind(at(i), at(i + 1), score(i), at(i + 3), jobId, idx),
    ),
  );
  return results.map((_, i) => [at(i), at(i + 1), score(i), at(i + 3)]);
}

describe("GET /v1/jobs/{id} with its frames folded into the job's statement", () => {
  it("uses values that 15 significant digits would change", async () => {
    const { results } = await env.DB.prepare(
      `SELECT json_array(${HARD_REALS.map(() => "printf('%.15g', ?)").join(", ")}) AS short`,
    )
      .bind(...HARD_REALS)
      .all<{ short: string }>();
    const short = (JSON.parse(results[0].short) as string[]).map(Number);
    const changed = HARD_REALS.filter((value, i) => short[i] !== value);
    // A fold that wrote 15 digits would give most of them back as other numbers.
    expect(changed.length).toBeGreaterThanOrEqual(HARD_REALS.length - 2);
  });

  it("answers frames with 17-digit REALs byte for byte as the drizzle read did", async () => {
    const account = await createAccount({ plan: "starter" });
    const jobId = await completedJob(account, 12);
    const written = await setHardReals(jobId);
    const expected = await answerFromDrizzle(jobId);
    // Twice: the first read looks the key up, the second re-checks it inside the statement.
    for (let i = 0; i < 2; i++) {
      const read = await readText(account, jobId);
      expect(read.status).toBe(200);
      expect(read.text).toBe(expected);
    }
    const body = JSON.parse(expected);
    expect(
      body.frames.map((f: Record<string, number>) => [
        f.timestamp,
        f.pts,
        f.scene_score,
        f.moved_to,
      ]),
    ).toEqual(written);
    // And through the documented shape.
    const documented = await api("GET", `/v1/jobs/${jobId}`, { headers: account.auth });
    expect(documented.status).toBe(200);
  });

  it("keeps the frames in index order and answers a job without frames with none", async () => {
    const account = await createAccount({ plan: "starter" });
    const jobId = await completedJob(account, 30);
    const expected = await answerFromDrizzle(jobId);
    const read = await readText(account, jobId);
    expect(read.text).toBe(expected);
    const indexes = JSON.parse(read.text).frames.map((f: { index: number }) => f.index);
    expect(indexes).toHaveLength(30);
    expect(indexes).toEqual([...indexes].sort((a: number, b: number) => a - b));

    await env.DB.prepare("DELETE FROM frames WHERE job_id = ?").bind(jobId).run();
    forgetSettledJobs();
    const bare = await readText(account, jobId);
    expect(bare.status).toBe(200);
    expect(JSON.parse(bare.text).frames).toEqual([]);
    expect(bare.text).toBe(await answerFromDrizzle(jobId));
  });
});

describe("foldedRows", () => {
  it("gives back the rows a drizzle select gives: NULLs, text and REALs of any kind", async () => {
    const jobId = crypto.randomUUID();
    const reals = [...HARD_REALS, 0, -0, 7, -2.5, -1 / 7, 1e300 * 10];
    await env.DB.batch(
      reals.map((value, i) =>
        env.DB.prepare(
          `INSERT INTO frames (job_id, idx, timestamp, pts, status, r2_key, error, scene_score,
             moved_to, moved_reason, caption) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).bind(
          jobId,
          // Written out of order: the fold answers them by index.
          (i * 7) % reals.length,
          value,
          i % 2 ? null : value,
          i % 3 ? "ok" : "error",
          i % 3 ? `job/${jobId}/frame-${i}.jpg` : null,
          i % 3 ? null : `fault "${i}" \\ ✓`,
          i % 4 ? null : -value,
          // A REAL column holds whatever text cannot be a number, as it is.
          i === 3 ? "not a number" : null,
          null,
          i % 5 ? null : `line\n${i}`,
        ),
      ),
    );
    const fold = foldedRows(frames, `"frames"."job_id" = ?`, "index");
    const { results } = await env.DB.prepare(`SELECT ${fold.sql} AS folded`)
      .bind(jobId)
      .all<{ folded: string }>();
    const viaDrizzle = await drizzle(env.DB)
      .select()
      .from(frames)
      .where(eq(frames.jobId, jobId))
      .orderBy(asc(frames.index));
    const folded = fold.rows(results[0].folded);
    expect(folded).toHaveLength(reals.length);
    expect(folded).toEqual(viaDrizzle);
    // toEqual tells 0 from -0 and compares numbers exactly; spell the REALs out as well.
    expect(folded.map((f) => f.timestamp)).toEqual(viaDrizzle.map((f) => f.timestamp));
    expect(fold.rows(null)).toEqual([]);
  });
});
