// Docs that run (issue 34), in Debian's Chromium against the real stack: /docs' "Test Request"
// for creating a job sends the document's first named example as it stands (not a body made of
// every field); a signed-in visitor who gives the page one of their keys gets that request
// accepted and a job made; the guides read well in light and dark, on a desktop and a phone.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
import { signIn } from "./support/sign-in.ts";

let h: Harness;
let browser: Browser;
let firstExample: Record<string, unknown>;

beforeAll(async () => {
  h = await startHarness();
  browser = await launchBrowser();
  const document = (await call(h.stack, "GET", "/openapi.json")).body;
  const examples = document.paths["/jobs"].post.requestBody.content["application/json"].examples;
  firstExample = Object.values(examples as Record<string, { value: Record<string, unknown> }>)[0]
    .value;
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/** Opens "Test Request" of POST /jobs and sends it; returns what went out and what came back. */
async function testCreateJob(page: Page) {
  await page.waitForFunction(
    () => document.getElementById("reference")?.innerText.includes("Create a frame extraction job"),
    undefined,
    { timeout: 60_000 },
  );
  const operation = page.locator('[id$="createJob"], [id*="POST/jobs"]').first();
  const section = (await operation.count())
    ? operation
    : page.locator("section", { hasText: "Create a frame extraction job" }).first();
  await section
    .getByRole("button", { name: /Test Request/i })
    .first()
    .click();
  const sent = page.waitForRequest(
    (request) => request.method() === "POST" && new URL(request.url()).pathname === "/v1/jobs",
    { timeout: 30_000 },
  );
  await page
    .getByRole("button", { name: /^Send( POST)?( request)?/i })
    .first()
    .click();
  const request = await sent;
  const response = await request.response();
  return {
    body: request.postDataJSON() as Record<string, unknown>,
    authorization: request.headers().authorization,
    status: response?.status(),
    answer: (await response?.json()) as Record<string, any>,
  };
}

describe("/docs Test Request", () => {
  it("sends the first named example as it stands: a valid body, refused only for the key", async () => {
    const page = await browser.newPage({ viewport: DESKTOP });
    const errors = collectPageErrors(page);
    await page.goto(`${h.stack.baseUrl}/docs`);
    const { body, status, answer } = await testCreateJob(page);
    expect(body).toEqual(firstExample);
    // Nothing but the key is wrong with it (the reference sends an empty bearer token).
    expect(status).toBe(401);
    expect(["AuthenticationRequired", "InvalidApiKey"]).toContain(answer.data.name);
    await screenshot(page, "docs-test-request", { fullPage: false });
    // The browser logs the 401 it was asked to show; nothing else went wrong.
    expect(errors.filter((error) => !/status of 401/.test(error))).toEqual([]);
    await page.close();
  });

  it("sends a signed-in visitor's chosen key, and the job is made", async () => {
    const page = await browser.newPage({ viewport: DESKTOP });
    const email = `${crypto.randomUUID()}@example.com`;
    await signIn(page, h, email);
    const { key } = await h.newKey("starter");
    await page.goto(`${h.stack.baseUrl}/docs`);
    await page.locator("#docs-key").fill(key);
    await Promise.all([page.waitForEvent("load"), page.locator("#docs-key").press("Enter")]);
    const { body, authorization, status, answer } = await testCreateJob(page);
    expect(body).toEqual(firstExample);
    expect(authorization).toBe(`Bearer ${key}`);
    expect(status).toBe(201);
    expect(answer.object).toBe("job");
    expect(answer.options).toMatchObject({ mode: "count", count: firstExample.count });
    await page.close();
  });
});

describe("the guides", () => {
  for (const scheme of ["light", "dark"] as const) {
    for (const [label, viewport] of [
      ["desktop", DESKTOP],
      ["phone", PHONE],
    ] as const) {
      it(`read well in ${scheme} on a ${label}`, async () => {
        const page = await browser.newPage({ viewport, colorScheme: scheme });
        const errors = collectPageErrors(page);
        const violations = await collectCspViolations(page);
        await page.goto(`${h.stack.baseUrl}/docs/errors#PrivateContent`);
        expect(await page.locator("#PrivateContent").isVisible()).toBe(true);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
          viewport.width,
        );
        expect(await seriousViolations(page)).toEqual([]);
        await screenshot(page, `guide-errors-${scheme}-${label}`, { fullPage: false });
        await page.goto(`${h.stack.baseUrl}/docs/quick-start`);
        expect(await seriousViolations(page)).toEqual([]);
        // Each command has the site's copy button, and it copies the command as printed.
        const block = page.locator(".copyable", { hasText: "curl -s -X POST" }).first();
        const copy = block.locator(".copy-button");
        expect(await copy.isVisible()).toBe(true);
        await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
        await copy.click();
        const copied = await page.evaluate(() => navigator.clipboard.readText());
        expect(copied).toBe(await block.locator("pre").textContent());
        expect(copied).toContain(`${h.stack.baseUrl}/v1/jobs?wait=true`);
        await screenshot(page, `guide-quick-start-${scheme}-${label}`);
        expect(violations).toEqual([]);
        expect(errors).toEqual([]);
        await page.close();
      });
    }
  }
});
