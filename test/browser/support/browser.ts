// Browser tests drive Debian's Chromium (never a downloaded browser) with playwright-core,
// check pages with axe-core, and save a screenshot of every page they look at under
// test/browser/screenshots/ (git-ignored) for a person to look at.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");
export const SCREENSHOTS = join(ROOT, "test/browser/screenshots");
// Debian's headless shell (package chromium-headless-shell, the same Chromium version without
// the browser's UI layer): the same pages for about 40 % less CPU than /usr/bin/chromium
// (decision 0297). Debian's chromium where the shell is not installed; CHROMIUM_PATH overrides.
const HEADLESS_SHELL = "/usr/bin/chromium-headless-shell";
const CHROMIUM =
  process.env.CHROMIUM_PATH ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : "/usr/bin/chromium");
const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 900 };

/** Chromium as TOOLCHAIN.md starts it: headless, no sandbox (root), no background traffic. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * Saves a screenshot as test/browser/screenshots/<name>.png: the full page, or only what the
 * viewport shows (for pages that render their long content lazily as it is scrolled to).
 */
export async function screenshot(
  page: Page,
  name: string,
  options: { fullPage?: boolean } = {},
): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: options.fullPage ?? true });
  return path;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's serious and critical violations on the page as it is now. `exclude` lists CSS
 * selectors of parts that are not ours to fix (an embedded third-party UI).
 */
export async function seriousViolations(
  page: Page,
  options: { exclude?: string[] } = {},
): Promise<AxeViolation[]> {
  // Evaluated through DevTools, not added as an inline <script>: our pages' policy refuses
  // inline scripts, as it should.
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.evaluate(AXE_SOURCE);
  const exclude = options.exclude ?? [];
  const violations = await page.evaluate(async (excluded) => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is injected as a global script.
    const axe = (globalThis as any).axe;
    const context = excluded.length > 0 ? { exclude: excluded.map((s) => [s]) } : document;
    // Every rule runs; only the violations are reported in full. The passes, the incomplete and
    // the inapplicable keep one node each instead of a selector for every element checked:
    // about a fifth of each run (decision 0379).
    const result = await axe.run(context, { resultTypes: ["violations"] });
    return result.violations as AxeViolation[];
  }, exclude);
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/**
 * Fails the test, naming the page state, when axe finds a serious or critical violation; each
 * is listed with its rule, its help text and the elements it found.
 */
export async function expectAccessible(
  page: Page,
  name: string,
  options: { exclude?: string[] } = {},
): Promise<void> {
  const violations = await seriousViolations(page, options);
  expect(
    violations.map(
      (v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`,
    ),
    name,
  ).toEqual([]);
}

/** The page checked by axe and photographed in the light scheme and then the dark one. */
export async function inBothSchemes(page: Page, name: string): Promise<void> {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expectAccessible(page, `${name}-${scheme}`);
    await screenshot(page, `${name}-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: "light" });
}

/**
 * The page at desktop and phone widths, each in light and dark: axe finds nothing serious, a
 * screenshot is saved as `${name}-${width}-${scheme}`, and nothing is wider than the screen.
 * Ends at desktop width in the light scheme.
 */
export async function checkEveryWidth(
  page: Page,
  name: string,
  options: { fullPage?: boolean } = {},
): Promise<void> {
  for (const [width, size] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const) {
    await page.setViewportSize(size);
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expectAccessible(page, `${name}-${width}-${scheme}`);
      await screenshot(page, `${name}-${width}-${scheme}`, options);
    }
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(overflow, `${name} fits a ${width}`).toBeLessThanOrEqual(size.width);
  }
  await page.setViewportSize(DESKTOP);
  await page.emulateMedia({ colorScheme: "light" });
}

/**
 * Every Content-Security-Policy violation the page reports, as "directive: sample", from the
 * page's own securitypolicyviolation events (also those a library catches and hides from the
 * console). Call before the first navigation.
 */
export async function collectCspViolations(page: Page): Promise<string[]> {
  const violations: string[] = [];
  await page.exposeFunction("__reportCspViolation", (text: string) => violations.push(text));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      // biome-ignore lint/suspicious/noExplicitAny: the function exposed above.
      (globalThis as any).__reportCspViolation(
        `${event.effectiveDirective}: ${event.blockedURI} ${event.sample}`.trim(),
      );
    });
  });
  return violations;
}

/** The host of every request the page makes (to prove none leaves the origin). */
export function collectRequestHosts(page: Page): Set<string> {
  const hosts = new Set<string>();
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.protocol === "http:" || url.protocol === "https:") hosts.add(url.host);
    else if (url.protocol !== "data:" && url.protocol !== "blob:") hosts.add(url.href);
  });
  return hosts;
}

/** Every console error and page error the page raised (a CSP refusal shows up here). */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  return errors;
}
