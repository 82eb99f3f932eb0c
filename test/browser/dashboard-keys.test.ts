// Keys without surprises (issue 34), in Debian's Chromium against the real stack: creating a key
// is POST, redirect, GET; the new key is shown once, with samples (curl, Node, Python) carrying
// it that run as they are; reloading the page creates no key and shows none. Also a failed
// job's page (its error whole, said once, no retention line) and times in the visitor's zone.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, download, type Harness, startHarness } from "../e2e/support/harness.ts";
import {
  collectPageErrors,
  DESKTOP,
  expectAccessible,
  launchBrowser,
  PHONE,
  screenshot,
} from "./support/browser.ts";
import { signIn } from "./support/sign-in.ts";

const run = promisify(execFile);
const KEY_PATTERN = /^stills_live_[0-9A-Za-z]{38}$/;
/** The visitor's zone: nine hours from UTC, so a time shown in it cannot pass for UTC. */
const ZONE = "Asia/Tokyo";

let h: Harness;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let scratch: string;
const email = `keys-${crypto.randomUUID().slice(0, 8)}@example.com`;
let key = "";
const samples: Record<string, string> = {};

beforeAll(async () => {
  h = await startHarness();
  scratch = mkdtempSync(join(tmpdir(), "stills-samples-"));
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: DESKTOP, locale: "en-US", timezoneId: ZONE });
  page = await context.newPage();
  errors = collectPageErrors(page);
  page.on("dialog", (dialog) => void dialog.accept());
  await signIn(page, h, email);
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

async function keysOfAccount(): Promise<number> {
  const [row] = await h.query(
    `SELECT count(*) AS n FROM api_keys
     WHERE account_id = (SELECT id FROM accounts WHERE email = ?)`,
    [email],
  );
  return Number(row.n);
}

async function waitingShowings(): Promise<number> {
  const [row] = await h.query(
    `SELECT count(*) AS n FROM key_reveals
     WHERE account_id = (SELECT id FROM accounts WHERE email = ?)`,
    [email],
  );
  return Number(row.n);
}

describe("a new key", () => {
  it("is created by POST, redirect, GET and shown once, with samples carrying it", async () => {
    await page.goto(`${h.stack.baseUrl}/dashboard/keys`);
    expect(await keysOfAccount()).toBe(0);
    const posts: { status: number; location: string | null }[] = [];
    page.on("response", (response) => {
      if (response.request().method() === "POST" && response.url().endsWith("/dashboard/keys")) {
        posts.push({ status: response.status(), location: response.headers().location ?? null });
      }
    });
    await page.locator("#key-name").fill("Laptop");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.waitForURL(/\/dashboard\/keys\?new=[A-Za-z0-9_-]{43}$/);
    expect(posts).toEqual([
      {
        status: 303,
        location: expect.stringMatching(/^\/dashboard\/keys\?new=[A-Za-z0-9_-]{43}$/),
      },
    ]);
    key = await page.locator("#new-key-value").inputValue();
    expect(key).toMatch(KEY_PATTERN);
    expect(await keysOfAccount()).toBe(1);
    // Taken from the one-time store as it was shown.
    expect(await waitingShowings()).toBe(0);

    // Three tabs, curl first; each block carries the key and the service's own sample video.
    const tabs = page.getByRole("tab");
    expect(await tabs.allInnerTexts()).toEqual(["curl", "Node", "Python"]);
    expect(await tabs.first().getAttribute("aria-selected")).toBe("true");
    for (const language of ["curl", "node", "python"]) {
      const code = await page.locator(`#new-key-sample-${language}-code`).textContent();
      samples[language] = code ?? "";
      expect(samples[language]).toContain(key);
      expect(samples[language]).toContain(`${h.stack.baseUrl}/samples/intro.mp4`);
      expect(samples[language]).toContain("STILLS_API_KEY");
    }
    expect(await page.locator("#new-key-sample-curl").isVisible()).toBe(true);
    expect(await page.locator("#new-key-sample-python").isVisible()).toBe(false);
    await page.getByRole("tab", { name: "Python" }).click();
    expect(await page.locator("#new-key-sample-python").isVisible()).toBe(true);
    expect(await page.locator("#new-key-sample-curl").isVisible()).toBe(false);
    // The arrow keys move between tabs (the tabs pattern), and each block has its copy button.
    await page.getByRole("tab", { name: "Python" }).press("ArrowLeft");
    expect(await page.locator("#new-key-sample-node").isVisible()).toBe(true);
    const copy = page.getByRole("button", { name: "Copy the node sample with your key" });
    expect(await copy.isVisible()).toBe(true);
    await page.getByRole("tab", { name: "curl" }).click();
    await screenshot(page, "keys-new-desktop");
    await expectAccessible(page, "new key");
  });

  it("a reload of that page creates no key and shows none", async () => {
    const listed = await page.locator("tbody tr").count();
    await page.reload();
    await page.waitForSelector("main");
    expect(await page.locator("#new-key-value").count()).toBe(0);
    expect(await page.content()).not.toContain(key);
    expect(await page.locator("main").innerText()).toContain(
      "A new key is shown once, right after it is created, and never again.",
    );
    expect(await page.locator("tbody tr").count()).toBe(listed);
    expect(await keysOfAccount()).toBe(1);
    // Back and forward again: still nothing new, nothing shown.
    await page.goBack();
    await page.goForward();
    expect(await page.content()).not.toContain(key);
    expect(await keysOfAccount()).toBe(1);
    await screenshot(page, "keys-reloaded-desktop");
    await expectAccessible(page, "reloaded");
  });

  it("its samples run as they are: curl, Node with fetch and Python's standard library", async () => {
    const sample = await fetch(`${h.stack.baseUrl}/samples/intro.mp4`, { method: "HEAD" });
    expect(sample.status, "the stack serves its sample video").toBe(200);
    writeFileSync(join(scratch, "sample.mjs"), samples.node);
    writeFileSync(join(scratch, "sample.py"), samples.python);
    const outputs = {
      curl: await run("bash", ["-c", samples.curl], { timeout: 90_000 }),
      node: await run(process.execPath, [join(scratch, "sample.mjs")], { timeout: 90_000 }),
      python: await run("/usr/bin/python3", [join(scratch, "sample.py")], { timeout: 90_000 }),
    };
    for (const [language, output] of Object.entries(outputs)) {
      const job = JSON.parse(output.stdout);
      expect(job, language).toMatchObject({ object: "job", status: "completed", frames_count: 6 });
      expect(job.frames, language).toHaveLength(6);
      const first = await download(job.frames[0].url);
      expect(first.status, language).toBe(200);
      expect([...first.bytes.slice(0, 3)], `${language}: a JPEG`).toEqual([0xff, 0xd8, 0xff]);
    }
  });
});

describe("a failed job's page", () => {
  it("names the error, the developer message and the request id once, with what to try next", async () => {
    // A direct link that answers 404: the job fails PrivateContent, with a message saying so.
    const longName = `${"a-very-long-file-name-that-never-ends-".repeat(4)}talk.mp4`;
    const created = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: `${h.videos.origin}/gone/${longName}`, count: 3 },
      headers: { authorization: `Bearer ${key}` },
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe("failed");
    const requestId = created.headers.get("x-request-id");
    expect(requestId).toBeTruthy();
    const error = created.body.error as { name: string; message: string; userMessage: string };

    await page.goto(`${h.stack.baseUrl}/dashboard/jobs/${created.body.id}`);
    const main = await page.locator("main").innerText();
    const failure = await page.locator(".job-failure").innerText();
    expect(failure).toContain(error.name);
    expect(failure).toContain(error.userMessage);
    expect(failure).toContain(error.message);
    expect(failure).toContain(String(requestId));
    expect(failure).toContain("What to try next");
    // Each message once on the whole page, and no promise of files the job never had.
    const times = (text: string) => main.split(text).length - 1;
    expect(times(error.userMessage)).toBe(1);
    expect(times(error.message)).toBe(1);
    expect(main).not.toContain("Files until");
    expect(await page.getByRole("heading", { name: "Frames" }).count()).toBe(0);
    expect(await page.locator("dl.facts dt").allInnerTexts()).not.toContain("Frames");
    const guide = page.getByRole("link", { name: `About ${error.name} in the errors guide` });
    expect(await guide.getAttribute("href")).toBe(`/docs/errors#${error.name}`);
    await screenshot(page, "job-failed-desktop");
    await expectAccessible(page, "failed job");

    const phone = await browser.newContext({
      viewport: PHONE,
      locale: "en-US",
      timezoneId: ZONE,
      storageState: await context.storageState(),
      isMobile: true,
      hasTouch: true,
    });
    const small = await phone.newPage();
    await small.goto(page.url());
    const widths = await small.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      screen: window.innerWidth,
    }));
    expect(widths.page).toBeLessThanOrEqual(widths.screen);
    await screenshot(small, "job-failed-phone");
    await phone.close();
  });
});

describe("times", () => {
  it("are shown in the visitor's zone, with UTC on hover", async () => {
    await page.goto(`${h.stack.baseUrl}/dashboard/keys`);
    const time = page.locator("tbody time").first();
    const iso = String(await time.getAttribute("datetime"));
    const moment = new Date(iso);
    const inZone = new Intl.DateTimeFormat("en-US", {
      timeZone: ZONE,
      day: "numeric",
      month: "short",
      year: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      timeZoneName: "short",
    }).format(moment);
    expect(await time.innerText()).toBe(inZone);
    const utc = new Intl.DateTimeFormat("en-GB", {
      timeZone: "UTC",
      day: "numeric",
      month: "short",
      year: "numeric",
      hour: "2-digit",
      minute: "2-digit",
    }).format(moment);
    expect(await time.getAttribute("title")).toBe(`${utc} UTC`);
    expect(errors).toEqual([]);
  });
});
