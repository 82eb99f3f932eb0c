// A slides job and a token-budget job on their pages in Debian's Chromium against the real
// stack (issue 38): the Slides table holds each slide's time on screen and its repeat as the
// API gives them, the Token budget section and "What was asked" hold the budget's choice and
// its measured cost as job.budget gives them; axe finds nothing serious in light and dark at
// desktop and phone widths, nothing is wider than a phone, and no CSP violation.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "../e2e/support/harness.ts";
import { SHOWINGS, slideDeck } from "../support/slide-deck.ts";
import {
  checkEveryWidth,
  collectCspViolations,
  collectPageErrors,
  DESKTOP,
  launchBrowser,
} from "./support/browser.ts";
import { signIn } from "./support/sign-in.ts";

interface SlideFrame {
  index: number;
  slide: { start: number; end: number; repeat_of: number | null };
}

let h: Harness;
let browser: Browser;
let page: Page;
let errors: string[];
let csp: string[];
let slidesJob: { id: string; frames: SlideFrame[] };
let budgetJob: {
  id: string;
  budget: {
    tokens: number;
    model: string;
    tokens_estimated: number;
    per_frame: number;
    frames: number;
    width: number;
    height: number;
  };
};

const seconds = (value: number) => `${Number(value.toFixed(3))} s`;
const grouped = (value: number) => value.toLocaleString("en-US");

beforeAll(async () => {
  h = await startHarness();
  const account = await h.newKey("starter");
  const deckUrl = h.serveVideo("/media/slides-page.mp4", await slideDeck());
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: DESKTOP, locale: "en-US" });
  page = await context.newPage();
  errors = collectPageErrors(page);
  csp = await collectCspViolations(page);
  await signIn(page, h, account.email);
  const [slides, budget] = await Promise.all([
    call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: deckUrl, mode: "slides" },
      headers: account.auth,
    }),
    call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: deckUrl, budget: { tokens: 3000, model: "claude" }, end: 12 },
      headers: account.auth,
    }),
  ]);
  expect(slides.body.status, JSON.stringify(slides.body.error)).toBe("completed");
  expect(budget.body.status, JSON.stringify(budget.body.error)).toBe("completed");
  slidesJob = slides.body;
  budgetJob = budget.body;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe("the pages of slides and budget jobs", { timeout: 120_000 }, () => {
  it("lists every slide with its time on screen and its repeat, as the API gives them", async () => {
    expect(slidesJob.frames).toHaveLength(SHOWINGS.length);
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs/${slidesJob.id}`);
    const section = page.locator("section[aria-labelledby='slides-title']");
    await expect.poll(() => section.count()).toBe(1);
    const rows = section.locator("tbody tr");
    expect(await rows.count()).toBe(SHOWINGS.length);
    const spans = await section.locator("td[data-label='On screen']").allTextContents();
    expect(spans).toEqual(
      slidesJob.frames.map((f) => `${seconds(f.slide.start)} to ${seconds(f.slide.end)}`),
    );
    const again = await section.locator("td[data-label='Shown again']").allTextContents();
    expect(again).toEqual(
      slidesJob.frames.map((f) =>
        f.slide.repeat_of == null ? "first showing" : `repeats #${f.slide.repeat_of}`,
      ),
    );
    // The deck shows its first slide again as the fifth showing.
    expect(again.filter((text) => text.startsWith("repeats"))).toEqual(["repeats #1"]);
    expect(await page.locator("section[aria-labelledby='budget-title']").count()).toBe(0);
    await checkEveryWidth(page, "slides-job", { fullPage: true });
    expect(csp).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("shows what the budget chose and what the frames cost, as job.budget gives them", async () => {
    const { budget } = budgetJob;
    expect(budget.tokens_estimated).toBeLessThanOrEqual(budget.tokens);
    expect(budget.tokens_estimated).toBe(budget.per_frame * budget.frames);
    await page.goto(`${h.stack.baseUrl}/dashboard/jobs/${budgetJob.id}`);
    const section = page.locator("section[aria-labelledby='budget-title']");
    await expect.poll(() => section.count()).toBe(1);
    const facts = Object.fromEntries(
      await section
        .locator("dl > div")
        .evaluateAll((divs) =>
          divs.map((d) => [
            d.querySelector("dt")?.textContent ?? "",
            d.querySelector("dd")?.textContent ?? "",
          ]),
        ),
    );
    expect(facts).toEqual({
      Budget: `${grouped(budget.tokens)} tokens (claude)`,
      "Frames cost": `${grouped(budget.tokens_estimated)} tokens: ${budget.frames} × ${grouped(budget.per_frame)}`,
      "Frame size": `${budget.width} × ${budget.height} px`,
    });
    // The summary names the budget, not "count ?"; the notice names it as what narrowed the
    // frames, not the plan's 1920 px.
    const body = (await page.locator("main").textContent()) ?? "";
    expect(body).toContain("count to fit 3,000 tokens");
    expect(body).toContain(`to fit the token budget (${budget.width} px wide)`);
    expect(body).not.toContain("to fit a width of");
    const asked = page.locator("section[aria-labelledby='asked-title']");
    expect(await asked.textContent()).toContain(
      "3,000 tokens for claude (Stills picks the count and width)",
    );
    expect(await page.locator("section[aria-labelledby='slides-title']").count()).toBe(0);
    await checkEveryWidth(page, "budget-job", { fullPage: true });
    expect(csp).toEqual([]);
    expect(errors).toEqual([]);
  });
});
