// Sign-in and the dashboard in Debian's Chromium against the real stack (wrangler dev +
// extractor): a new address signs in with the code from the local outbox, creates a key and
// sees it once, uses it (the free plan's 60 credits), revokes it (the next call is 401), runs a
// job on a local video and finds it with its thumbnail, one click from its frames; then signs
// out. Every page is checked with axe and photographed at desktop and phone widths.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "../e2e/support/harness.ts";
import { makeTestVideo } from "../support/videos.ts";
import {
  collectPageErrors,
  DESKTOP,
  expectAccessible,
  launchBrowser,
  PHONE,
  screenshot,
} from "./support/browser.ts";

const KEY_PATTERN = /^stills_live_[0-9A-Za-z]{38}$/;
/** Chromium logs a page answered 400 (the wrong code, on purpose) as a console error. */
const EXPECTED_400 = /^Failed to load resource: the server responded with a status of 400/;

let h: Harness;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let videoUrl: string;
const email = `browser-${crypto.randomUUID().slice(0, 8)}@example.com`;
let jobId: string;

beforeAll(async () => {
  h = await startHarness();
  videoUrl = h.serveVideo(
    "/media/product-tour.mp4",
    await makeTestVideo({ width: 640, height: 360, durationSeconds: 6 }),
  );
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: DESKTOP, locale: "en-US" });
  page = await context.newPage();
  errors = collectPageErrors(page);
  // Revoking and rotating ask first; the person says yes.
  page.on("dialog", (dialog) => void dialog.accept());
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function latestCode(address: string): Promise<string> {
  const [row] = await h.query(
    `SELECT code FROM mail_outbox WHERE to_email = '${address}' ORDER BY created_at DESC LIMIT 1`,
  );
  return String(row?.code ?? "");
}

/** Every image on the page has loaded (signed URLs work and the policy let them in). */
async function expectImagesLoaded() {
  await page.waitForFunction(() =>
    [...document.images].every((img) => img.complete && img.naturalWidth > 0),
  );
}

async function usage(key: string) {
  return call(h.stack, "GET", "/usage", { headers: { authorization: `Bearer ${key}` } });
}

describe("a new customer", () => {
  it("signs in with the code from the outbox, using the keyboard", async () => {
    await page.goto(`${h.stack.baseUrl}/dashboard`);
    // No session yet: the dashboard sends us to sign in, and back afterwards.
    await page.waitForURL(/\/sign-in\?next=%2Fdashboard$/);
    await screenshot(page, "sign-in-desktop");
    await expectAccessible(page, "sign-in");
    await page.keyboard.press("Tab");
    let tabs = 0;
    while ((await page.evaluate(() => document.activeElement?.id)) !== "email" && tabs++ < 20) {
      await page.keyboard.press("Tab");
    }
    await page.keyboard.type(email);
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/sign-in\/code\?/);
    expect(await page.locator("main").innerText()).toContain(email);
    await screenshot(page, "sign-in-code-desktop");
    await expectAccessible(page, "code page");

    // A wrong code first: the page says so and keeps the field.
    const code = await latestCode(email);
    expect(code).toMatch(/^\d{6}$/);
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, "0");
    await page.locator("#code").fill(wrong);
    await page.locator("#code").press("Enter");
    await page.waitForSelector("#code-error");
    expect(await page.locator("#code-error").innerText()).toContain("4 tries left");
    expect(await page.locator("#code").getAttribute("aria-invalid")).toBe("true");
    await screenshot(page, "sign-in-wrong-code-desktop");
    await expectAccessible(page, "wrong code");

    await page.locator("#code").fill(code);
    await page.locator("#code").press("Enter");
    await page.waitForURL(`${h.stack.baseUrl}/dashboard`);
    const main = await page.locator("main").innerText();
    expect(main).toContain(email);
    expect(main).toMatch(/Available now\s+60/);
    expect(main).toContain("No jobs yet");
    await screenshot(page, "overview-new-desktop");
    await expectAccessible(page, "overview");
  });

  it("creates a key, sees it once, and the key shows the free plan with 60 credits", async () => {
    await page.getByRole("link", { name: "API keys" }).click();
    await page.waitForURL(/\/dashboard\/keys$/);
    expect(await page.locator("main").innerText()).toContain("No keys yet");
    await page.locator("#key-name").fill("Laptop");
    await page.getByRole("button", { name: "Create key" }).click();
    const field = page.locator("#new-key-value");
    await field.waitFor();
    const key = await field.inputValue();
    expect(key).toMatch(KEY_PATTERN);
    // The script ran (the policy allowed our own file): the copy button is shown and answers.
    const copy = page.getByRole("button", { name: "Copy the new key" });
    expect(await copy.isVisible()).toBe(true);
    await copy.click();
    await page.waitForFunction(
      () => (document.querySelector(".copy-status")?.textContent ?? "").length > 0,
    );
    await screenshot(page, "keys-created-desktop");
    await expectAccessible(page, "new key");

    const res = await usage(key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      plan: "free",
      credits: { available: 60, plan: 60, pack: 0, monthly_allowance: 60 },
    });

    // Shown once: the list has its beginning and name, and the page nowhere holds the key.
    await page.goto(`${h.stack.baseUrl}/dashboard/keys`);
    const html = await page.content();
    expect(html).not.toContain(key);
    const row = page.locator("tbody tr", { hasText: "Laptop" });
    expect(await row.innerText()).toContain(key.slice(0, 16));
    expect(await row.innerText()).toContain("Laptop");

    // Revoked: refused from the next call on.
    await row.getByRole("button", { name: /^Revoke/ }).click();
    await page.waitForURL(/notice=revoked/);
    expect(await page.locator("main").innerText()).toContain("The key is revoked");
    await screenshot(page, "keys-revoked-desktop");
    await expectAccessible(page, "revoked");
    const refused = await usage(key);
    expect(refused.status).toBe(401);
    expect(refused.body.data).toMatchObject({ name: "InvalidApiKey", reason: "invalid" });
  });

  it("runs a job with a new key and finds it with its thumbnail, one click from its frames", async () => {
    await page.locator("#key-name").fill("Production server");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = await page.locator("#new-key-value").inputValue();
    const job = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: videoUrl, count: 4, storyboard: true, captions: true },
      headers: { authorization: `Bearer ${key}` },
    });
    expect(job.status).toBe(201);
    expect(job.body.status).toBe("completed");
    jobId = job.body.id;

    await page.getByRole("link", { name: "Jobs" }).click();
    await page.waitForURL(/\/dashboard\/jobs$/);
    const link = page.locator(`a[href="/dashboard/jobs/${jobId}"]`);
    const thumb = link.locator("img.thumb");
    await thumb.waitFor();
    await expectImagesLoaded();
    const size = await thumb.evaluate((img: HTMLImageElement) => ({
      natural: img.naturalWidth,
      shown: img.getBoundingClientRect().width,
    }));
    expect(size.natural).toBeGreaterThan(0);
    expect(size.shown).toBeGreaterThan(40);
    const row = await page.locator("tbody tr", { has: link }).innerText();
    expect(row).toContain("Completed");
    expect(row).toMatch(/\b4\b/);
    await screenshot(page, "jobs-desktop");
    await expectAccessible(page, "jobs");

    await link.click();
    await page.waitForURL(new RegExp(`/dashboard/jobs/${jobId}$`));
    await expectImagesLoaded();
    const frames = page.locator(".frame-grid img");
    expect(await frames.count()).toBe(4);
    const captions = await page.locator(".frame-caption").allInnerTexts();
    expect(captions.map((c) => c.split("·")[1]?.trim())).toEqual(
      job.body.frames.map((f: { timestamp: number }) => `${f.timestamp} s`),
    );
    // What the API says of the video, its captions and its storyboard, shown beside the frames.
    const facts = await page.locator("dl.facts").first().innerText();
    expect(facts).toMatch(/Length\s+0:06/);
    expect(facts).toContain(
      `${job.body.video.width}×${job.body.video.height} at ${job.body.video.frame_rate} fps`,
    );
    expect(facts).toMatch(/Captions\s+none found/);
    const { storyboard } = job.body;
    const sheet = page.locator(".storyboard img");
    expect(await sheet.getAttribute("src")).toBe(storyboard.image_url);
    const drawn = await sheet.evaluate((img: HTMLImageElement) => ({
      natural: [img.naturalWidth, img.naturalHeight],
      shown: img.getBoundingClientRect().width,
    }));
    expect(drawn.natural).toEqual([
      storyboard.tile_width * storyboard.columns,
      storyboard.tile_height * storyboard.rows,
    ]);
    expect(drawn.shown).toBeGreaterThan(200);
    expect(await page.getByRole("link", { name: "WebVTT track" }).getAttribute("href")).toBe(
      storyboard.vtt_url,
    );
    await screenshot(page, "job-desktop");
    await expectAccessible(page, "job");

    await page.getByRole("link", { name: "Overview" }).click();
    await expectImagesLoaded();
    expect(await page.locator("main").innerText()).toMatch(/Credits spent\s+1/);
    await screenshot(page, "overview-desktop");
  });

  it("shows billing and webhooks pages that pass axe", async () => {
    await page.getByRole("link", { name: "Plan & billing" }).click();
    await page.waitForURL(/\/dashboard\/billing$/);
    const text = await page.locator("main").innerText();
    expect(text).toContain("Buying is switched off");
    expect(text).toContain("Credit ledger");
    await screenshot(page, "billing-desktop");
    await expectAccessible(page, "billing");

    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByRole("button", { name: "Reveal the signing secret" }).click();
    const secret = await page.locator("#webhook-secret").inputValue();
    expect(secret).toBe(await h.webhookSecret(email));
    await screenshot(page, "webhooks-desktop");
    await expectAccessible(page, "webhooks");
  });

  it("works at a phone's width: nothing wider than the screen, figures and tables readable", async () => {
    const phone = await browser.newContext({
      viewport: PHONE,
      locale: "en-US",
      storageState: await context.storageState(),
      isMobile: true,
      hasTouch: true,
    });
    const small = await phone.newPage();
    const phoneErrors = collectPageErrors(small);
    for (const [path, name] of [
      ["/dashboard", "overview"],
      ["/dashboard/keys", "keys"],
      ["/dashboard/jobs", "jobs"],
      [`/dashboard/jobs/${jobId}`, "job"],
      ["/dashboard/billing", "billing"],
    ]) {
      await small.goto(`${h.stack.baseUrl}${path}`);
      await small.waitForFunction(() =>
        [...document.images].every((img) => img.complete && img.naturalWidth > 0),
      );
      const widths = await small.evaluate(() => ({
        page: document.documentElement.scrollWidth,
        screen: window.innerWidth,
      }));
      expect(widths.page, `${path} fits the screen`).toBeLessThanOrEqual(widths.screen);
      await screenshot(small, `${name}-phone`);
    }
    const signIn = await browser.newContext({ viewport: PHONE, isMobile: true });
    const signInPage = await signIn.newPage();
    await signInPage.goto(`${h.stack.baseUrl}/sign-in`);
    await screenshot(signInPage, "sign-in-phone");
    await signIn.close();
    expect(phoneErrors).toEqual([]);
    await phone.close();
  });

  it("signs out: the session ends and the dashboard asks to sign in again", async () => {
    const [cookie] = (await context.cookies()).filter((c) => c.name === "stills_session");
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe("Lax");
    await page.goto(`${h.stack.baseUrl}/dashboard`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/sign-in\?notice=signed-out$/);
    expect(await page.locator("main").innerText()).toContain("You are signed out.");
    // The old cookie, sent again by hand, is dead on the server.
    const replay = await fetch(`${h.stack.baseUrl}/dashboard`, {
      headers: { cookie: `stills_session=${cookie?.value}` },
      redirect: "manual",
    });
    expect(replay.status).toBe(303);
    expect(errors.filter((e) => !EXPECTED_400.test(e))).toEqual([]);
  });
});
