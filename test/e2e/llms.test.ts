// Docs that models read (issue 38, decision 0312): /llms.txt lists every guide on disk and the
// API reference; each link answers 200 with Markdown (text/markdown, cached a few minutes)
// equal to its source: a guide's file with this deployment's origin written in, the reference
// written from the served OpenAPI document, covering every path, method and schema.
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "./support/harness.ts";

const GUIDES_DIR = resolve(import.meta.dirname, "../../docs/guides");
const MARKDOWN = "text/markdown; charset=utf-8";

let h: Harness;
let origin: string;

beforeAll(async () => {
  h = await startHarness();
  origin = h.stack.baseUrl;
});

afterAll(async () => {
  await h?.close();
});

/** The [label](url) links of a Markdown text. */
function links(markdown: string): { label: string; url: string }[] {
  return [...markdown.matchAll(/\[([^\]]+)\]\(([^)\s]+)\)/g)].map((m) => ({
    label: m[1],
    url: m[2],
  }));
}

function expectCached(response: Response) {
  expect(response.headers.get("cache-control")).toMatch(/max-age=\d+/);
  expect(response.headers.get("x-content-type-options")).toBe("nosniff");
}

describe("/llms.txt", () => {
  it("follows the llms.txt convention and lists every guide on disk", async () => {
    const response = await fetch(`${origin}/llms.txt`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expectCached(response);
    const text = await response.text();
    const lines = text.split("\n");
    // An H1 title, then a blockquote summary, then H2 sections of link lists.
    expect(lines[0]).toBe("# Stills");
    expect(lines.find((line) => line.trim() !== "" && !line.startsWith("# "))).toMatch(/^> \S/);
    expect(text).toContain("\n## Guides\n");
    expect(text).toContain("\n## API reference\n");
    // Written for this deployment: no placeholder left.
    expect(text).not.toContain("{PUBLIC_BASE_URL}");
    const onDisk = readdirSync(GUIDES_DIR)
      .filter((name) => name.endsWith(".md"))
      .map((name) => name.slice(0, -3))
      .sort();
    const listed = links(text)
      .map((link) => new URL(link.url).pathname.match(/^\/docs\/([a-z0-9-]+)\.md$/)?.[1])
      .filter((slug): slug is string => slug !== undefined)
      .sort();
    expect(listed).toEqual(onDisk);
    // Each guide's line says what it is for.
    for (const line of lines.filter((l) => l.startsWith("- ["))) {
      expect(line).toMatch(/^- \[[^\]]+\]\(https?:\/\/[^)]+\): \S/);
    }
  });

  it("links only to addresses that answer, each guide equal to its source file", async () => {
    const text = await (await fetch(`${origin}/llms.txt`)).text();
    const found = links(text);
    expect(found.length).toBeGreaterThan(3);
    for (const { url } of found) {
      expect(url.startsWith(origin), url).toBe(true);
      const response = await fetch(url);
      expect(response.status, url).toBe(200);
      const path = new URL(url).pathname;
      if (path.endsWith(".json")) {
        expect(response.headers.get("content-type")).toMatch(/^application\/json/);
        continue;
      }
      expect(response.headers.get("content-type"), url).toBe(MARKDOWN);
      expectCached(response);
      const body = await response.text();
      const guide = path.match(/^\/docs\/([a-z0-9-]+)\.md$/)?.[1];
      if (guide) {
        const source = readFileSync(resolve(GUIDES_DIR, `${guide}.md`), "utf8");
        expect(body).toBe(source.replaceAll("{PUBLIC_BASE_URL}", origin));
      } else {
        expect(path).toBe("/docs.md");
      }
    }
  });
});

describe("/docs.md, the API reference as Markdown", () => {
  it("is written from the OpenAPI document: every path, method and schema", async () => {
    const document: any = await (await fetch(`${origin}/v1/openapi.json`)).json();
    const response = await fetch(`${origin}/docs.md`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(MARKDOWN);
    expectCached(response);
    const markdown = await response.text();
    expect(markdown.startsWith(`# ${document.info.title} reference\n`)).toBe(true);
    expect(markdown).toContain(document.servers[0].url);
    expect(markdown).not.toContain("{PUBLIC_BASE_URL}");
    // Bounds the document states are written out (GET /jobs' limit: 1 to 100, default 20).
    expect(markdown).toMatch(
      /\| `limit` \| query \| integer \| no \| \(≥ 1, ≤ 100, default 20\) \|/,
    );
    let operations = 0;
    for (const [path, methods] of Object.entries(document.paths) as [string, object][]) {
      for (const [method, operation] of Object.entries(methods) as [string, any][]) {
        const heading = `### ${method.toUpperCase()} ${path}\n`;
        expect(markdown, heading).toContain(heading);
        const section = markdown.slice(markdown.indexOf(heading)).split("\n### ")[0];
        if (operation.operationId) expect(section).toContain(`\`${operation.operationId}\``);
        for (const status of Object.keys(operation.responses ?? {})) {
          expect(section, `${heading} ${status}`).toContain(`- \`${status}\`:`);
        }
        for (const parameter of operation.parameters ?? []) {
          expect(section).toContain(`| \`${parameter.name}\` |`);
        }
        operations++;
      }
    }
    expect(operations).toBeGreaterThan(5);
    for (const [name, schema] of Object.entries(document.components.schemas) as [string, any][]) {
      expect(markdown, name).toContain(`\n### ${name}\n`);
      const section = markdown.slice(markdown.indexOf(`\n### ${name}\n`)).split("\n### ")[1];
      for (const field of Object.keys(schema.properties ?? {})) {
        expect(section, `${name}.${field}`).toContain(`| \`${field}\` |`);
      }
    }
  });

  it("is the Markdown twin the guides' pages and the reference page link to", async () => {
    const guidePage = await (await fetch(`${origin}/docs/quick-start`)).text();
    expect(guidePage).toContain('href="/docs/quick-start.md"');
  });
});
