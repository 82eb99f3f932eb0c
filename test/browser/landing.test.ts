// The landing page in Debian's Chromium against the real stack (wrangler dev + extractor): a
// visitor pastes a local video's link with the keyboard alone and sees the demo's 6 frames
// with their timestamps; a bad link, a private video and the daily demo limit each show the
// API's own message; the pricing table says what GET /v1/pricing says; the page is light,
// accessible, and loads nothing from anywhere else.
import { gzipSync } from "node:zlib";
import type { Browser, BrowserContext, Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "../e2e/support/harness.ts";
import {
  collectCspViolations,
  collectPageErrors,
  collectRequestHosts,
  DESKTOP,
  launchBrowser,
  PHONE,
  screenshot,
  seriousViolations,
} from "./support/browser.ts";
import { makeDemoVideo } from "./support/demo-video.ts";

const TIME_ZONE = "America/New_York";
const BUDGET_BYTES = 50 * 1024;
/** Chromium logs every 4xx answer to fetch as a console error: expected for refused links. */
const REFUSED = /^Failed to load resource: the server responded with a status of (400|429)/;

let h: Harness;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let cspViolations: string[];
let hosts: Set<string>;
const apiCalls: string[] = [];
let videoUrl: string;
let privateUrl: string;
let articleUrl: string;

beforeAll(async () => {
  // Two previews a day that complete: one good video, a private one that fails (and is given
  // back), another good one, then the limit.
  h = await startHarness({
    own: "it uses up a demo allowance of 2, which other files must not share",
    STILLS_DEMO_DAILY_LIMIT: "2",
  });
  videoUrl = h.serveVideo("/media/launch-talk.mp4", await makeDemoVideo());
  h.videos.route("/private/clip.mp4", (_req, res) => res.writeHead(403).end("login required"));
  h.videos.route("/article", (_req, res) =>
    res.writeHead(200, { "content-type": "text/html" }).end("<p>not a video</p>"),
  );
  privateUrl = `${h.videos.origin}/private/clip.mp4`;
  articleUrl = `${h.videos.origin}/article`;
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: DESKTOP, locale: "en-US", timezoneId: TIME_ZONE });
  page = await context.newPage();
  errors = collectPageErrors(page);
  cspViolations = await collectCspViolations(page);
  hosts = collectRequestHosts(page);
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith("/v1/")) apiCalls.push(`${request.method()} ${url.pathname}`);
  });
  await page.addInitScript(() => {
    // What the status line said over time, and every layout shift, for the checks below.
    const w = globalThis as any;
    w.__statusLog = [];
    w.__shifts = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as any[]) {
        if (entry.hadRecentInput) continue;
        const moved = (entry.sources ?? []).map(
          (source: any) => `${source.node?.nodeName}#${source.node?.id}.${source.node?.className}`,
        );
        w.__shifts.push({ value: entry.value, moved });
      }
    }).observe({ type: "layout-shift", buffered: true });
    document.addEventListener("DOMContentLoaded", () => {
      const status = document.getElementById("demo-status");
      if (!status) return;
      new MutationObserver(() => w.__statusLog.push(status.textContent)).observe(status, {
        childList: true,
        characterData: true,
        subtree: true,
      });
    });
  });
  await page.goto(`${h.stack.baseUrl}/`);
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/** The text of the demo's error box once it has one. */
async function demoError(): Promise<string> {
  await page.waitForFunction(
    () => (document.getElementById("demo-error")?.textContent ?? "").trim().length > 0,
    undefined,
    { timeout: 60_000 },
  );
  return (await page.locator("#demo-error").innerText()).trim();
}

async function submitLink(url: string) {
  await page.locator("#demo-url").fill(url);
  await page.locator("#demo-url").press("Enter");
}

/** "1:02.50" or "1:01:02.50" back to seconds, as a reader of the caption would. */
function readClock(text: string): number {
  const parts = text.trim().split(":").map(Number);
  return parts.reduce((total, part) => total * 60 + part, 0);
}

/** Digits of a table cell as a number: "$19 / month" → 19, "1,280 px" → 1280. */
function cellNumber(text: string): number {
  return Number(text.replace(/[^\d]/g, ""));
}

function valueAt(object: any, path: string): unknown {
  return path.split(".").reduce((value, key) => value?.[key], object);
}

describe("the landing page", () => {
  it("is one light page: HTML, CSS and script under 50 KB gzipped, all from our origin, under a strict policy", async () => {
    const response = await fetch(`${h.stack.baseUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const policy = response.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain("style-src 'self';");
    expect(policy).not.toContain("unsafe");
    const html = await response.text();
    const linked = [...html.matchAll(/<(?:link rel="stylesheet" href|script src)="([^"]+)"/g)].map(
      (match) => match[1].replaceAll("&amp;", "&"),
    );
    expect(linked.length).toBeGreaterThanOrEqual(3);
    let total = gzipSync(html).length;
    for (const path of linked) {
      expect(path.startsWith("/assets/"), path).toBe(true);
      const asset = await fetch(`${h.stack.baseUrl}${path}`);
      expect(asset.status, path).toBe(200);
      expect(asset.headers.get("cache-control"), path).toContain("immutable");
      total += gzipSync(Buffer.from(await asset.arrayBuffer())).length;
    }
    expect(total).toBeLessThan(BUDGET_BYTES);
    // The one sentence, the way in to the reference, the sign-in and the MCP setup.
    expect(html).toContain("Stills turns a");
    for (const href of ['href="/docs"', 'href="/sign-in"', 'href="/#mcp"', 'id="mcp"']) {
      expect(html).toContain(href);
    }
    expect(html).toContain(`${h.stack.baseUrl}/mcp`);
  });

  it("shows the pricing table GET /v1/pricing describes, cell for cell", async () => {
    const pricing = (await call(h.stack, "GET", "/pricing")).body;
    const columns = await page.$$eval("table.pricing-table thead th[data-plan]", (cells) =>
      cells.map((cell) => ({ plan: cell.getAttribute("data-plan"), text: cell.textContent })),
    );
    expect(columns.map((c) => c.plan)).toEqual(pricing.plans.map((p: any) => p.name));
    expect(columns.map((c) => c.text?.toLowerCase())).toEqual(
      pricing.plans.map((p: any) => p.name),
    );
    const rows = await page.$$eval("table.pricing-table tbody tr", (trs) =>
      trs.map((tr) => ({
        field: tr.getAttribute("data-field") ?? "",
        label: tr.querySelector("th")?.textContent ?? "",
        cells: [...tr.querySelectorAll("td")].map((td) => ({
          plan: td.getAttribute("data-plan"),
          text: td.textContent ?? "",
        })),
      })),
    );
    // Every limit of the catalog has its row, and the price and credits too.
    const fields = rows.map((row) => row.field);
    const limitFields = Object.keys(pricing.plans[0].limits).map((key) => `limits.${key}`);
    expect(fields.sort()).toEqual(["credits_per_month", "price_usd", ...limitFields].sort());
    for (const row of rows) {
      expect(row.label.trim().length, row.field).toBeGreaterThan(0);
      expect(row.cells.map((cell) => cell.plan)).toEqual(pricing.plans.map((p: any) => p.name));
      row.cells.forEach((cell, i) => {
        expect(cellNumber(cell.text), `${row.field} of ${cell.plan}`).toBe(
          valueAt(pricing.plans[i], row.field),
        );
      });
    }
    for (const pack of pricing.packs) {
      const item = page.locator(`[data-pack="${pack.name}"]`);
      expect(cellNumber(await item.locator('[data-field="credits"]').innerText())).toBe(
        pack.credits,
      );
      expect(cellNumber(await item.locator('[data-field="price_usd"]').innerText())).toBe(
        pack.price_usd,
      );
    }
  });

  it("names every credit rule GET /v1/pricing gives, in its words", async () => {
    const pricing = (await call(h.stack, "GET", "/pricing")).body;
    const squeezed = (text: string) => text.replace(/\s+/g, " ");
    const listed = squeezed(await page.$eval("ul.credit-rules", (list) => list.textContent ?? ""));
    const rules = Object.entries(pricing.credit_rules as Record<string, string>);
    expect(rules.length).toBeGreaterThan(10);
    for (const [name, rule] of rules) expect(listed, name).toContain(squeezed(rule));
  });

  it("runs the demo from the keyboard alone: 6 real frames with the API's timestamps, no layout shift", async () => {
    // Tab from the top of the page to the link field, then on to its button.
    let tabs = 0;
    while ((await page.evaluate(() => document.activeElement?.id)) !== "demo-url") {
      await page.keyboard.press("Tab");
      expect(++tabs, "Tab presses to reach the link field").toBeLessThan(15);
    }
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("demo-submit");
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.type(videoUrl);
    const created = page.waitForResponse(
      (r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/v1/demo",
    );
    await page.keyboard.press("Enter");
    const demo = await (await created).json();
    expect(demo.object).toBe("demo_job");
    // Progress while it runs, announced politely.
    await page.locator("#demo-progress").waitFor({ state: "visible" });
    expect(await page.locator("#demo-status").getAttribute("role")).toBe("status");
    await page.locator("#demo-frames").scrollIntoViewIfNeeded();
    await page.waitForFunction(
      () => {
        const images = [...document.querySelectorAll<HTMLImageElement>("#demo-frames img")];
        return images.length === 6 && images.every((img) => img.complete && img.naturalWidth > 0);
      },
      undefined,
      { timeout: 90_000 },
    );
    expect(await page.locator("#demo-progress").isHidden()).toBe(true);
    const statusLog: string[] = await page.evaluate(() => (globalThis as any).__statusLog);
    expect(statusLog.some((text) => /Queued|Processing/.test(text))).toBe(true);
    expect(await page.locator("#demo-status").innerText()).toMatch(/^Done: 6 frames/);

    const job = (await call(h.stack, "GET", `/demo/${demo.id}`)).body;
    expect(job.status).toBe("completed");
    expect(job.frames).toHaveLength(6);
    const shown = await page.$$eval("#demo-frames .frame-slot", (slots) =>
      slots.map((slot) => {
        const img = slot.querySelector("img") as HTMLImageElement;
        const time = slot.querySelector("time") as HTMLTimeElement;
        return {
          src: img.getAttribute("src"),
          alt: img.alt,
          loading: img.getAttribute("loading"),
          width: img.getAttribute("width"),
          height: img.getAttribute("height"),
          naturalWidth: img.naturalWidth,
          datetime: time.getAttribute("datetime") ?? "",
          clock: time.textContent ?? "",
        };
      }),
    );
    expect(shown).toHaveLength(6);
    for (const [i, frame] of job.frames.entries()) {
      const slot = shown[i];
      expect(slot.src).toBe(frame.url);
      expect(slot.loading).toBe("lazy");
      expect(Number(slot.width)).toBeGreaterThan(0);
      expect(Number(slot.height)).toBeGreaterThan(0);
      expect(slot.alt).toContain(`Frame ${frame.index}`);
      expect(Number(/^PT([\d.]+)S$/.exec(slot.datetime)?.[1])).toBeCloseTo(frame.timestamp, 3);
      expect(readClock(slot.clock)).toBeCloseTo(frame.timestamp, 2);
      // The picture the browser shows is the JPEG the API serves, at the demo's width.
      const bytes = Buffer.from(await (await fetch(frame.url)).arrayBuffer());
      const meta = await sharp(bytes).metadata();
      expect(meta.format).toBe("jpeg");
      expect(slot.naturalWidth).toBe(meta.width);
      expect(meta.width).toBeLessThanOrEqual(640);
    }
    // Frames arrived into reserved slots: nothing on the page moved.
    const shifts: { value: number; moved: string[] }[] = await page.evaluate(
      () => (globalThis as any).__shifts,
    );
    // A frame that arrived outside a reserved slot moves the rows below it: a score near 0.04
    // at this size. Sub-pixel rounding of a line under load scores about 0.00001 (the brand
    // link and the demo's meter were seen at 0.000006 and 0.00005): not a move anyone sees.
    expect(
      shifts.filter((shift) => shift.value >= 0.001),
      JSON.stringify(shifts),
    ).toEqual([]);
    // The page used the public demo endpoints and nothing else of the API.
    expect(new Set(apiCalls)).toEqual(new Set(["POST /v1/demo", `GET /v1/demo/${demo.id}`]));
    expect([...hosts]).toEqual([new URL(h.stack.baseUrl).host]);
    expect(errors).toEqual([]);
    expect(cspViolations).toEqual([]);

    await screenshot(page, "landing-desktop");
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(PHONE);
    await page.locator("#demo").scrollIntoViewIfNeeded();
    // Nothing wider than the phone: the page never scrolls sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      PHONE.width,
    );
    await screenshot(page, "landing-phone");
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(DESKTOP);
  });

  it("shows the API's message for a link that is not a video, on the field", async () => {
    // Not a link: the API's 400. A page without a video: the failed preview's InvalidUrl (the
    // extractor is the one that reads the link, decision 0260), given back.
    const refused = (await call(h.stack, "POST", "/demo", { body: { url: "not a link" } })).body;
    expect(refused.data.name).toBe("InvalidUrl");
    const failed = await call(h.stack, "POST", "/demo", { body: { url: articleUrl } });
    expect(failed.status).toBe(201);
    let article = failed.body;
    for (let i = 0; i < 150 && !["completed", "failed"].includes(article.status); i++) {
      await new Promise((r) => setTimeout(r, 200));
      article = (await call(h.stack, "GET", `/demo/${failed.body.id}`)).body;
    }
    expect(article.status).toBe("failed");
    expect(article.error.name).toBe("InvalidUrl");
    expect(article.error.userMessage).toBe(refused.data.userMessage);
    for (const url of ["not a link", articleUrl]) {
      await submitLink(url);
      await page.waitForFunction(
        (message) => document.getElementById("demo-error")?.textContent?.startsWith(message),
        refused.data.userMessage,
      );
      expect(await page.locator("#demo-url").getAttribute("aria-invalid")).toBe("true");
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("demo-url");
    }
    await screenshot(page, "landing-invalid-link");
    expect(errors.filter((e) => !REFUSED.test(e))).toEqual([]);
    expect(cspViolations).toEqual([]);
  });

  it("shows why a private video gave no frames, from the failed job's userMessage", async () => {
    const created = page.waitForResponse(
      (r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/v1/demo",
    );
    await submitLink(privateUrl);
    const demo = await (await created).json();
    const message = await demoError();
    const job = (await call(h.stack, "GET", `/demo/${demo.id}`)).body;
    expect(job.status).toBe("failed");
    expect(job.error.name).toBe("PrivateContent");
    // The API's message, then that the failed preview was given back (test/browser/demo.test.ts).
    expect(message.startsWith(job.error.userMessage)).toBe(true);
    expect(message).toContain("This preview didn't count");
    expect(await page.locator("#demo-frames img").count()).toBe(0);
  });

  it("shows the daily demo limit with when it resets, in the visitor's own time", async () => {
    // The private video's preview failed and was given back: one preview is left, then none.
    await submitLink(videoUrl);
    await page.locator("#demo-status", { hasText: /^Done: / }).waitFor({ timeout: 90_000 });
    await submitLink(videoUrl);
    const message = await demoError();
    const refused = await call(h.stack, "POST", "/demo", { body: { url: videoUrl } });
    expect(refused.status).toBe(429);
    expect(refused.body.data.name).toBe("DemoLimitReached");
    expect(message.startsWith(refused.body.data.userMessage)).toBe(true);
    // The allowance is per UTC day: it comes back at the next UTC midnight.
    const now = new Date();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    const shownReset = await page.locator("#demo-error time").getAttribute("datetime");
    expect(Date.parse(shownReset ?? "")).toBe(midnight);
    const localTime = new Date(midnight).toLocaleTimeString("en-US", {
      timeZone: TIME_ZONE,
      hour: "numeric",
      minute: "2-digit",
    });
    expect(message).toContain(localTime);
    expect(message).toMatch(/\(in \d+ (h \d+ )?min\)/);
    await screenshot(page, "landing-demo-limit");
    expect(await seriousViolations(page)).toEqual([]);
    expect(errors.filter((e) => !REFUSED.test(e))).toEqual([]);
    expect(cspViolations).toEqual([]);
  });

  it("copies the curl sample with its button", async () => {
    const id = "start-sample-curl-code";
    await context.grantPermissions(["clipboard-read", "clipboard-write"], {
      origin: h.stack.baseUrl,
    });
    const button = page.locator(`button[data-copy="${id}"]`);
    await button.focus();
    await page.keyboard.press("Enter");
    await page.locator(`#${id} + .copy-row .copy-status`, { hasText: "Copied" }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(await page.locator(`#${id}`).innerText());
    expect(copied).toContain(`"${h.stack.baseUrl}/v1/jobs?wait=true"`);
    expect(copied).toContain("Authorization: Bearer $STILLS_API_KEY");
    expect(copied).toContain(`${h.stack.baseUrl}/samples/intro.mp4`);
  });
});
