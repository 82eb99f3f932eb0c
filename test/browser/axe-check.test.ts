// The accessibility check every page test relies on (support/browser.ts): axe-core in Debian's
// Chromium names each serious or critical violation with the elements it found, leaves the
// minor and moderate ones out, and honours `exclude`. A page made here, not by the stack, so a
// check that silently found nothing would fail.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { expectAccessible, launchBrowser, seriousViolations } from "./support/browser.ts";

let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchBrowser();
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
});

// Grey on grey (contrast about 1.3:1), two images without a text alternative and a button
// without a name: serious, critical and critical. Content outside a landmark: moderate.
const FLAWED = `<!doctype html><html lang="en"><head><title>Flawed</title></head><body>
<main>
  <h1>A page</h1>
  <p id="faint" style="color:#777;background:#888">Faint text</p>
  <img id="photo" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="10" height="10">
  <img id="photo-2" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="10" height="10">
  <div id="third-party"><button id="nameless"></button></div>
</main>
<p>Outside every landmark</p>
</body></html>`;

it("names every serious and critical violation with its elements, and only those", async () => {
  await page.setContent(FLAWED);
  const violations = await seriousViolations(page);
  expect(
    violations.map((v) => [v.id, v.impact, v.nodes.map((n) => n.target.join(" "))]).sort(),
  ).toEqual([
    ["button-name", "critical", ["#nameless"]],
    ["color-contrast", "serious", ["#faint"]],
    ["image-alt", "critical", ["#photo", "#photo-2"]],
  ]);
  for (const v of violations) expect(v.help).not.toBe("");
});

it("leaves out what `exclude` names, and fails a test with the rule, its help and the elements", async () => {
  await page.setContent(FLAWED);
  const ids = (await seriousViolations(page, { exclude: ["#third-party"] })).map((v) => v.id);
  expect(ids.sort()).toEqual(["color-contrast", "image-alt"]);
  const failure = await expectAccessible(page, "flawed").then(
    () => undefined,
    (err: { message: string; actual: string[] }) => err,
  );
  expect(failure?.message).toMatch(/^flawed: /);
  expect(failure?.actual.map((line) => line.replace(/: .+ \(/, ": … (")).sort()).toEqual([
    "button-name: … (#nameless)",
    "color-contrast: … (#faint)",
    "image-alt: … (#photo, #photo-2)",
  ]);
});
