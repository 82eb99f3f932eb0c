// Docs that models read (issue 38, decision 0312): /llms.txt after the llms.txt convention (a
// title, a one-paragraph summary, then lists of links to Markdown), and the API reference as
// Markdown at /docs.md, the .md twin of /docs. Both are written from the sources the HTML pages
// use: the guides' Markdown (guides.tsx) and the served OpenAPI document.
import type { Context } from "hono";
import type { AppEnv } from "../../context.ts";
import { OPENAPI_PATH } from "../docs/index.ts";
import { apiDocument } from "../v1.ts";
import { GUIDES, guideMarkdown } from "./guides.tsx";
import { publicOrigin } from "./origin.ts";
import { type OpenApiDocumentLike, referenceMarkdown } from "./reference-markdown.ts";

export const MARKDOWN_TYPE = "text/markdown; charset=utf-8";
/** Docs change with deployments only: caches may keep them a few minutes. */
export const DOCS_CACHE_CONTROL = "public, max-age=300";

/** GET /llms.txt */
export function llmsTxt(c: Context<AppEnv>) {
  const origin = publicOrigin(c);
  const lines = [
    "# Stills",
    "",
    "> Stills turns a public video link (YouTube, TikTok, Instagram, Facebook, X, Vimeo, Google Drive, or a direct .mp4/.mov/.webm) into still frames: every N seconds, N evenly spaced, at exact moments, one per scene, the best-looking, or as many as fit a model's token budget. Frames come back as signed URLs or a ZIP, each with its exact timestamp, and optionally the text on screen.",
    "",
    `The REST API is at ${origin}/v1 (an API key in \`Authorization: Bearer stills_live_…\` or \`X-API-Key\`; jobs are asynchronous, \`?wait=true\` blocks up to 50 s). The same operations are an MCP server at ${origin}/mcp (Streamable HTTP, the same key and credits). Errors are JSON with \`data.name\`, \`data.userMessage\` and every problem in \`data.errors\`.`,
    "",
    "## Guides",
    "",
    ...GUIDES.map(
      (guide) =>
        `- [${guide.label}](${origin}/docs/${guide.slug}.md): ${guideSummary(guideMarkdown(guide, origin))}`,
    ),
    "",
    "## API reference",
    "",
    `- [API reference](${origin}/docs.md): every endpoint with its parameters, request and response shapes and errors, and every schema, written from the OpenAPI document`,
    `- [OpenAPI document](${origin}${OPENAPI_PATH}): the same as OpenAPI 3.1 JSON, to generate a client`,
    "",
  ];
  c.header("Content-Type", "text/plain; charset=utf-8");
  c.header("Cache-Control", DOCS_CACHE_CONTROL);
  return c.body(lines.join("\n"));
}

/** GET /docs.md: the API reference, written from the document /docs renders. */
export function referencePage(c: Context<AppEnv>) {
  const origin = publicOrigin(c);
  const document = apiDocument(c) as unknown as OpenApiDocumentLike;
  c.header("Content-Type", MARKDOWN_TYPE);
  c.header("Cache-Control", DOCS_CACHE_CONTROL);
  return c.body(referenceMarkdown(document, `${origin}${OPENAPI_PATH}`));
}

/** A guide's first paragraph, its first sentence: what the guide is for, in one line. */
export function guideSummary(markdown: string): string {
  const paragraph = markdown
    .split(/\n\s*\n/)
    .map((block) => block.trim())
    .find((block) => block !== "" && !/^(#|```|\||- |\d+\. |>)/.test(block));
  if (!paragraph) return "";
  const text = paragraph.replace(/\s+/g, " ").replace(/\[([^\]]+)\]\([^)]+\)/g, "$1");
  const sentence = text.match(/^.*?[.!?](?=\s|$)/)?.[0] ?? text;
  return sentence.length > 240 ? `${sentence.slice(0, 239)}…` : sentence;
}
