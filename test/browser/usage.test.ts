// The Usage and Requests pages in Debian's Chromium against the real stack (decisions 0250,
// 0251). Real jobs (two completed, one failed) make the ledger's rows: the folded ledger shows
// one row per job, and its CSV's sums equal the unfolded ledger's and the stack's own D1. The
// charts draw the jobs' credits and frames on the days they were made, and the table beside
// them says the same. A request's id, typed into the Requests page's search, finds it. axe finds
// nothing serious at desktop and phone widths, light and dark; screenshots of each.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "../e2e/support/harness.ts";
import { columnSum, csvObjects } from "../support/csv.ts";
import { makeTestVideo } from "../support/videos.ts";
import { checkEveryWidth, collectPageErrors, DESKTOP, launchBrowser } from "./support/browser.ts";
import { signIn } from "./support/sign-in.ts";

let h: Harness;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let account: Awaited<ReturnType<Harness["newKey"]>>;
let accountId: string;

interface JobFigures {
  id: string;
  day: string;
  credits: number;
  frames: number;
}
const jobs: JobFigures[] = [];

beforeAll(async () => {
  h = await startHarness();
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: DESKTOP, locale: "en-US" });
  page = await context.newPage();
  errors = collectPageErrors(page);
  account = await h.newKey("starter");
  const [row] = await h.query("SELECT id FROM accounts WHERE email = ?", [account.email]);
  accountId = String(row.id);
  await signIn(page, h, account.email);
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const dayAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();

describe("the Usage page", () => {
  it("runs real jobs: one ledger row per job, and the folded CSV sums to the unfolded ledger", async () => {
    const file = await makeTestVideo({ width: 320, height: 180, fps: 30, durationSeconds: 4 });
    const url = h.serveVideo("/media/usage.mp4", file);
    for (const body of [
      { url, count: 3 },
      { url, timestamps: [0.5, 1.5, 2.5, 3.5] },
    ]) {
      const done = await call(h.stack, "POST", "/jobs?wait=true", { body, headers: account.auth });
      expect(done.status, JSON.stringify(done.body)).toBe(201);
      expect(done.body.status).toBe("completed");
      jobs.push({
        id: done.body.id,
        day: "",
        credits: done.body.credits_charged,
        frames: done.body.frames_count - done.body.frames_failed,
      });
    }
    const missing = `${h.videos.origin}/media/not-there.mp4`;
    const failed = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: missing, count: 2 },
      headers: account.auth,
    });
    expect(failed.body.status).toBe("failed");
    jobs.push({ id: failed.body.id, day: "", credits: 0, frames: 0 });

    const [sums] = await h.query(
      `SELECT count(*) AS entries, sum(plan_delta) AS plan, sum(pack_delta) AS pack,
              sum(reserved_delta) AS reserved FROM credit_ledger WHERE account_id = ?`,
      [accountId],
    );
    // Each job held then was charged or released; the account's first grant beside them.
    expect(Number(sums.entries)).toBe(7);

    await page.goto(`${h.stack.baseUrl}/dashboard/usage`);
    const rowJobs = await page
      .locator(".folded-ledger tbody tr[data-job]")
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-job")));
    expect(rowJobs.sort()).toEqual(jobs.map((job) => job.id).sort());
    expect(await page.locator(".folded-ledger tbody tr").count()).toBe(4);

    const byJob = await page.request.get(`${h.stack.baseUrl}/dashboard/usage/ledger.csv`);
    expect(byJob.status()).toBe(200);
    expect(byJob.headers()["content-type"]).toBe("text/csv; charset=utf-8");
    expect(byJob.headers()["content-disposition"]).toMatch(/^attachment; filename="[^"]+\.csv"$/);
    const folded = csvObjects(await byJob.text());
    const entries = csvObjects(
      await (
        await page.request.get(`${h.stack.baseUrl}/dashboard/usage/ledger.csv?rows=entries`)
      ).text(),
    );
    expect(folded).toHaveLength(4);
    expect(entries).toHaveLength(7);
    for (const [column, total] of [
      ["plan_delta", sums.plan],
      ["pack_delta", sums.pack],
      ["reserved_delta", sums.reserved],
    ] as const) {
      expect(columnSum(folded, column), column).toBe(Number(total));
      expect(columnSum(entries, column), column).toBe(Number(total));
    }
    for (const job of jobs) {
      const row = folded.find((r) => r.job_id === job.id);
      expect(0 - Number(row?.plan_delta) - Number(row?.pack_delta)).toBe(job.credits);
      expect(Number(row?.held)).toBeGreaterThanOrEqual(job.credits);
      expect(row?.entries).toBe("2");
    }
  });

  it("charts each day's credits and frames, and the table beside the charts says the same", async () => {
    // The period began nine days ago; the jobs were made on its second, fifth and last days.
    const days = [8, 5, 0];
    await h.execute(`UPDATE accounts SET period_start = '${dayAgo(9)}' WHERE id = '${accountId}'`);
    for (const [i, job] of jobs.entries()) {
      job.day = dayAgo(days[i]).slice(0, 10);
      await h.execute(`UPDATE jobs SET created_at = '${dayAgo(days[i])}' WHERE id = '${job.id}'`);
    }
    const expected = (day: string, field: "credits" | "frames") =>
      jobs.filter((job) => job.day === day).reduce((total, job) => total + job[field], 0);

    await page.goto(`${h.stack.baseUrl}/dashboard/usage`);
    for (const [chart, field] of [
      ["#credits-chart", "credits"],
      ["#frames-chart", "frames"],
    ] as const) {
      const bars = await page.locator(`${chart} rect.chart-bar`).evaluateAll((rects) =>
        rects.map((rect) => ({
          day: rect.getAttribute("data-day") ?? "",
          value: Number(rect.getAttribute("data-value")),
          height: Number(rect.getAttribute("height")),
        })),
      );
      expect(bars).toHaveLength(10);
      expect(bars[0].day).toBe(dayAgo(9).slice(0, 10));
      expect(bars.at(-1)?.day).toBe(dayAgo(0).slice(0, 10));
      for (const bar of bars)
        expect(bar.value, `${field} on ${bar.day}`).toBe(expected(bar.day, field));
      // Drawn to scale: the tallest bar is the largest value, an empty day has no bar.
      const tallest = Math.max(...bars.map((b) => b.height));
      for (const bar of bars) {
        if (bar.value === 0) expect(bar.height).toBe(0);
        else
          expect(bar.height / tallest).toBeCloseTo(
            bar.value / Math.max(...bars.map((b) => b.value)),
            1,
          );
      }
      const name = await page.locator(chart).getAttribute("aria-labelledby");
      expect(name).toBeTruthy();
      const summary = await page.locator(`${chart} desc`).textContent();
      expect(summary).toContain(`${jobs.reduce((t, j) => t + j[field], 0)} ${field}`);
    }
    expect(jobs.some((job) => job.frames > 0)).toBe(true);

    await page.getByText("The same numbers as a table").click();
    const table = await page.locator(".usage-days tbody tr").evaluateAll((rows) =>
      rows.map((row) => ({
        day: row.getAttribute("data-day") ?? "",
        cells: [...row.querySelectorAll("td")].map((td) =>
          Number(td.textContent?.replace(/,/g, "")),
        ),
      })),
    );
    expect(table).toHaveLength(10);
    for (const row of table) {
      const made = jobs.filter((job) => job.day === row.day).length;
      expect(row.cells, row.day).toEqual([
        made,
        expected(row.day, "credits"),
        expected(row.day, "frames"),
      ]);
    }
    await checkEveryWidth(page, "usage");
    expect(errors).toEqual([]);
  });
});

describe("the Requests page", () => {
  it("finds a request by the id it was answered with", async () => {
    const quoted = `support-${crypto.randomUUID()}`;
    const missing = await call(h.stack, "GET", `/jobs/${crypto.randomUUID()}`, {
      headers: { ...account.auth, "x-request-id": quoted },
    });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-request-id")).toBe(quoted);
    const deadline = Date.now() + 10_000;
    while (
      (await h.query("SELECT 1 FROM api_requests WHERE request_id = ?", [quoted])).length === 0
    ) {
      if (Date.now() > deadline) throw new Error("the request was never recorded");
      await new Promise((r) => setTimeout(r, 100));
    }

    await page.goto(`${h.stack.baseUrl}/dashboard/requests`);
    const listed = await page.locator(".requests-table tbody tr").count();
    // The jobs above, this one, and nothing of the page's own (the dashboard is not the API).
    expect(listed).toBeGreaterThanOrEqual(4);
    await checkEveryWidth(page, "requests");

    await page.getByLabel("Request id").fill(quoted);
    await page.getByLabel("Request id").press("Enter");
    await page.waitForURL(/request_id=support-/);
    const rows = page.locator(".requests-table tbody tr");
    expect(await rows.count()).toBe(1);
    expect(await rows.first().getAttribute("data-request-id")).toBe(quoted);
    const cells = (await rows.first().locator("td").allInnerTexts()).map((t) => t.trim());
    expect(cells[1]).toBe("GET /v1/jobs/{id}");
    expect(cells[2]).toMatch(/^404\s+JobNotFound$/);
    expect(cells[3]).toMatch(/^\d[\d,]* ms$/);
    expect(cells[4]).toBe(quoted);
    await checkEveryWidth(page, "requests-search");
    expect(errors).toEqual([]);
  });
});
