// A running batch's pages follow it by themselves, in Debian's Chromium against the real stack
// (decision 0383): one batch of two links, the second held at its origin while the batch page
// and the list (in a tab of its own) are opened. Once the origin lets go, both turn completed
// without a reload (a marker set in each page survives), and what they show then is what
// GET /v1/batches/{id} says: each item's status and job, and "2 of 2 ended". The batch page's
// part is put in place only when what it shows changed.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "../e2e/support/harness.ts";
import { fileRoute } from "../sources/support/servers.ts";
import { makeTestVideo } from "../support/videos.ts";
import { collectPageErrors, DESKTOP, launchBrowser, PHONE, screenshot } from "./support/browser.ts";
import { signIn } from "./support/sign-in.ts";

let h: Harness;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let account: Awaited<ReturnType<Harness["newKey"]>>;

beforeAll(async () => {
  h = await startHarness();
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: DESKTOP, locale: "en-US" });
  page = await context.newPage();
  errors = collectPageErrors(page);
  account = await h.newKey("starter");
  await signIn(page, h, account.email);
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/** Marks a page; the mark is gone if the page is loaded again. */
const mark = (tab: Page) =>
  tab.evaluate(() => {
    (window as unknown as { stillHere: boolean }).stillHere = true;
  });
const marked = (tab: Page) =>
  tab.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere === true);

describe("a running batch's pages", () => {
  it("turn completed by themselves, showing what the API says", async () => {
    const file = await makeTestVideo({ width: 320, height: 180, fps: 30, durationSeconds: 3 });
    const quick = h.serveVideo("/batch-live/quick.mp4", file);
    // The second link's first read waits until the pages are open (8 s at most from that read:
    // the source's grace of reading is 10 s).
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let letGo: ReturnType<typeof setTimeout> | undefined;
    let reached = () => {};
    const asked = new Promise<void>((resolve) => (reached = resolve));
    const serve = fileRoute(file, { ranges: true });
    h.videos.route("/batch-live/held.mp4", async (request, response) => {
      if (request.method !== "HEAD") {
        letGo ??= setTimeout(() => release(), 8_000);
        reached();
        await gate;
      }
      return serve(request, response);
    });
    const held = `${h.videos.origin}/batch-live/held.mp4`;
    try {
      const created = await call(h.stack, "POST", "/batches", {
        body: { urls: [quick, held], count: 2 },
        headers: account.auth,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.id as string;
      await asked;

      await page.goto(`${h.stack.baseUrl}/dashboard/batches/${id}`);
      const part = page.locator(`[data-live-batch="${id}"]`);
      expect(await part.getAttribute("data-status")).not.toBe("completed");
      await mark(page);
      // For a person to look at: a batch while it runs, at both widths.
      await screenshot(page, "batch-running-desktop");
      await page.setViewportSize(PHONE);
      await screenshot(page, "batch-running-phone");
      await page.setViewportSize(DESKTOP);
      // Each state the part is replaced with, in order (the first is the page's own).
      await page.evaluate(() => {
        const states = [document.querySelector("[data-live-batch]")?.getAttribute("data-state")];
        (window as unknown as { states: unknown[] }).states = states;
        new MutationObserver((records) => {
          for (const record of records) {
            for (const node of record.addedNodes) {
              if (node instanceof HTMLElement && node.matches("[data-live-batch]")) {
                states.push(node.dataset.state);
              }
            }
          }
        }).observe(document.body, { childList: true, subtree: true });
      });

      const list = await context.newPage();
      const listErrors = collectPageErrors(list);
      await list.goto(`${h.stack.baseUrl}/dashboard/batches`);
      const row = list.locator(`tr[data-batch-id="${id}"]`);
      expect(await row.getAttribute("data-status")).not.toBe("completed");
      await mark(list);

      release();
      await page.waitForSelector(`[data-live-batch="${id}"][data-status="completed"]`, {
        timeout: 90_000,
      });
      await list.waitForSelector(`tr[data-batch-id="${id}"][data-status="completed"]`, {
        timeout: 90_000,
      });
      expect(await marked(page)).toBe(true);
      expect(await marked(list)).toBe(true);

      const read = await call(h.stack, "GET", `/batches/${id}`, { headers: account.auth });
      expect(read.body.status).toBe("completed");
      expect(read.body.counts.completed).toBe(2);
      const items = await part
        .locator("tr[data-item]")
        .evaluateAll((rows) =>
          rows.map((r) => [
            Number(r.getAttribute("data-item")),
            r.getAttribute("data-status"),
            r.querySelector("a")?.getAttribute("href") ?? null,
          ]),
        );
      expect(items).toEqual(
        read.body.items.data.map((item: { index: number; job_id: string }) => [
          item.index,
          "completed",
          `/dashboard/jobs/${item.job_id}`,
        ]),
      );
      expect(await part.locator("dd").first().textContent()).toBe("2 of 2 ended");
      expect(await row.locator("td[data-label='Items']").textContent()).toBe("2 of 2 ended");
      expect(await row.locator("td[data-label='Credits']").textContent()).toBe(
        String(read.body.credits_charged),
      );
      // Never put in place for nothing: each replacement showed a new state.
      const states = await page.evaluate(() => (window as unknown as { states: string[] }).states);
      expect(states.length).toBeGreaterThan(1);
      for (let i = 1; i < states.length; i++) expect(states[i]).not.toBe(states[i - 1]);
      expect(states.at(-1)).toMatch(/:completed:/);
      expect([...errors, ...listErrors]).toEqual([]);
      await list.close();
    } finally {
      clearTimeout(letGo);
      release();
    }
  });
});
