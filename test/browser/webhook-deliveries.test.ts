// The webhooks page in Debian's Chromium against the real stack (decision 0210): after a job
// delivers its event to a local receiver, the page lists the delivery (event, job, attempts,
// the receiver's status) and its page shows the attempt and the body sent. axe finds nothing
// serious at desktop and phone widths, light and dark; screenshots of each.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness, startReceiver } from "../e2e/support/harness.ts";
import { makeTestVideo } from "../support/videos.ts";
import {
  collectPageErrors,
  DESKTOP,
  inBothSchemes,
  launchBrowser,
  PHONE,
} from "./support/browser.ts";
import { signIn } from "./support/sign-in.ts";

const RECEIVER_STATUS = 203;

let h: Harness;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  h = await startHarness();
  receiver = await startReceiver(RECEIVER_STATUS);
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: DESKTOP, locale: "en-US" });
  page = await context.newPage();
  errors = collectPageErrors(page);
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await h?.close();
});

describe("the webhooks page", () => {
  it("shows the empty state, then a job's delivery and its attempt", async () => {
    const account = await h.newKey("starter");
    await signIn(page, h, account.email);
    await page.goto(`${h.stack.baseUrl}/dashboard/webhooks`);
    expect(await page.locator(".empty-state").innerText()).toContain("No deliveries yet.");
    await inBothSchemes(page, "webhooks-empty-desktop");

    const file = await makeTestVideo({ width: 320, height: 180, fps: 30, durationSeconds: 4 });
    const created = await call(h.stack, "POST", "/jobs", {
      body: { url: h.serveVideo("/media/page.mp4", file), count: 2, webhook_url: receiver.url },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    const jobId = created.body.id as string;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [row] = await h.query(
        "SELECT attempts_count FROM webhook_deliveries WHERE job_id = ?",
        [jobId],
      );
      if (Number(row?.attempts_count) >= 1) break;
      if (Date.now() > deadline) throw new Error("the delivery was never logged");
      await new Promise((r) => setTimeout(r, 200));
    }

    await page.reload();
    const rows = page.locator(".deliveries-table tbody tr");
    expect(await rows.count()).toBe(1);
    const cells = (await rows.first().locator("td").allInnerTexts()).map((t) => t.trim());
    expect(cells[0]).toContain("job.completed");
    expect(cells[1]).toContain(jobId.slice(0, 8));
    expect(cells[2]).toBe("1");
    expect(cells[3]).toBe(String(RECEIVER_STATUS));
    await inBothSchemes(page, "webhooks-one-delivery-desktop");

    await rows
      .first()
      .getByRole("link", { name: /job\.completed/ })
      .click();
    await page.waitForURL(/\/dashboard\/webhooks\/deliveries\/msg_/);
    const attempts = page.locator(".attempts-table tbody tr");
    expect(await attempts.count()).toBe(1);
    const attempt = (await attempts.first().locator("td").allInnerTexts()).map((t) => t.trim());
    expect(attempt[1]).toBe(String(RECEIVER_STATUS));
    expect(attempt[2]).toMatch(/^\d[\d,]* ms$/);
    expect(attempt[3]).toBe("Automatic");
    const body = await page.locator(".delivery-body").innerText();
    expect(JSON.parse(body)).toMatchObject({ type: "job.completed", data: { id: jobId } });
    expect(await page.getByRole("button", { name: /Resend/ }).count()).toBe(1);
    await inBothSchemes(page, "webhook-delivery-desktop");

    await page.setViewportSize(PHONE);
    await inBothSchemes(page, "webhook-delivery-phone");
    // Nothing wider than the phone's screen but the body's own scrolling box.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(overflow).toBeLessThanOrEqual(PHONE.width);
    await page.goto(`${h.stack.baseUrl}/dashboard/webhooks`);
    await inBothSchemes(page, "webhooks-one-delivery-phone");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      PHONE.width,
    );
    expect(errors).toEqual([]);
  });
});
