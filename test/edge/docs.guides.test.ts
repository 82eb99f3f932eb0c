// The docs that run (issue 34): the guides under /docs rendered from docs/guides/*.md, with an
// anchor for every error name (each error body's doc_url lands on one), this deployment's
// origin written into their commands, and the same text as Markdown; the OpenAPI document's
// named create-job examples, each valid as it stands; /docs links the guides and, for a
// signed-in visitor, offers to send their own key from "Test Request".
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { API_ERROR_NAMES, CreateJobRequestSchema } from "../../schema/api.ts";
import { api, ORIGIN, openApiDocument } from "./support/api.ts";
import { Visitor } from "./support/visitor.ts";

const GUIDES = [
  "quick-start",
  "authentication",
  "errors",
  "webhooks",
  "rate-limits",
  "credits",
  "slides",
  "mcp",
  "sdks",
];

describe("the guides", () => {
  it.each(GUIDES)("/docs/%s is a page of the site, with every guide linked", async (slug) => {
    const page = await new Visitor().get(`/docs/${slug}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.text).toMatch(/<h1 id="top">[^<]+<\/h1>/);
    for (const other of GUIDES) expect(page.text).toContain(`href="/docs/${other}"`);
    // The placeholder is written out, and no HTML of the source survives unescaped.
    expect(page.text).not.toContain("{PUBLIC_BASE_URL}");
    expect(page.text).toContain(`<a href="/docs/${slug}.md">`);
  });

  it("gives every error name an anchor, where each doc_url points", async () => {
    const page = await new Visitor().get("/docs/errors");
    for (const name of API_ERROR_NAMES) {
      expect(page.text, name).toContain(`<h3 id="${name}">`);
    }
    const refused = await api("GET", "/v1/jobs/not-a-uuid", {
      headers: { authorization: "Bearer nope" },
    });
    const anchor = new URL(refused.body.data.doc_url);
    expect(anchor.pathname).toBe("/docs/errors");
    expect(page.text).toContain(`<h3 id="${anchor.hash.slice(1)}">`);
  });

  it("writes this deployment's origin into the commands, so they run as they stand", async () => {
    const page = await new Visitor().get("/docs/quick-start");
    expect(page.text).toContain(`${ORIGIN}/samples/intro.mp4`);
    expect(page.text).toContain(`${ORIGIN}/v1/jobs?wait=true`);
    // Tables (GitHub's Markdown) render as tables.
    expect(page.text).toMatch(/<table>[\s\S]*<th>you want<\/th>/);
  });

  it("serves the same guide as Markdown", async () => {
    const res = await new Visitor().get("/docs/credits.md");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(res.text.startsWith("# Credits\n")).toBe(true);
  });

  it("answers 404 for a guide that does not exist", async () => {
    const res = await api("GET", "/docs/nope");
    expect(res.status).toBe(404);
    expect(res.body.data.name).toBe("NotFound");
  });
});

describe("the OpenAPI document's create-job examples", () => {
  it("name each mode, and each is valid as it stands on this origin's sample", async () => {
    const document = (await openApiDocument()) as unknown as {
      paths: Record<string, any>;
    };
    const examples = document.paths["/jobs"].post.requestBody.content["application/json"]
      .examples as Record<string, { summary: string; value: { url: string } }>;
    expect(Object.keys(examples)).toEqual([
      "count",
      "interval",
      "timestamps",
      "range",
      "scenes",
      "keyframes",
      "storyboard",
      "best",
      "slides",
      "animated",
      "zip",
      "budget",
    ]);
    for (const [name, example] of Object.entries(examples)) {
      expect(example.value.url, name).toBe(`${ORIGIN}/samples/intro.mp4`);
      const parsed = CreateJobRequestSchema.safeParse(example.value);
      expect(parsed.success, `${name}: ${parsed.error?.message}`).toBe(true);
    }
  });
});

describe("/docs", () => {
  it("links the guides, and offers no key field to a visitor who is not signed in", async () => {
    const page = await new Visitor().get("/docs");
    expect(page.status).toBe(200);
    expect(page.text).toContain('href="/docs/quick-start"');
    expect(page.text).not.toContain('id="docs-key"');
  });

  it("lets a signed-in visitor give Test Request a key of their choosing", async () => {
    const visitor = new Visitor();
    const email = `${crypto.randomUUID()}@example.com`;
    expect((await visitor.post("/sign-in", { email })).status).toBe(303);
    const mail = await env.DB.prepare(
      "SELECT code FROM mail_outbox WHERE to_email = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
    )
      .bind(email)
      .first<{ code: string }>();
    expect((await visitor.post("/sign-in/code", { email, code: mail?.code ?? "" })).status).toBe(
      303,
    );
    const page = await visitor.get("/docs");
    expect(page.text).toContain('id="docs-key"');
    expect(page.text).toMatch(/<input[^>]*id="docs-key"[^>]*type="password"/);
  });
});
