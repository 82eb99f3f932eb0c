// /docs in Debian's Chromium against the real stack: the interactive reference renders every
// operation of the served OpenAPI document, every request stays on our origin (the reference
// UI comes from the npm package, served by the edge), and the page's policy is never broken.
import type { Browser, Page } from "playwright-core";
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

let h: Harness;
let browser: Browser;

beforeAll(async () => {
  h = await startHarness();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

function directives(policy: string): Map<string, string> {
  return new Map(
    policy.split(";").map((part) => {
      const [name, ...values] = part.trim().split(/\s+/);
      return [name, values.join(" ")];
    }),
  );
}

/** Every operation of the document: "METHOD /path" and its summary. */
async function operations(): Promise<{ method: string; path: string; summary: string }[]> {
  const document = (await call(h.stack, "GET", "/openapi.json")).body;
  return Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(
    ([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        summary: String(operation.summary),
      })),
  );
}

async function openDocs(viewport: { width: number; height: number }) {
  const page = await browser.newPage({ viewport });
  const errors = collectPageErrors(page);
  const violations = await collectCspViolations(page);
  const hosts = collectRequestHosts(page);
  await page.goto(`${h.stack.baseUrl}/docs`);
  return { page, errors, violations, hosts };
}

async function waitForReference(page: Page, summaries: string[]) {
  await page.waitForFunction(
    (expected) => {
      const text = document.getElementById("reference")?.innerText ?? "";
      return expected.every((summary) => text.includes(summary));
    },
    summaries,
    { timeout: 60_000 },
  );
}

/**
 * axe's serious and critical findings on the whole page, Scalar's part included (its colours are
 * ours to set), less one defect of Scalar's own markup we cannot reach: the icon-only copy
 * buttons of its code blocks have no accessible name.
 */
async function accessibilityProblems(page: Page) {
  const problems = [];
  for (const violation of await seriousViolations(page)) {
    const nodes = [];
    for (const node of violation.nodes) {
      const scalarCopyButton = await page.evaluate(
        (selector) => document.querySelector(selector)?.classList.contains("scalar-code-copy"),
        node.target.join(" "),
      );
      if (!(violation.id === "button-name" && scalarCopyButton)) nodes.push(node.target);
    }
    if (nodes.length > 0) problems.push({ id: violation.id, help: violation.help, nodes });
  }
  return problems;
}

describe("/docs", () => {
  it("serves the reference UI itself, under a policy with no unsafe script or style elements", async () => {
    const first = await fetch(`${h.stack.baseUrl}/docs`);
    const second = await fetch(`${h.stack.baseUrl}/docs`);
    expect(first.status).toBe(200);
    const html = await first.text();
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)[^"'\s]+\.(js|css)/);
    const policy = directives(first.headers.get("content-security-policy") ?? "");
    expect(policy.get("default-src")).toBe("'none'");
    expect(policy.get("script-src")).toBe("'self'");
    expect(policy.get("connect-src")).toBe("'self'");
    expect(policy.get("font-src")).toBe("'self'");
    // Style elements need this response's nonce; only style="" attributes are relaxed.
    const nonce = /^'self' 'nonce-([A-Za-z0-9+/=]{22,})'$/.exec(policy.get("style-src") ?? "")?.[1];
    expect(nonce).toBeDefined();
    expect(policy.get("style-src-attr")).toBe("'unsafe-inline'");
    expect(html).toContain(`<meta property="csp-nonce" content="${nonce}"/>`);
    const nextNonce = /'nonce-([^']+)'/.exec(second.headers.get("content-security-policy") ?? "");
    expect(nextNonce?.[1]).not.toBe(nonce);

    const bundlePath = /<script src="(\/assets\/scalar-api-reference\.js\?v=[^"]+)"/.exec(
      html,
    )?.[1];
    expect(bundlePath).toBeDefined();
    const bundle = await fetch(`${h.stack.baseUrl}${bundlePath}`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(bundle.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const source = await bundle.text();
    expect(source).toContain("createApiReference");
    expect(source).not.toContain("sourceMappingURL");
  });

  it("renders every operation of the OpenAPI document, with nothing leaving the origin", async () => {
    const expected = await operations();
    expect(expected.length).toBeGreaterThanOrEqual(5);
    const { page, errors, violations, hosts } = await openDocs(DESKTOP);
    await waitForReference(
      page,
      expected.map((op) => op.summary),
    );
    // Each operation's path is shown too, and Scalar's own stylesheet took effect.
    const text = await page.locator("#reference").innerText();
    for (const op of expected) expect(text, `${op.method} ${op.path}`).toContain(op.path);
    const sidebarDisplay = await page.evaluate(() => {
      const sidebar = document.querySelector("#reference aside, #reference .t-doc__sidebar");
      return sidebar ? getComputedStyle(sidebar).display : "missing";
    });
    expect(sidebarDisplay).toBe("flex");
    // The MCP setup beside it names this origin's endpoint.
    const aside = await page.locator(".docs-aside").innerText();
    expect(aside).toContain(`${h.stack.baseUrl}/mcp`);
    expect(aside).toContain("Streamable HTTP");
    await page.waitForLoadState("networkidle");
    expect([...hosts]).toEqual([new URL(h.stack.baseUrl).host]);
    expect(violations).toEqual([]);
    expect(errors).toEqual([]);
    // The reference renders its sections as they are scrolled to: the viewport is what a
    // visitor sees, the reference beside the MCP setup.
    await screenshot(page, "docs-desktop", { fullPage: false });
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.close();
  });

  it("works at phone width", async () => {
    const expected = await operations();
    const { page, errors, violations, hosts } = await openDocs(PHONE);
    await waitForReference(page, expected.map((op) => op.summary).slice(0, 1));
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      PHONE.width,
    );
    await page.waitForLoadState("networkidle");
    expect(await accessibilityProblems(page)).toEqual([]);
    await screenshot(page, "docs-phone", { fullPage: false });
    await page.locator(".docs-aside").scrollIntoViewIfNeeded();
    await screenshot(page, "docs-phone-mcp", { fullPage: false });
    expect([...hosts]).toEqual([new URL(h.stack.baseUrl).host]);
    expect(violations).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
