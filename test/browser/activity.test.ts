// The dashboard's activity page in Debian's Chromium against the real stack: after a sign-in
// and a webhook-secret reveal, the page lists both with the browser that did them, reached
// from the dashboard's tabs; axe finds nothing serious at desktop and phone widths.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../e2e/support/harness.ts";
import {
  collectPageErrors,
  DESKTOP,
  expectAccessible,
  launchBrowser,
  PHONE,
  screenshot,
} from "./support/browser.ts";
import { signIn } from "./support/sign-in.ts";

let h: Harness;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
const email = `activity-${crypto.randomUUID().slice(0, 8)}@example.com`;

beforeAll(async () => {
  h = await startHarness();
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: DESKTOP, locale: "en-US" });
  page = await context.newPage();
  errors = collectPageErrors(page);
  page.on("dialog", (dialog) => void dialog.accept());
  await signIn(page, h, email);
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe("the activity page", () => {
  it("lists the sign-in and a secret reveal, newest first, with the browser that did them", async () => {
    await page.goto(`${h.stack.baseUrl}/dashboard/webhooks`);
    await page
      .getByRole("button", { name: /reveal|show/i })
      .first()
      .click();
    await page.waitForLoadState("load");

    await page.getByRole("link", { name: "Activity" }).click();
    await page.waitForURL(`${h.stack.baseUrl}/dashboard/activity`);
    const rows = page.locator("table tbody tr");
    const whats = await rows.locator("td:nth-child(2)").allInnerTexts();
    expect(whats.slice(0, 3).map((w) => w.trim())).toEqual([
      "Webhook signing secret shown",
      "Signed in",
      "Account created",
    ]);
    const clients = await rows.locator("td:nth-child(4)").allInnerTexts();
    expect(clients[0]).toContain("Chrome");
    expect(await page.locator(".dashboard-nav [aria-current='page']").innerText()).toBe("Activity");
    await expectAccessible(page, "activity-desktop");
    await screenshot(page, "activity-desktop");

    await page.setViewportSize(PHONE);
    await page.reload();
    await expectAccessible(page, "activity-phone");
    await screenshot(page, "activity-phone");
    expect(errors).toEqual([]);
  });
});
