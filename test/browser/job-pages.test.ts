// The jobs pages in Debian's Chromium against the real stack (issue 36, decisions 0240–0242):
// - a running job's page shows its progress and turns completed, with its frames, without a
//   reload (the page's own script polls; the test only watches);
// - the gallery shows thumbnails at most 320 px wide and never requests an original;
// - the lightbox works from the keyboard (Enter, ←/→, Esc) and says time and pts;
// - "Download all" gives a ZIP whose entries are the job's frames, byte for byte;
// - the list's options label, status tabs, search by link and id, and pages;
// - "Copy as curl" is a curl that creates the same job, "View JSON" is GET /v1/jobs/{id}'s body.
// axe finds nothing serious in light and dark at 1280 and 390 px; screenshots of the list, a
// running job and the lightbox at both widths.
import { execFile } from "node:child_process";
import { once } from "node:events";
import { createReadStream } from "node:fs";
import { mkdtemp, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { unzipSync } from "fflate";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "../e2e/support/harness.ts";
import type { Route } from "../sources/support/servers.ts";
import { makeTestVideo } from "../support/videos.ts";
import {
  checkEveryWidth,
  collectPageErrors,
  DESKTOP,
  expectAccessible,
  launchBrowser,
  PHONE,
  screenshot,
} from "./support/browser.ts";
import { signIn } from "./support/sign-in.ts";

const run = promisify(execFile);

let h: Harness;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let account: { key: string; email: string; auth: Record<string, string> };
let clipUrl: string;
/** The completed job the gallery tests look at. */
let done: { id: string; frames: { index: number; url: string; timestamp: number; pts: number }[] };

/**
 * Serves a file (with ranges, as the relay reads) at about `seconds` for the whole file, so a
 * job on it takes a few seconds whatever else the machine does.
 */
/**
 * While set, slowFile holds back the middle of the file (from 40 % to 90 % of it; the start and
 * the index at the end still flow), so a job on it probes, makes its first frames and then
 * waits: the page can be photographed while the job runs.
 */
let held: Promise<void> | null = null;

function slowFile(file: string, seconds: number): Route {
  return async (request, response) => {
    const { size } = await stat(file);
    const bytesPerSecond = size / seconds;
    const match = /^bytes=(\d*)-(\d*)$/.exec(request.headers.range ?? "");
    let start = 0;
    let end = size - 1;
    if (match) {
      start = match[1] === "" ? size - Number(match[2]) : Number(match[1]);
      end = match[1] !== "" && match[2] !== "" ? Math.min(Number(match[2]), size - 1) : size - 1;
      response.writeHead(206, {
        "content-type": "video/mp4",
        "content-length": end - start + 1,
        "content-range": `bytes ${start}-${end}/${size}`,
        "accept-ranges": "bytes",
      });
    } else {
      response.writeHead(200, { "content-type": "video/mp4", "content-length": size });
    }
    if (request.method === "HEAD") return void response.end();
    let offset = start;
    for await (const chunk of createReadStream(file, { start, end, highWaterMark: 32 * 1024 })) {
      if (response.destroyed) return;
      if (held && offset >= size * 0.4 && offset < size * 0.9) await held;
      offset += chunk.length;
      if (!response.write(chunk)) await once(response, "drain");
      await new Promise((r) => setTimeout(r, (chunk.length / bytesPerSecond) * 1000));
    }
    response.end();
  };
}

beforeAll(async () => {
  h = await startHarness();
  account = await h.newKey("starter");
  clipUrl = h.serveVideo(
    "/media/gallery.mp4",
    await makeTestVideo({ width: 1280, height: 720, durationSeconds: 8 }),
  );
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: DESKTOP, locale: "en-US" });
  page = await context.newPage();
  errors = collectPageErrors(page);
  await signIn(page, h, account.email);
  const job = await call(h.stack, "POST", "/jobs?wait=true", {
    body: { url: clipUrl, count: 5, format: "png", resolution: 720 },
    headers: account.auth,
  });
  expect(job.body.status).toBe("completed");
  done = job.body;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/**
 * The running job's page at desktop and phone widths, light and dark, and axe on it once: quick,
 * since the origin holds the job still only within the source's grace.
 */
async function photographRunning() {
  await expectAccessible(page, "job-running");
  for (const [width, size] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const) {
    await page.setViewportSize(size);
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await screenshot(page, `job-running-${width}-${scheme}`);
    }
  }
  await page.setViewportSize(DESKTOP);
  await page.emulateMedia({ colorScheme: "light" });
}

describe("the jobs pages", { timeout: 180_000 }, () => {
  it("follows a running job: progress while it runs, then completed with its frames, no reload", async () => {
    // The origin paces the file over 4 s and holds its middle until the page has been seen
    // running, so a small video is enough to watch (48 full-HD PNGs cost the extractor and the
    // page's thumbnails tens of CPU-seconds for nothing the test checks; decision 0296).
    // Grain makes its middle many blocks the job must wait for, as in a real upload.
    const file = await makeTestVideo({
      width: 640,
      height: 360,
      durationSeconds: 12,
      grain: true,
    });
    const slowUrl = `${h.videos.origin}/media/slow.mp4`;
    h.videos.route("/media/slow.mp4", slowFile(file, 4));
    let release = () => {};
    held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Never longer than the source's 10 s grace of reading, whatever happens below.
    const letGo = setTimeout(() => release(), 8_000);
    const created = await call(h.stack, "POST", "/jobs", {
      body: { url: slowUrl, every: 0.25, format: "png" },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    // The list, in a tab of its own, follows the same job.
    const list = await context.newPage();
    await list.goto(`${h.stack.baseUrl}/dashboard/jobs`);
    const row = list.locator(`tr[data-job-id="${id}"]`);
    expect(["queued", "processing"]).toContain(await row.getAttribute("data-status"));
    expect(await row.locator("[data-progress] progress").count()).toBe(1);
    await list.evaluate(() => {
      (window as unknown as { stillHere: boolean }).stillHere = true;
    });

    await page.goto(`${h.stack.baseUrl}/dashboard/jobs/${id}`);
    const part = page.locator(`[data-live-job="${id}"]`);
    expect(["queued", "processing"]).toContain(await part.getAttribute("data-status"));
    // A marker the page would lose if it were loaded again.
    await page.evaluate(() => {
      (window as unknown as { stillHere: boolean }).stillHere = true;
    });
    expect(await page.locator("[data-progress] progress").count()).toBe(1);

    // While it runs: what the page's bar says, beside what the API says at the same moments.
    const seen: { label: string; value: number | null; max: number | null }[] = [];
    const api: ({ frames_done: number; frames_total: number | null } | null)[] = [];
    let shot = false;
    for (const until = Date.now() + 90_000; Date.now() < until; ) {
      const status = await part.getAttribute("data-status").catch(() => null);
      if (status === null || status === "completed") break;
      const bar = await page
        .locator("[data-progress]")
        .evaluate((holder) => {
          const progress = holder.querySelector("progress") as HTMLProgressElement;
          return {
            label: holder.querySelector(".job-progress-label")?.textContent ?? "",
            value: progress.hasAttribute("value") ? progress.value : null,
            max: progress.hasAttribute("value") ? progress.max : null,
          };
        })
        .catch(() => null);
      if (bar) seen.push(bar);
      api.push(
        (await call(h.stack, "GET", `/jobs/${id}`, { headers: account.auth })).body.progress,
      );
      // Photographed once the bar shows numbers (axe and screenshots take a few seconds).
      // The origin holds the middle of the file until then, so the pictures show the job
      // running, not already completed.
      if (!shot && bar && bar.max !== null) {
        shot = true;
        try {
          await photographRunning();
          expect(await part.getAttribute("data-status")).toBe("processing");
        } finally {
          clearTimeout(letGo);
          held = null;
          release();
        }
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    await page.waitForSelector(`[data-live-job="${id}"][data-status="completed"]`, {
      timeout: 60_000,
    });
    // The page moved by itself: its bar went through the stages the API went through, and once
    // the API knew the total, it said frames done of that total.
    const labels = seen.map((b) => b.label);
    expect(new Set(labels).size, JSON.stringify(labels)).toBeGreaterThan(1);
    const total = api.find((p) => p?.frames_total)?.frames_total;
    expect(total).toBe(48);
    const counted = seen.filter((b) => b.max !== null);
    expect(counted.length, JSON.stringify(labels)).toBeGreaterThan(0);
    for (const b of counted) {
      expect(b.max).toBe(total);
      expect(b.label).toMatch(new RegExp(`^\\w[\\w ]* · ${b.value} of ${total} frames$`));
    }

    expect(
      await page.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere),
    ).toBe(true);
    const final = await call(h.stack, "GET", `/jobs/${id}`, { headers: account.auth });
    expect(final.body.status).toBe("completed");
    await page.waitForFunction(
      (n) => document.querySelectorAll(".frame-grid img").length === n,
      final.body.frames.length,
    );
    expect(final.body.frames.length).toBe(48);
    expect(await page.locator(".status-completed").count()).toBe(1);
    expect(await page.locator("[data-progress]").count()).toBe(0);

    await list.waitForSelector(`tr[data-job-id="${id}"][data-status="completed"]`, {
      timeout: 30_000,
    });
    expect(
      await list.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere),
    ).toBe(true);
    expect(await row.locator(".status-completed").count()).toBe(1);
    expect(await row.locator("td.num").first().innerText()).toBe("48");
    expect(await row.locator("img.thumb").getAttribute("src")).toMatch(/thumb-0001\.jpg/);
    await list.close();
  });

  it("shows thumbnails at most 320 px wide and never requests an original", async () => {
    const requested: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs/${done.id}`);
    await page.waitForFunction(() =>
      [...document.querySelectorAll(".frame-grid img")].every(
        (img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth > 0,
      ),
    );
    const sizes = await page
      .locator(".frame-grid img")
      .evaluateAll((images) => images.map((img) => (img as HTMLImageElement).naturalWidth));
    expect(sizes).toHaveLength(done.frames.length);
    for (const width of sizes) {
      expect(width).toBeGreaterThan(0);
      expect(width).toBeLessThanOrEqual(320);
    }
    expect(sizes[0]).toBe(320);
    // This job's files only: the previous test's page may still be loading its own thumbnails
    // as this one opens.
    const files = requested.filter((url) => {
      const path = new URL(url).pathname;
      return path.startsWith("/files/") && path.includes(done.id);
    });
    const names = files.map((url) => new URL(url).pathname.split("/").at(-1));
    expect(names.filter((name) => name?.startsWith("thumb-"))).toHaveLength(done.frames.length);
    const originals = new Set(done.frames.map((f) => new URL(f.url).pathname));
    expect(files.filter((url) => originals.has(new URL(url).pathname))).toEqual([]);
    await checkEveryWidth(page, "job-gallery");
    // The list shows the first frame's thumbnail, not its original.
    requested.length = 0;
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs`);
    const thumb = page.locator(`a[href="/dashboard/jobs/${done.id}"] img.thumb`);
    await thumb.waitFor();
    expect(await thumb.evaluate((img: HTMLImageElement) => img.src)).toMatch(/thumb-0001\.jpg/);
    expect(requested.filter((url) => originals.has(new URL(url).pathname))).toEqual([]);
    page.removeAllListeners("request");
  });

  it("opens frames in a lightbox from the keyboard: Enter, ← and →, Esc", async () => {
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs/${done.id}`);
    const links = page.locator(".frame-grid a[data-lightbox]");
    await links.first().focus();
    await page.keyboard.press("Enter");
    const dialog = page.locator("dialog#lightbox");
    await expect.poll(() => dialog.evaluate((d: HTMLDialogElement) => d.open)).toBe(true);
    const title = page.locator("#lightbox-title");
    const [first, second] = done.frames;
    expect(await title.innerText()).toBe(
      `Frame 1 · ${first.timestamp} s · pts ${first.pts} (1 of ${done.frames.length})`,
    );
    const image = page.locator(".lightbox-image");
    expect(await image.getAttribute("src")).toBe(first.url);
    await page.waitForFunction(
      () => (document.querySelector(".lightbox-image") as HTMLImageElement).naturalWidth === 1280,
    );
    await checkEveryWidth(page, "lightbox", { fullPage: false });

    // Each key's effect is waited for before the next key: a press that lands while the page
    // is still busy after the resizes above must not be read before it is applied.
    await page.keyboard.press("ArrowRight");
    await expect
      .poll(() => title.innerText())
      .toContain(`Frame 2 · ${second.timestamp} s · pts ${second.pts}`);
    expect(await image.getAttribute("src")).toBe(second.url);
    await page.keyboard.press("ArrowLeft");
    await expect.poll(() => title.innerText()).toContain("Frame 1 ·");
    await page.keyboard.press("ArrowLeft");
    await expect.poll(() => title.innerText()).toContain(`Frame ${done.frames.length} ·`);
    await page.keyboard.press("Escape");
    await expect.poll(() => dialog.evaluate((d: HTMLDialogElement) => d.open)).toBe(false);
    // Focus goes back to the grid, on the frame the viewer showed last. The dialog's own close
    // first gives focus back to the frame that opened it (Frame 1), and the page's "close"
    // handler, a task later, moves it on: polled, since `open` turns false between the two.
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute("data-title")))
      .toMatch(new RegExp(`^Frame ${done.frames.length} ·`));
  });

  it("the lightbox says the caption on screen at each frame", async () => {
    const dir = await mkdtemp(join(tmpdir(), "stills-browser-captions-"));
    const srt = join(dir, "cues.srt");
    await writeFile(
      srt,
      "1\n00:00:00,500 --> 00:00:01,500\nGood morning\n\n2\n00:00:01,500 --> 00:00:03,000\nFish & chips\n",
    );
    const subtitled = join(dir, "subtitled.mp4");
    await run("ffmpeg", [
      ...["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10:duration=4"],
      ...["-i", srt, "-map", "0:v", "-map", "1:s", "-c:v", "libx264", "-pix_fmt", "yuv420p"],
      ...["-c:s", "mov_text", subtitled],
    ]);
    const job = await call(h.stack, "POST", "/jobs?wait=true", {
      body: {
        url: h.serveVideo("/media/subtitled.mp4", subtitled),
        timestamps: [1, 2],
        captions: true,
      },
      headers: account.auth,
    });
    expect(job.body.status).toBe("completed");
    expect(job.body.frames.map((f: { caption?: string }) => f.caption)).toEqual([
      "Good morning",
      "Fish & chips",
    ]);
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs/${job.body.id}`);
    await page.locator(".frame-grid a[data-lightbox]").first().click();
    const caption = page.locator(".lightbox-caption");
    expect(await caption.innerText()).toBe("Good morning");
    await page.keyboard.press("ArrowRight");
    expect(await caption.innerText()).toBe("Fish & chips");
    expect(await page.locator("#lightbox-title").innerText()).toBe(
      `Frame 2 · 2 s · pts ${job.body.frames[1].pts} (2 of 2)`,
    );
    await page.keyboard.press("Escape");
  });

  it("downloads all frames as a ZIP whose entries are the frames, byte for byte", async () => {
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs/${done.id}`);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: /Download all/ }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`stills-${done.id}-frames.zip`);
    const zip = unzipSync(new Uint8Array(await readFile(await download.path())));
    const names = Object.keys(zip);
    expect(names).toEqual(done.frames.map((f) => `frame-${String(f.index).padStart(4, "0")}.png`));
    for (const frame of done.frames) {
      const original = new Uint8Array(await (await fetch(frame.url)).arrayBuffer());
      const entry = zip[`frame-${String(frame.index).padStart(4, "0")}.png`];
      expect(entry.length).toBe(original.length);
      expect(Buffer.compare(Buffer.from(entry), Buffer.from(original))).toBe(0);
    }
  });

  it("shows what was asked: a curl that makes the same job, and the API's own JSON", async () => {
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs/${done.id}`);
    const facts = await page.locator("dl.facts").first().innerText();
    expect(facts).toMatch(/Asked for\s+count 5 · png · 720p/);
    const curl = await page.locator("#job-curl").textContent();
    expect(curl).toContain("Authorization: Bearer $STILLS_API_KEY");
    const { stdout } = await run("bash", ["-c", curl ?? ""], {
      env: { ...process.env, STILLS_API_KEY: account.key },
    });
    const again = JSON.parse(stdout);
    expect(again.object).toBe("job");
    expect(again.id).not.toBe(done.id);
    expect(again.url).toBe(clipUrl);
    const api = await call(h.stack, "GET", `/jobs/${done.id}`, { headers: account.auth });
    expect(again.options).toEqual(api.body.options);

    const json = JSON.parse((await page.locator("#job-json").textContent()) ?? "");
    expect(json).toEqual(api.body);
  });

  it("lists jobs with their options, status tabs, search by link and id, and pages", async () => {
    const other = await h.newKey("starter");
    // A person of their own, in a browser of their own.
    const own = await browser.newContext({ viewport: DESKTOP, locale: "en-US" });
    page = await own.newPage();
    const ownErrors = collectPageErrors(page);
    await signIn(page, h, other.email);
    const video = h.serveVideo(
      "/media/list-sample.mp4",
      await makeTestVideo({ width: 640, height: 360, durationSeconds: 4 }),
    );
    const made: string[] = [];
    for (const body of [
      { url: video, count: 2 },
      { url: video, mode: "scenes", storyboard: true, format: "webp" },
      { url: `${video}?take=2`, every: 2, output: "zip", resolution: 360 },
    ]) {
      const job = await call(h.stack, "POST", "/jobs?wait=true", {
        body,
        headers: other.auth,
      });
      expect(job.body.status).toBe("completed");
      made.push(job.body.id);
    }
    const failed = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: `${h.videos.origin}/media/not-there.mp4`, count: 2 },
      headers: other.auth,
    });
    expect(failed.body.status).toBe("failed");
    // Long values everywhere: they wrap, and no page grows wider than a phone.
    const longName = `${"a-very-long-file-name-".repeat(10)}.mp4?${"utm_campaign=x&".repeat(8)}`;
    const long = await call(h.stack, "POST", "/jobs?wait=true", {
      body: {
        url: `${h.videos.origin}/media/${longName}`,
        count: 2,
        start: 1,
        end: 3.5,
        format: "webp",
        resolution: 480,
        max_width: 320,
        output: "both",
        skip: ["black", "blurry"],
        storyboard: true,
        captions: true,
        captions_language: "pt-BR",
        webhook_url: `${h.videos.origin}/hooks/${"receiver-".repeat(20)}`,
      },
      headers: other.auth,
    });
    expect(long.body.status).toBe("failed");

    await page.goto(`${h.stack.baseUrl}/dashboard/jobs`);
    const label = (id: string) => page.locator(`tr[data-job-id="${id}"] .job-options`).innerText();
    expect(await label(made[0])).toBe("count 2 · jpg · 1080p");
    expect(await label(made[1])).toBe("scenes · webp · 1080p · storyboard");
    expect(await label(made[2])).toBe("every 2 s · jpg · 360p · ZIP");
    // A job that asked for the ZIP alone: its gallery shows thumbnails (its frames are only in
    // the ZIP), and Download all gives its own ZIP.
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs/${made[2]}`);
    const zipOnly = await call(h.stack, "GET", `/jobs/${made[2]}`, { headers: other.auth });
    expect(zipOnly.body.frames.every((f: { url: string | null }) => f.url === null)).toBe(true);
    const tiles = page.locator(".frame-grid img");
    expect(await tiles.count()).toBe(zipOnly.body.frames.length);
    expect(await tiles.first().getAttribute("src")).toMatch(/thumb-0001\.jpg/);
    const [zipDownload] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: /Download all/ }).click(),
    ]);
    const ownZip = new Uint8Array(await (await fetch(zipOnly.body.zip_url)).arrayBuffer());
    const got = new Uint8Array(await readFile(await zipDownload.path()));
    expect(Buffer.compare(Buffer.from(got), Buffer.from(ownZip))).toBe(0);
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs`);

    const tabs = await page.locator(".job-tabs a").allInnerTexts();
    expect(tabs.map((t) => t.replace(/\s+/g, " ").trim())).toEqual([
      "All 5",
      "Running 0",
      "Completed 3",
      "Failed 2",
      "Expired 0",
    ]);
    await checkEveryWidth(page, "jobs-list");

    expect(await label(long.body.id)).toBe(
      "count 2 · 0:01–0:03.5 · webp · 480p · ≤ 320 px wide · URLs + ZIP · skip black, blurry · storyboard · captions (pt-BR) · webhook",
    );
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs/${long.body.id}`);
    await checkEveryWidth(page, "job-long-values");
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs`);

    await page.getByRole("link", { name: /^Failed/ }).click();
    await page.waitForURL(/status=failed/);
    expect(await page.locator("tbody tr").count()).toBe(2);
    expect(await page.locator(`tr[data-job-id="${failed.body.id}"]`).count()).toBe(1);

    // Search by part of the link, then by the beginning of an id.
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs`);
    await page.locator("#job-search").fill("take=2");
    await page.locator("#job-search").press("Enter");
    await page.waitForURL(/q=take%3D2/);
    expect(await page.locator("tbody tr").count()).toBe(1);
    expect(await page.locator(`tr[data-job-id="${made[2]}"]`).count()).toBe(1);
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs?q=${made[1].slice(0, 8)}`);
    expect(await page.locator("tbody tr").count()).toBe(1);
    expect(await page.locator(`tr[data-job-id="${made[1]}"]`).count()).toBe(1);
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs?q=${encodeURIComponent("%_nothing")}`);
    expect(await page.locator("main").innerText()).toContain("No jobs match");
    expect(await page.locator("tbody tr").count()).toBe(0);

    // Pages: 21 older failed jobs (rows written straight into D1, as the list reads them)
    // make 25 in all, two pages of 20; the tabs and search stay in the pager's links.
    const [{ id: accountId }] = await h.query("SELECT id FROM accounts WHERE email = ?", [
      other.email,
    ]);
    const options = JSON.stringify({
      mode: "count",
      count: 1,
      format: "jpg",
      resolution: 1080,
      output: "urls",
    });
    const rows = Array.from({ length: 21 }, (_, i) => {
      const at = new Date(Date.now() - (i + 10) * 60_000).toISOString();
      return `('${crypto.randomUUID()}', '${accountId}', 'failed', '${video}?old=${i}', '${video}?old=${i}', 'direct', '${options}', '${at}')`;
    });
    await h.execute(
      `INSERT INTO jobs (id, account_id, status, url, source_url, platform, options, created_at) VALUES ${rows.join(", ")}`,
    );
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs?status=failed`);
    expect(await page.locator("tbody tr").count()).toBe(20);
    expect(await page.locator(".pager").innerText()).toContain("Page 1 of 2");
    await page.locator(".pager").getByRole("link", { name: /Older/ }).click();
    await page.waitForURL(/status=failed.*page=2|page=2.*status=failed/);
    expect(await page.locator("tbody tr").count()).toBe(3);
    expect(await page.locator("main").innerText()).toContain("21–23 of 23 jobs");
    expect(ownErrors).toEqual([]);
    expect(errors).toEqual([]);
    await own.close();
  });
});
