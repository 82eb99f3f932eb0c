// A best-mode job with a moving preview on its page in Debian's Chromium against the real stack
// (issue 39): the best frames' table (best first, each score and its parts), and the preview
// as an <img> that loaded and is animated (a WebP of more than one picture), with no CSP
// violation; axe finds nothing serious in light and dark at desktop and phone widths.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "../e2e/support/harness.ts";
import { qualityClip } from "../support/quality-clip.ts";
import {
  checkEveryWidth,
  collectCspViolations,
  collectPageErrors,
  DESKTOP,
  launchBrowser,
  screenshot,
} from "./support/browser.ts";
import { signIn } from "./support/sign-in.ts";

let h: Harness;
let browser: Browser;
let page: Page;
let errors: string[];
let csp: string[];
let job: {
  id: string;
  frames: { score: number }[];
  animated: { url: string; frames: number; width: number };
};

beforeAll(async () => {
  h = await startHarness();
  const account = await h.newKey("starter");
  const clipUrl = h.serveVideo("/media/best-page.mp4", await qualityClip());
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: DESKTOP, locale: "en-US" });
  page = await context.newPage();
  errors = collectPageErrors(page);
  csp = await collectCspViolations(page);
  await signIn(page, h, account.email);
  const created = await call(h.stack, "POST", "/jobs?wait=true", {
    body: {
      url: clipUrl,
      mode: "best",
      count: 3,
      animated: { duration: 2, fps: 8, width: 320 },
    },
    headers: account.auth,
  });
  expect(created.body.status).toBe("completed");
  job = created.body;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe("a best job's page", { timeout: 120_000 }, () => {
  it("shows the scores, best first, and plays the preview", async () => {
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs/${job.id}`);
    const section = page.locator("section[aria-labelledby='best-title']");
    await expect.poll(() => section.count()).toBe(1);
    const scores = await section.locator("td[data-label='Score']").allTextContents();
    expect(scores).toEqual(job.frames.map((f) => f.score.toFixed(2)));
    const preview = page.locator("section[aria-labelledby='animated-title'] img");
    await preview.scrollIntoViewIfNeeded();
    await page.waitForFunction(
      () => {
        const img = document.querySelector<HTMLImageElement>(
          "section[aria-labelledby='animated-title'] img",
        );
        return img?.complete && img.naturalWidth > 0;
      },
      undefined,
      { timeout: 10_000 },
    );
    expect(await preview.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(
      job.animated.width,
    );
    // The browser got the animated file itself (more than one picture in it).
    const bytes = await page.evaluate(async (url) => {
      const response = await fetch(url);
      return Array.from(new Uint8Array(await response.arrayBuffer()));
    }, job.animated.url);
    const text = Buffer.from(bytes).toString("latin1");
    expect(text.split("ANMF").length - 1).toBe(job.animated.frames);
    expect(job.animated.frames).toBe(16);

    await checkEveryWidth(page, "best-job", { fullPage: true });
    expect(csp).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("does not play the preview for a visitor who asks for less motion, and links it", async () => {
    await page.setViewportSize(DESKTOP);
    await page.emulateMedia({ reducedMotion: "reduce" });
    try {
      await page.goto(`${h.stack.baseUrl}/dashboard/jobs/${job.id}`);
      const section = page.locator("section[aria-labelledby='animated-title']");
      expect(await section.locator("img").isVisible()).toBe(false);
      const note = section.locator(".reduced-motion-note");
      expect(await note.isVisible()).toBe(true);
      expect(await note.locator("a").getAttribute("href")).toBe(job.animated.url);
      await screenshot(page, "best-job-reduced-motion");
    } finally {
      await page.emulateMedia({ reducedMotion: "no-preference" });
    }
    await page.reload();
    const section = page.locator("section[aria-labelledby='animated-title']");
    expect(await section.locator("img").isVisible()).toBe(true);
    expect(await section.locator(".reduced-motion-note").isVisible()).toBe(false);
  });
});
