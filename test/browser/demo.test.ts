// The landing page's demo as a new visitor meets it, in Debian's Chromium against the real
// stack: the day's allowance is on the page; a preview that fails leaves it as it was (also
// after a reload, which reads it from the server again); "Try a sample video" runs the
// service's own sample end to end; a frame opens large; the length reads like a player's; and
// the API call shown after the success, run as it stands with a key, makes the same frames.
import { spawn } from "node:child_process";
import type { Browser, BrowserContext, Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleUrl } from "../../schema/samples.ts";
import { call, type Harness, startHarness } from "../e2e/support/harness.ts";
import {
  collectCspViolations,
  collectPageErrors,
  DESKTOP,
  launchBrowser,
  PHONE,
  screenshot,
  seriousViolations,
} from "./support/browser.ts";

const LIMIT = 3;
/** The background of the sample's first three scenes (scripts/make-samples.mjs). */
const SCENE_COLOURS = [
  [0x0b, 0x1d, 0x51],
  [0xf2, 0xc9, 0x4c],
  [0x06, 0x4e, 0x3b],
];

let h: Harness;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let cspViolations: string[];
let privateUrl: string;

beforeAll(async () => {
  // Private addresses allowed so a loopback video can fail at extraction (403) rather than be
  // refused at creation; test/e2e/samples.test.ts runs the sample with them refused.
  h = await startHarness({ STILLS_DEMO_DAILY_LIMIT: String(LIMIT) });
  h.videos.route("/private/clip.mp4", (_req, res) => res.writeHead(403).end("login required"));
  privateUrl = `${h.videos.origin}/private/clip.mp4`;
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: DESKTOP, locale: "en-US" });
  page = await context.newPage();
  errors = collectPageErrors(page);
  cspViolations = await collectCspViolations(page);
  await page.addInitScript(() => {
    const w = globalThis as any;
    w.__shifts = [];
    w.__moved = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as any[]) {
        if (entry.hadRecentInput) continue;
        w.__shifts.push(entry.value);
        // What moved, and from where to where, so a failure names it.
        for (const source of entry.sources ?? []) {
          const { x: x0, y: y0, height: h0 } = source.previousRect;
          const { x, y, height } = source.currentRect;
          w.__moved.push(
            `${entry.value}: ${source.node?.nodeName}#${source.node?.id}.${source.node?.className} ` +
              `(${x0},${y0} h${h0}) -> (${x},${y} h${height})`,
          );
        }
      }
    }).observe({ type: "layout-shift", buffered: true });
  });
  await page.goto(`${h.stack.baseUrl}/`);
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function allowanceShown(): Promise<{ text: string; remaining: number; limit: number }> {
  const line = page.locator("#demo-allowance");
  return {
    text: (await line.innerText()).trim(),
    remaining: Number(await line.getAttribute("data-remaining")),
    limit: Number(await line.getAttribute("data-limit")),
  };
}

function demoCreated() {
  return page.waitForResponse(
    (r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/v1/demo",
  );
}

function runBash(script: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("bash", ["-e", "-c", script], { env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function cornerColour(url: string): Promise<number[]> {
  const bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
  const { data } = await sharp(bytes)
    .extract({ left: 4, top: 4, width: 8, height: 8 })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const sums = [0, 0, 0];
  for (let i = 0; i < data.length; i += 3) for (let c = 0; c < 3; c++) sums[c] += data[i + c];
  return sums.map((sum) => sum / (data.length / 3));
}

describe("the landing page's demo", () => {
  it("says how many free previews are left today before any is made", async () => {
    const shown = await allowanceShown();
    expect(shown).toMatchObject({ remaining: LIMIT, limit: LIMIT });
    expect(shown.text).toBe(
      `${LIMIT} of ${LIMIT} free previews left today. A preview that fails doesn't count.`,
    );
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("leaves the allowance unchanged when a preview fails, on the page and on the server", async () => {
    await page.locator("#demo-url").fill(privateUrl);
    const created = demoCreated();
    await page.locator("#demo-submit").click();
    const demo = await (await created).json();
    // The answer to the creation took one use...
    expect(demo.allowance).toMatchObject({ limit: LIMIT, remaining: LIMIT - 1 });
    await page.waitForFunction(
      () => (document.getElementById("demo-error")?.textContent ?? "").length > 0,
      undefined,
      { timeout: 60_000 },
    );
    const job = (await call(h.stack, "GET", `/demo/${demo.id}`)).body;
    expect(job.status).toBe("failed");
    const message = (await page.locator("#demo-error").innerText()).trim();
    expect(message.startsWith(job.error.userMessage)).toBe(true);
    expect(message).toContain(
      `This preview didn't count: you have ${LIMIT} of ${LIMIT} left today.`,
    );
    // ...and the failure gave it back.
    expect((await allowanceShown()).remaining).toBe(LIMIT);
    await screenshot(page, "demo-failed-desktop", { fullPage: false });
    expect(await seriousViolations(page)).toEqual([]);
    // The server agrees: a fresh page reads the allowance from the limiter again.
    await page.reload();
    expect(await allowanceShown()).toMatchObject({ remaining: LIMIT, limit: LIMIT });
  });

  it("runs the sample video end to end from its button: 6 frames, a length like a player's, the allowance down by one", async () => {
    const sample = sampleUrl(h.stack.baseUrl);
    expect(await page.locator("#demo-sample").getAttribute("data-url")).toBe(sample);
    const created = demoCreated();
    await page.locator("#demo-sample").click();
    const demo = await (await created).json();
    expect(await page.locator("#demo-url").inputValue()).toBe(sample);
    expect(demo.allowance.remaining).toBe(LIMIT - 1);
    await page.locator("#demo-frames").scrollIntoViewIfNeeded();
    await page.waitForFunction(
      () => {
        const images = [...document.querySelectorAll<HTMLImageElement>("#demo-frames img")];
        return images.length === 6 && images.every((img) => img.complete && img.naturalWidth > 0);
      },
      undefined,
      { timeout: 90_000 },
    );
    const job = (await call(h.stack, "GET", `/demo/${demo.id}`)).body;
    expect(job.status).toBe("completed");
    expect(job.duration_seconds).toBeCloseTo(30, 0);
    expect(await page.locator("#demo-status").innerText()).toMatch(
      /^Done: 6 frames from a 0:30 video\./,
    );
    // Frame times as a player writes them: 0:02.5, not 0:02.50.
    const clocks = await page.locator("#demo-frames .frame-time").allInnerTexts();
    expect(clocks).toEqual(["0:02.5", "0:07.5", "0:12.5", "0:17.5", "0:22.5", "0:27.5"]);
    // The pictures are the sample's scenes (navy, yellow, green for the first three).
    for (const [i, colour] of SCENE_COLOURS.entries()) {
      const seen = await cornerColour(job.frames[i].url);
      for (let c = 0; c < 3; c++) expect(Math.abs(seen[c] - colour[c])).toBeLessThan(24);
    }
    expect(await allowanceShown()).toMatchObject({ remaining: LIMIT - 1, limit: LIMIT });
    const shifts: number[] = await page.evaluate(() => (globalThis as any).__shifts);
    const moved: string[] = await page.evaluate(() => (globalThis as any).__moved);
    expect(shifts, moved.join("\n")).toEqual([]);
    await screenshot(page, "demo-sample-desktop");
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("opens a frame large in a dialog, and Escape closes it back onto the frame", async () => {
    const third = page.locator("#demo-frames .frame-slot").nth(2).locator("button.frame-open");
    await third.click();
    const viewer = page.locator("#demo-viewer");
    await viewer.waitFor({ state: "visible" });
    expect(await page.locator("#demo-viewer-title").innerText()).toBe("Frame 3 at 0:12.5");
    const src = await page.locator("#demo-viewer-image").getAttribute("src");
    expect(src).toBe(await third.locator("img").getAttribute("src"));
    await page.waitForFunction(
      () => (document.getElementById("demo-viewer-image") as HTMLImageElement).naturalWidth > 0,
    );
    const shownWidth = await page
      .locator("#demo-viewer-image")
      .evaluate((img) => img.getBoundingClientRect().width);
    const thumbWidth = await third.evaluate((el) => el.getBoundingClientRect().width);
    expect(shownWidth).toBeGreaterThan(thumbWidth * 1.8);
    expect(await page.locator("#demo-viewer-link").getAttribute("href")).toBe(src);
    await screenshot(page, "demo-viewer-desktop", { fullPage: false });
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press("Escape");
    await viewer.waitFor({ state: "hidden" });
    expect(await third.evaluate((el) => el === document.activeElement)).toBe(true);
  });

  it("shows the API call that does the same, which run as it stands with a key makes the same frames", async () => {
    const curl = (await page.locator("#demo-api-curl-code").innerText()).trim();
    const sample = sampleUrl(h.stack.baseUrl);
    expect(curl).toContain(`${h.stack.baseUrl}/v1/jobs?wait=true`);
    expect(curl).toContain(`"url":"${sample}"`);
    expect(curl).toContain("$STILLS_API_KEY");
    expect(await page.locator("#demo-next a[href='/sign-in']").count()).toBe(1);
    const demoFrames = (await page.locator("#demo-frames .frame-time").allInnerTexts()).length;
    const { key } = await h.newKey("free");
    const run = await runBash(curl, { ...process.env, STILLS_API_KEY: key });
    expect(run.code, run.stderr).toBe(0);
    const job = JSON.parse(run.stdout);
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    expect(job.frames.map((f: any) => f.timestamp)).toEqual([2.5, 7.5, 12.5, 17.5, 22.5, 27.5]);
    expect(job.frames).toHaveLength(demoFrames);
    for (const frame of job.frames) {
      const meta = await sharp(
        Buffer.from(await (await fetch(frame.url)).arrayBuffer()),
      ).metadata();
      expect(meta.format).toBe("jpeg");
      expect(meta.width).toBe(640);
    }
  });

  it("fits a phone: nothing wider than 390 px, and axe finds nothing serious, light or dark", async () => {
    await page.setViewportSize(PHONE);
    await page.locator("#demo").scrollIntoViewIfNeeded();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      PHONE.width,
    );
    await screenshot(page, "demo-sample-phone");
    expect(await seriousViolations(page)).toEqual([]);
    await page.locator("#demo-frames .frame-slot").first().locator("button.frame-open").click();
    await page.locator("#demo-viewer").waitFor({ state: "visible" });
    await screenshot(page, "demo-viewer-phone", { fullPage: false });
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press("Escape");
    // Dark pages (prefers-color-scheme: dark) pass too, on the phone and on the desktop.
    await page.emulateMedia({ colorScheme: "dark" });
    await screenshot(page, "demo-sample-phone-dark");
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(DESKTOP);
    await page.locator("#demo").scrollIntoViewIfNeeded();
    await screenshot(page, "demo-sample-desktop-dark", { fullPage: false });
    expect(await seriousViolations(page)).toEqual([]);
    await page.emulateMedia({ colorScheme: "light" });
    // The failed preview's 403 was the extractor's to see, never the page's: no errors here.
    expect(errors).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
