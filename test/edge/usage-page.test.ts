// The Usage page (decision 0251): the daily charts and their table agree with the jobs; the
// ledger folded to one row per job sums to the same as the unfolded ledger (jobs that were
// charged, failed and still run, beside entries of no job); the CSV download's headers, its
// escaping and its neutralised formulas.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { csvField } from "../../edge/routes/account/ledger-export.ts";
import { periodDays } from "../../edge/routes/account/usage-chart.tsx";
import { csvObjects, columnSum as sum } from "../support/csv.ts";
import { api } from "./support/api.ts";
import { setExtractor } from "./support/fake-extractor.ts";
import { createJobRunBy } from "./support/pipeline.ts";
import { signedInWithKey } from "./support/visitor.ts";

async function ledgerSums(accountId: string) {
  return env.DB.prepare(
    `SELECT count(*) AS entries, sum(plan_delta) AS plan, sum(pack_delta) AS pack,
            sum(reserved_delta) AS reserved FROM credit_ledger WHERE account_id = ?`,
  )
    .bind(accountId)
    .first<{ entries: number; plan: number; pack: number; reserved: number }>();
}

describe("the CSV fields", () => {
  it("quotes text, doubles quotes, keeps numbers, and neutralises formula-looking text", () => {
    expect(csvField(-3)).toBe("-3");
    expect(csvField(0)).toBe("0");
    expect(csvField(null)).toBe("");
    expect(csvField("https://cdn.example.com/a,b.mp4")).toBe('"https://cdn.example.com/a,b.mp4"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField("two\r\nlines")).toBe('"two\r\nlines"');
    for (const formula of ["=1+1", "+1", "-1+2", "@SUM(A1)", "\tx", "\rx"]) {
      expect(csvField(formula)).toBe(`"'${formula}"`);
    }
    expect(csvField('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
  });
});

describe("the days of a chart", () => {
  it("are every UTC day of the span, oldest first, at most the last 62", () => {
    const known = [{ day: "2026-11-27", jobs: 2, credits: 3, frames: 40 }];
    expect(periodDays("2026-11-25T18:00:00.000Z", "2026-11-28T09:00:00.000Z", known)).toEqual([
      { day: "2026-11-25", jobs: 0, credits: 0, frames: 0 },
      { day: "2026-11-26", jobs: 0, credits: 0, frames: 0 },
      known[0],
      { day: "2026-11-28", jobs: 0, credits: 0, frames: 0 },
    ]);
    const long = periodDays("2024-01-01T00:00:00.000Z", "2026-11-28T09:00:00.000Z", []);
    expect(long).toHaveLength(62);
    expect(long.at(-1)?.day).toBe("2026-11-28");
    expect(long[0].day).toBe("2026-09-28");
  });
});

describe("the folded ledger", () => {
  it("shows one row per job with its hold, and sums to the unfolded ledger, on screen and in CSV", async () => {
    const owner = await signedInWithKey();
    const charged = await createJobRunBy(owner, 3, { framesOk: 3, processedSeconds: 90 });
    expect(charged.body.status).toBe("completed");
    const failed = await createJobRunBy(owner, 2, {
      fail: { name: "PrivateContent", message: "HTTP 403 from origin", userMessage: "" },
    });
    expect(failed.body.status).toBe("failed");
    // A job still running: its hold is all the ledger has of it.
    setExtractor(() => Response.json({ accepted: true }, { status: 202 }));
    const running = await api("POST", "/v1/jobs", {
      body: { url: "https://cdn.example.com/clips/long.mp4", count: 4 },
      headers: owner.auth,
    });
    expect(running.status).toBe(201);
    // An entry of no job whose note looks like a formula, and a job link with a comma and quotes.
    await env.DB.prepare(
      "INSERT INTO credit_ledger (id, account_id, kind, pack_delta, note) VALUES (?, ?, 'pack', 7, ?)",
    )
      .bind(`test:${crypto.randomUUID()}`, owner.accountId, '=HYPERLINK("http://evil.example")')
      .run();
    const oddUrl = 'https://cdn.example.com/clips/a,b "c".mp4';
    await env.DB.prepare("UPDATE jobs SET url = ? WHERE id = ?")
      .bind(oddUrl, charged.body.id)
      .run();

    const jobs = [charged.body.id, failed.body.id, running.body.id] as string[];
    const totals = await ledgerSums(owner.accountId);
    // Held then charged, held then released, held: five entries for three jobs, plus the
    // account's first grant and the pack.
    expect(totals?.entries).toBe(7);

    const page = await owner.visitor.get("/dashboard/usage");
    expect(page.status).toBe(200);
    const rowJobs = [...page.text.matchAll(/<tr data-job="([^"]+)"/g)].map((m) => m[1]);
    expect(rowJobs.sort()).toEqual([...jobs].sort());
    expect(page.text).toContain('href="/dashboard/usage/ledger.csv"');

    const download = await owner.visitor.get("/dashboard/usage/ledger.csv");
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(download.headers.get("content-disposition")).toMatch(
      /^attachment; filename="stills-ledger-by-job-\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    expect(download.headers.get("cache-control")).toBe("no-store");
    const folded = csvObjects(download.text);
    expect(folded).toHaveLength(5);
    expect(sum(folded, "plan_delta")).toBe(totals?.plan);
    expect(sum(folded, "pack_delta")).toBe(totals?.pack);
    expect(sum(folded, "reserved_delta")).toBe(totals?.reserved);
    expect(sum(folded, "entries")).toBe(totals?.entries);

    const byJob = new Map(folded.map((row) => [row.job_id, row]));
    const chargedRow = byJob.get(charged.body.id);
    expect(chargedRow).toMatchObject({ entry: "charge", job_url: oddUrl, reserved_delta: "0" });
    expect(Number(chargedRow?.held)).toBeGreaterThan(0);
    expect(-Number(chargedRow?.plan_delta) - Number(chargedRow?.pack_delta)).toBe(
      charged.body.credits_charged,
    );
    expect(byJob.get(failed.body.id)).toMatchObject({
      entry: "release",
      plan_delta: "0",
      pack_delta: "0",
      reserved_delta: "0",
    });
    const runningRow = byJob.get(running.body.id);
    expect(runningRow?.entry).toBe("reserve");
    expect(runningRow?.reserved_delta).toBe(runningRow?.held);
    // The text as a spreadsheet would read it: the formula is text, the link whole.
    const pack = folded.find((row) => row.entry === "pack" && row.pack_delta === "7");
    expect(pack?.note).toBe('\'=HYPERLINK("http://evil.example")');
    expect(download.text).toContain('"https://cdn.example.com/clips/a,b ""c"".mp4"');

    const entries = await owner.visitor.get("/dashboard/usage/ledger.csv?rows=entries");
    expect(entries.headers.get("content-disposition")).toMatch(/stills-ledger-entries-/);
    const unfolded = csvObjects(entries.text);
    expect(unfolded).toHaveLength(7);
    for (const column of ["plan_delta", "pack_delta", "reserved_delta"]) {
      expect(sum(unfolded, column)).toBe(sum(folded, column));
    }
    // Another account's download holds none of this one's rows.
    const stranger = await signedInWithKey();
    const theirs = await stranger.visitor.get("/dashboard/usage/ledger.csv?rows=entries");
    expect(csvObjects(theirs.text)).toHaveLength(1);
    for (const id of jobs) expect(theirs.text).not.toContain(id);
  });
});

describe("the daily charts", () => {
  it("draw a bar per day of the period with the jobs' credits and frames, and the table agrees", async () => {
    const owner = await signedInWithKey();
    const first = await createJobRunBy(owner, 3, { framesOk: 3, processedSeconds: 90 });
    const second = await createJobRunBy(owner, 5, {
      framesOk: 4,
      framesFailed: 1,
      processedSeconds: 150,
    });
    const third = await createJobRunBy(owner, 2, { framesOk: 2, processedSeconds: 30 });
    // The period began four days ago; the jobs were made on its first and third days.
    const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
    await env.DB.prepare("UPDATE accounts SET period_start = ? WHERE id = ?")
      .bind(day(4), owner.accountId)
      .run();
    await env.DB.prepare("UPDATE jobs SET created_at = ? WHERE id IN (?, ?)")
      .bind(day(4), first.body.id, second.body.id)
      .run();
    await env.DB.prepare("UPDATE jobs SET created_at = ? WHERE id = ?")
      .bind(day(2), third.body.id)
      .run();
    const { results } = await env.DB.prepare(
      `SELECT substr(created_at, 1, 10) AS day, sum(credits_charged) AS credits,
              sum(frames_count - frames_failed) AS frames, count(*) AS jobs
       FROM jobs WHERE account_id = ? GROUP BY day`,
    )
      .bind(owner.accountId)
      .all<{ day: string; credits: number; frames: number; jobs: number }>();
    expect(results).toHaveLength(2);
    const expected = new Map(results.map((r) => [r.day, r]));
    expect(expected.get(day(4).slice(0, 10))?.frames).toBe(7);
    expect(expected.get(day(2).slice(0, 10))?.frames).toBe(2);

    const page = await owner.visitor.get("/dashboard/usage");
    const html = page.text;
    for (const [chart, field] of [
      ["credits-chart", "credits"],
      ["frames-chart", "frames"],
    ] as const) {
      const svg = html.slice(
        html.indexOf(`id="${chart}"`),
        html.indexOf("</svg>", html.indexOf(`id="${chart}"`)),
      );
      expect(svg).toContain('role="img"');
      expect(svg).toMatch(new RegExp(`<title id="${chart}-title">`));
      expect(svg).toMatch(new RegExp(`<desc id="${chart}-desc">`));
      const bars = [...svg.matchAll(/data-day="([\d-]+)" data-value="(\d+)"/g)].map((m) => ({
        day: m[1],
        value: Number(m[2]),
      }));
      // Five days: the period's first four and today.
      expect(bars.map((b) => b.day)).toEqual([4, 3, 2, 1, 0].map((n) => day(n).slice(0, 10)));
      for (const bar of bars) expect(bar.value).toBe(expected.get(bar.day)?.[field] ?? 0);
      const heights = [...svg.matchAll(/height="([\d.]+)" data-day/g)].map((m) => Number(m[1]));
      expect(heights.filter((h) => h > 0)).toHaveLength(2);
    }
    const table = [
      ...html.matchAll(
        /<tr data-day="([\d-]+)"><th scope="row">[^<]+<\/th><td class="num">(\d+)<\/td><td class="num">(\d+)<\/td><td class="num">(\d+)<\/td><\/tr>/g,
      ),
    ];
    expect(table).toHaveLength(5);
    for (const [, rowDay, jobs, credits, frames] of table) {
      const known = expected.get(rowDay);
      expect([Number(jobs), Number(credits), Number(frames)]).toEqual([
        known?.jobs ?? 0,
        known?.credits ?? 0,
        known?.frames ?? 0,
      ]);
    }
    // The charts sum to the period's figures the overview and /v1/usage show.
    const usage = await api("GET", "/v1/usage", { headers: owner.auth });
    expect(usage.body.this_period.frames_delivered).toBe(9);
    expect(usage.body.this_period.credits_charged).toBe(
      results.reduce((total, r) => total + r.credits, 0),
    );
  });
});
