// The guides under /docs: quick start, authentication, errors, webhooks, rate limits,
// credits and the SDKs. Their source is Markdown in docs/guides/, bundled into the worker as text and
// rendered here once per origin (micromark, with GitHub's tables; code blocks get the site's
// copy button), so the same files can be served to models as Markdown (/docs/<guide>.md).
// `{PUBLIC_BASE_URL}` in a guide becomes this deployment's origin, so every command on these
// pages runs as it stands. Headings get ids (an error name's heading is the name itself: the
// anchors of every error body's doc_url).
import type { Context } from "hono";
import { raw } from "hono/html";
import { micromark } from "micromark";
import { gfm, gfmHtml } from "micromark-extension-gfm";
import authentication from "../../../docs/guides/authentication.md";
import batches from "../../../docs/guides/batches.md";
import bestFrames from "../../../docs/guides/best-frames.md";
import budgets from "../../../docs/guides/budgets.md";
import credits from "../../../docs/guides/credits.md";
import errors from "../../../docs/guides/errors.md";
import live from "../../../docs/guides/live.md";
import mcp from "../../../docs/guides/mcp.md";
import quickStart from "../../../docs/guides/quick-start.md";
import rateLimits from "../../../docs/guides/rate-limits.md";
import sdks from "../../../docs/guides/sdks.md";
import slides from "../../../docs/guides/slides.md";
import webhooks from "../../../docs/guides/webhooks.md";
import { PUBLIC_BASE_URL_TOKEN } from "../../../schema/api-examples.ts";
import type { AppEnv } from "../../context.ts";
import { CSS_TYPE, staticAsset } from "../../pages/assets.ts";
import { Page } from "../../pages/layout.tsx";
import guidesCss from "./assets/guides.css";
import { publicOrigin } from "./origin.ts";

export const GUIDES_CSS = staticAsset("/assets/guides.css", CSS_TYPE, guidesCss);

export const GUIDES = [
  { slug: "quick-start", label: "Quick start", source: quickStart },
  { slug: "authentication", label: "Authentication", source: authentication },
  { slug: "errors", label: "Errors", source: errors },
  { slug: "webhooks", label: "Webhooks", source: webhooks },
  { slug: "rate-limits", label: "Rate limits", source: rateLimits },
  { slug: "credits", label: "Credits", source: credits },
  { slug: "best-frames", label: "Best frames and previews", source: bestFrames },
  { slug: "slides", label: "Slides and screen recordings", source: slides },
  { slug: "budgets", label: "Token budgets for models", source: budgets },
  { slug: "batches", label: "Batches of videos", source: batches },
  { slug: "live", label: "Live streams", source: live },
  { slug: "mcp", label: "AI agents (MCP)", source: mcp },
  { slug: "sdks", label: "SDKs", source: sdks },
] as const;

export type Guide = (typeof GUIDES)[number];

export function guideOf(slug: string): Guide | undefined {
  return GUIDES.find((guide) => guide.slug === slug);
}

/** A guide's Markdown with this deployment's origin written in. */
export function guideMarkdown(guide: Guide, origin: string): string {
  return guide.source.replaceAll(PUBLIC_BASE_URL_TOKEN, origin);
}

/** `InvalidRequest` stays as it is (doc_url anchors); other headings become `quick-start` words. */
function headingId(text: string): string {
  if (/^[A-Za-z]+$/.test(text)) return text;
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
}

const rendered = new Map<string, { title: string; html: string }>();

/** The guide as HTML (micromark escapes any HTML in the source), cached per origin. */
export function renderGuide(guide: Guide, origin: string): { title: string; html: string } {
  const key = `${guide.slug} ${origin}`;
  const cached = rendered.get(key);
  if (cached) return cached;
  const body = micromark(guideMarkdown(guide, origin), {
    extensions: [gfm()],
    htmlExtensions: [gfmHtml()],
  });
  let title: string = guide.label;
  let blocks = 0;
  const html = body
    .replace(/<h1>([\s\S]*?)<\/h1>/, (_match, inner: string) => {
      title = inner.replace(/<[^>]+>/g, "");
      return `<h1 id="top">${inner}</h1>`;
    })
    .replace(/<h([23])>([\s\S]*?)<\/h\1>/g, (_match, level: string, inner: string) => {
      const id = headingId(inner.replace(/<[^>]+>/g, "").trim());
      return `<h${level} id="${id}"><a class="anchor" href="#${id}">${inner}</a></h${level}>`;
    })
    // Code blocks as the site's CopyableCode renders them (a copy button the site's script
    // shows); they and tables scroll sideways on a phone, so a keyboard can reach them.
    .replace(/<pre><code([^>]*)>([\s\S]*?)<\/code><\/pre>/g, (_match, attributes, code) => {
      const id = `code-${++blocks}`;
      const what = attributes.includes("language-sh") ? "command" : "code";
      return `<div class="copyable"><pre id="${id}" tabindex="0"><code${attributes}>${code}</code></pre><div class="copy-row"><button type="button" class="button-secondary copy-button" data-copy="${id}" hidden>Copy<span class="sr-only"> the ${what}</span></button><output class="copy-status"></output></div></div>`;
    })
    .replace(
      /<table>([\s\S]*?)<\/table>/g,
      '<div class="table-scroll" tabindex="0" role="region" aria-label="Table"><table>$1</table></div>',
    );
  const page = { title, html };
  if (rendered.size > 64) rendered.clear();
  rendered.set(key, page);
  return page;
}

/** The guides' list, beside every guide and the API reference. */
export function GuidesNav(props: { current?: string }) {
  return (
    <nav class="guides-nav" aria-label="Guides">
      <h2>Guides</h2>
      <ul>
        {GUIDES.map((guide) => (
          <li>
            <a
              href={`/docs/${guide.slug}`}
              aria-current={props.current === guide.slug ? "page" : undefined}
            >
              {guide.label}
            </a>
          </li>
        ))}
        <li>
          <a href="/docs" aria-current={props.current === "reference" ? "page" : undefined}>
            API reference
          </a>
        </li>
      </ul>
    </nav>
  );
}

/** GET /docs/:guide — the page; GET /docs/:guide.md — its Markdown, as models read it. */
export function guidePage(c: Context<AppEnv>) {
  const name = c.req.param("guide") ?? "";
  const markdown = name.endsWith(".md");
  const guide = guideOf(markdown ? name.slice(0, -3) : name);
  if (!guide) return c.notFound();
  const origin = publicOrigin(c);
  if (markdown) {
    c.header("Content-Type", "text/markdown; charset=utf-8");
    // As /llms.txt and /docs.md (llms.ts): they change only with a deployment.
    c.header("Cache-Control", "public, max-age=300");
    return c.body(guideMarkdown(guide, origin));
  }
  const { title, html } = renderGuide(guide, origin);
  return c.html(
    <Page
      title={`${title} · Stills docs`}
      description={`Stills API guide: ${guide.label.toLowerCase()}.`}
      path="/docs"
      styles={[GUIDES_CSS.path]}
    >
      <div class="wrap guides">
        <GuidesNav current={guide.slug} />
        <main id="main" class="guide">
          <article>{raw(html)}</article>
          <p class="guide-source">
            <a href={`/docs/${guide.slug}.md`}>This page as Markdown</a>
          </p>
        </main>
      </div>
    </Page>,
  );
}
