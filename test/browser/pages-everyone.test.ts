// Pages on a phone and for everyone (issue 34), in Debian's Chromium against the real stack:
// the header on one line at 390 px (its links in a menu there) and at 1280 px, the dashboard's
// tabs on one scrolling row, a skip link, dark pages for prefers-color-scheme: dark, and axe
// clean in both schemes. Every page is photographed at both widths in both schemes, with empty
// states, a failed job and long values, under test/browser/screenshots/.
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
import { signIn } from "./support/sign-in.ts";

type Scheme = "light" | "dark";
const SCHEMES: Scheme[] = ["light", "dark"];

let h: Harness;
let browser: Browser;
let session: Awaited<ReturnType<BrowserContext["storageState"]>>;
const email = `everyone-${crypto.randomUUID().slice(0, 8)}@example.com`;
/** Pages as a new customer sees them first: empty states. */
const EMPTY_PAGES: [string, string][] = [
  ["/dashboard", "overview-empty"],
  ["/dashboard/jobs", "jobs-empty"],
  ["/dashboard/batches", "batches-empty"],
  ["/dashboard/keys", "keys-empty"],
];
/** Then with a key, a completed job on a long address and a failed one. */
const FULL_PAGES: [string, string][] = [];
const PUBLIC_PAGES: [string, string][] = [
  ["/", "landing"],
  ["/sign-in", "sign-in"],
];
/** Parts that are not ours to fix: the API reference's embedded UI (test/browser/docs.test.ts). */
const NOT_OURS = [".docs-reference"];

beforeAll(async () => {
  h = await startHarness();
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: DESKTOP, locale: "en-US" });
  const page = await context.newPage();
  await signIn(page, h, email);
  session = await context.storageState();
  await context.close();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function open(
  scheme: Scheme,
  viewport: typeof DESKTOP,
  signedIn: boolean,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const phone = viewport.width < 600;
  const context = await browser.newContext({
    viewport,
    locale: "en-US",
    colorScheme: scheme,
    ...(signedIn ? { storageState: session } : {}),
    ...(phone ? { isMobile: true, hasTouch: true } : {}),
  });
  const page = await context.newPage();
  return { context, page, errors: collectPageErrors(page) };
}

/**
 * The header's height and the vertical middle of each of its visible items (the brand, and the
 * links or the menu button): one line means every middle within a few pixels of the brand's.
 */
async function headerLine(page: Page) {
  return page.evaluate(() => {
    const header = document.querySelector(".site-header") as HTMLElement;
    const items = [
      ...header.querySelectorAll(".brand, .site-menu-button, .site-nav > li > *"),
    ].filter((el) => el.checkVisibility());
    const middles = items.map((el) => {
      const box = el.getBoundingClientRect();
      return { name: (el.textContent ?? "").trim(), middle: box.top + box.height / 2 };
    });
    return { height: header.getBoundingClientRect().height, middles };
  });
}

async function expectOneLineHeader(page: Page, name: string, phone: boolean) {
  const line = await headerLine(page);
  expect(line.height, `${name}: header height`).toBeLessThanOrEqual(72);
  const names = line.middles.map((m) => m.name);
  expect(names[0], name).toBe("Stills");
  if (phone) expect(names, `${name}: the links fold into the menu`).toEqual(["Stills", "Menu"]);
  else expect(names, `${name}: the links are inline`).toContain("API reference");
  const brand = line.middles[0].middle;
  for (const item of line.middles) {
    expect(
      Math.abs(item.middle - brand),
      `${name}: "${item.name}" on the brand's line`,
    ).toBeLessThan(6);
  }
}

async function expectFits(page: Page, name: string) {
  const widths = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    screen: window.innerWidth,
    // What sticks out, named for the failure message.
    wider: [...document.querySelectorAll("body *")]
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join(".")}#${el.id}`),
  }));
  expect(widths.page, `${name} fits the screen: ${widths.wider.join(", ")}`).toBeLessThanOrEqual(
    widths.screen,
  );
}

/** Every image has loaded, lazy ones too (scrolled to once), so screenshots show them. */
async function imagesLoaded(page: Page) {
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await page.waitForFunction(() =>
    [...document.images]
      .filter((img) => img.getAttribute("src"))
      .every((img) => img.complete && img.naturalWidth > 0),
  );
  await page.evaluate(() => window.scrollTo(0, 0));
}

/**
 * Each page loaded once per width, then checked and photographed in the light scheme and the
 * dark one (emulateMedia: our pages read the scheme in CSS only, with no transitions), rather
 * than loaded again in a context per scheme: the same checks and pictures for half the loads.
 */
async function visitAll(pages: [string, string][], signedIn: boolean) {
  for (const viewport of [DESKTOP, PHONE]) {
    const phone = viewport === PHONE;
    const { context, page, errors } = await open("light", viewport, signedIn);
    for (const [path, name] of pages) {
      await page.goto(`${h.stack.baseUrl}${path}`);
      await imagesLoaded(page);
      for (const scheme of SCHEMES) {
        await page.emulateMedia({ colorScheme: scheme });
        const label = `${name} (${scheme}, ${phone ? "phone" : "desktop"})`;
        const background = await page.evaluate(
          () => getComputedStyle(document.body).backgroundColor,
        );
        expect(background, label).toBe(
          scheme === "dark" ? "rgb(15, 18, 24)" : "rgb(255, 255, 255)",
        );
        await expectOneLineHeader(page, label, phone);
        await expectFits(page, label);
        await screenshot(page, `${name}-${phone ? "phone" : "desktop"}-${scheme}`);
        await expectAccessible(page, label, { exclude: NOT_OURS });
        // No console or page error so far, named by the page that would have raised it.
        expect(errors, label).toEqual([]);
      }
      await page.emulateMedia({ colorScheme: "light" });
    }
    await context.close();
  }
}

describe("pages for everyone", () => {
  it("public pages: one header line at 390 and 1280 px, light and dark, axe clean", async () => {
    await visitAll(PUBLIC_PAGES, false);
  });

  it("a new customer's dashboard: empty states with runnable samples, in both schemes", async () => {
    await visitAll(EMPTY_PAGES, true);
    const { context, page } = await open("light", DESKTOP, true);
    await page.goto(`${h.stack.baseUrl}/dashboard`);
    const empty = page.locator(".empty-state");
    expect(await empty.getByRole("tab").allInnerTexts()).toEqual(["curl", "Node", "Python"]);
    for (const language of ["curl", "node", "python"]) {
      const code = await page.locator(`#first-job-${language}-code`).textContent();
      expect(code).toContain(`${h.stack.baseUrl}/samples/intro.mp4`);
      expect(code).toContain("STILLS_API_KEY");
      expect(code).not.toContain("YOUR_API_KEY");
    }
    await context.close();
  });

  it("a dashboard with a key, a completed job on a long address and a failed one", async () => {
    const { context, page } = await open("light", DESKTOP, true);
    await page.goto(`${h.stack.baseUrl}/dashboard/keys`);
    const longName = `Production server for the ${"very ".repeat(12)}long project name`;
    await page.locator("#key-name").fill(longName.slice(0, 100));
    await page.getByRole("button", { name: "Create key" }).click();
    const key = await page.locator("#new-key-value").inputValue();
    await context.close();
    const auth = { authorization: `Bearer ${key}` };
    const video = await makeTestVideo({ width: 640, height: 360, durationSeconds: 4 });
    const longPath = `/media/${"quarterly-all-hands-recording-".repeat(5)}final-v2.mp4`;
    const done = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: h.serveVideo(longPath, video), count: 4 },
      headers: auth,
    });
    expect(done.body.status).toBe("completed");
    const failed = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: `${h.videos.origin}/missing/clip.mp4`, count: 3 },
      headers: auth,
    });
    expect(failed.body.status).toBe("failed");
    // A batch of both links: one item with its job's frames, one failed on the missing file.
    const made = await call(h.stack, "POST", "/batches", {
      body: { urls: [done.body.url, failed.body.url], count: 2 },
      headers: auth,
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    let batch = made.body;
    // Every 2 s: well inside the free plan's reads (a 429 is only a later look).
    for (let i = 0; i < 45 && batch.status !== "completed"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const read = await call(h.stack, "GET", `/batches/${batch.id}`, { headers: auth });
      if (read.status === 200) batch = read.body;
    }
    expect(batch.counts).toMatchObject({ total: 2, completed: 1, failed: 1 });
    FULL_PAGES.push(
      ["/dashboard", "overview"],
      ["/dashboard/jobs", "jobs"],
      ["/dashboard/keys", "keys"],
      [`/dashboard/jobs/${done.body.id}`, "job-completed"],
      [`/dashboard/jobs/${failed.body.id}`, "job-failed"],
      ["/dashboard/batches", "batches"],
      [`/dashboard/batches/${batch.id}`, "batch"],
      ["/dashboard/billing", "billing"],
      ["/dashboard/webhooks", "webhooks"],
    );
    await visitAll(FULL_PAGES, true);
    // Two jobs, a batch, then nine pages twice in two schemes each: more than the default.
  }, 300_000);

  it("on a phone the header's menu opens and closes, from a finger or the keyboard", async () => {
    const { context, page } = await open("light", PHONE, true);
    await page.goto(`${h.stack.baseUrl}/dashboard`);
    const docsLink = page.locator(".site-nav a[href='/docs']");
    expect(await docsLink.isVisible()).toBe(false);
    await page.locator(".site-menu-button").tap();
    expect(await docsLink.isVisible()).toBe(true);
    expect(await page.getByRole("button", { name: "Sign out" }).isVisible()).toBe(true);
    await screenshot(page, "menu-open-phone", { fullPage: false });
    await expectAccessible(page, "menu open", { exclude: NOT_OURS });
    await page.keyboard.press("Escape");
    expect(await docsLink.isVisible()).toBe(false);
    // The summary has the focus back: Enter opens it again.
    await page.keyboard.press("Enter");
    expect(await docsLink.isVisible()).toBe(true);
    // A tap anywhere else closes it (the open panel covers the top of the page).
    await page.mouse.click(200, 700);
    expect(await docsLink.isVisible()).toBe(false);
    await context.close();
  });

  it("on a phone the dashboard's tabs are one row that scrolls, the current tab in view", async () => {
    const { context, page } = await open("light", PHONE, true);
    for (const path of ["/dashboard", "/dashboard/webhooks"]) {
      await page.goto(`${h.stack.baseUrl}${path}`);
      const strip = await page.evaluate(() => {
        const list = document.querySelector(".dashboard-nav ul") as HTMLElement;
        const links = [...list.querySelectorAll("a")];
        const current = list.querySelector("[aria-current='page']") as HTMLElement;
        const box = list.getBoundingClientRect();
        const at = current.getBoundingClientRect();
        return {
          tops: [...new Set(links.map((a) => Math.round(a.getBoundingClientRect().top)))],
          height: box.height,
          linkHeight: links[0].getBoundingClientRect().height,
          scrolls: list.scrollWidth > list.clientWidth,
          currentInView: at.left >= box.left - 1 && at.right <= box.right + 1,
        };
      });
      expect(strip.tops, `${path}: one row`).toHaveLength(1);
      expect(strip.height).toBeLessThan(strip.linkHeight * 1.5);
      expect(strip.scrolls, `${path}: the row scrolls`).toBe(true);
      expect(strip.currentInView, `${path}: the current tab is in view`).toBe(true);
      await screenshot(page, `tabs-${path === "/dashboard" ? "first" : "last"}-phone`, {
        fullPage: false,
      });
    }
    await context.close();
  });

  it("/docs has the same header on one line, and its skip link lands on the reference", async () => {
    // The reference UI itself (its errors, layout and axe) is test/browser/docs.test.ts's.
    for (const viewport of [DESKTOP, PHONE]) {
      const { context, page } = await open("dark", viewport, false);
      await page.goto(`${h.stack.baseUrl}/docs`);
      await expectOneLineHeader(page, `docs (${viewport.width} px)`, viewport === PHONE);
      expect(await page.locator(".skip-link").getAttribute("href")).toBe("#reference-start");
      expect(await page.locator("#reference-start").count()).toBe(1);
      await screenshot(page, `docs-header-${viewport === PHONE ? "phone" : "desktop"}-dark`, {
        fullPage: false,
      });
      await context.close();
    }
  });

  it("the first Tab reaches a skip link that jumps past the header to the content", async () => {
    const { context, page } = await open("dark", DESKTOP, true);
    await page.goto(`${h.stack.baseUrl}/dashboard/keys`);
    await page.keyboard.press("Tab");
    const skip = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      const box = el.getBoundingClientRect();
      return {
        text: el.textContent,
        href: el.getAttribute("href"),
        top: box.top,
        shown: box.height,
      };
    });
    expect(skip).toMatchObject({ text: "Skip to content", href: "#main" });
    expect(skip.top).toBeGreaterThanOrEqual(0);
    expect(skip.shown).toBeGreaterThan(0);
    await screenshot(page, "skip-link-dark", { fullPage: false });
    await page.keyboard.press("Enter");
    // The jump lands after the key press returns: wait for it rather than read the URL at once.
    await expect.poll(() => new URL(page.url()).hash).toBe("#main");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => Boolean(document.activeElement?.closest("main")))).toBe(true);
    await context.close();
  });
});
