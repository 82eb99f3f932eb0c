// The frame of every page the edge renders (landing, docs, sign-in, dashboard): one HTML
// shell, the shared stylesheet, the site's header and footer, and the security headers.
// Pages load scripts and styles only from our own origin, so the Content-Security-Policy can
// forbid everything else.

import { createMiddleware } from "hono/factory";
import { raw } from "hono/html";
import type { Child } from "hono/jsx";
import type { AppEnv } from "../context.ts";
import { presignSettings } from "../files.ts";
import { presignedOrigin } from "../storage/r2-presign.ts";
import { SITE_CSS, SITE_ICON, SITE_JS } from "./assets.ts";
import { SiteFooter, SiteHeader } from "./chrome.tsx";

export interface PolicyOptions {
  /** Extra origins images may come from (signed frame URLs when PUBLIC_BASE_URL is another host). */
  imageOrigins?: string[];
  /** A per-response nonce for style elements a library inserts at run time (/docs only). */
  styleNonce?: string;
  /** Allow style="" attributes (not style elements) in markup a library builds (/docs only). */
  styleAttributes?: boolean;
}

/**
 * Frames come from R2's S3 endpoint when file URLs are presigned (edge/files.ts), so every
 * page may show images from that origin then, and only then.
 */
function fileOrigins(): string[] {
  const settings = presignSettings();
  return settings ? [presignedOrigin(settings)] : [];
}

export function contentSecurityPolicy(options: PolicyOptions = {}): string {
  return policy(options, fileOrigins());
}

function policy(options: PolicyOptions, fileImageOrigins: string[]): string {
  const imageOrigins = [...new Set([...(options.imageOrigins ?? []), ...fileImageOrigins])];
  const styles = options.styleNonce ? `'self' 'nonce-${options.styleNonce}'` : "'self'";
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src ${styles}`,
    ...(options.styleAttributes ? ["style-src-attr 'unsafe-inline'"] : []),
    ["img-src 'self' data: blob:", ...imageOrigins].join(" "),
    "font-src 'self'",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/** The policy of a deployment without presigned file URLs (pages compute theirs per request). */
export const CONTENT_SECURITY_POLICY = policy({}, []);

/**
 * Security headers of every HTML page. Mount it on each page router. A handler that needs a
 * wider policy (see contentSecurityPolicy) sets its own header, and this one leaves it alone.
 */
export const pageHeaders = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (!c.res.headers.has("Content-Security-Policy")) {
    c.header("Content-Security-Policy", contentSecurityPolicy());
  }
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Referrer-Policy", "same-origin");
  c.header("X-Frame-Options", "DENY");
});

export function Page(props: {
  title: string;
  /** Same-origin script paths, e.g. "/assets/demo.js", loaded deferred. */
  scripts?: string[];
  /** Same-origin stylesheets loaded after /assets/site.css, e.g. "/assets/dashboard.css". */
  styles?: string[];
  /** One sentence for search results and link previews. */
  description?: string;
  /** Path of the page, so the header marks its link as the current one. */
  path?: string;
  /** Extra items at the end of the header's navigation (e.g. a sign-out form). */
  headerActions?: Child;
  /** Extra elements of <head> (e.g. a meta tag a library reads). */
  head?: Child;
  /** The id the "Skip to content" link jumps to: the page's main content ("main" by default). */
  skipTo?: string;
  children?: Child;
}) {
  // The site's script first (copy buttons, tabs, local times, the menu), each script once.
  const scripts = [...new Set([SITE_JS.path, ...(props.scripts ?? [])])];
  // The doctype keeps browsers in standards mode; JSX cannot write it, so it is raw text.
  return (
    <>
      {raw("<!doctype html>")}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          {/* Light and dark pages follow the visitor's setting (site.css). */}
          <meta name="color-scheme" content="light dark" />
          <title>{props.title}</title>
          {props.description && <meta name="description" content={props.description} />}
          <link rel="icon" href={SITE_ICON.path} type="image/svg+xml" />
          <link rel="stylesheet" href={SITE_CSS.path} />
          {props.styles?.map((href) => (
            <link rel="stylesheet" href={href} />
          ))}
          {props.head}
          {scripts.map((src) => (
            <script src={src} defer />
          ))}
        </head>
        <body>
          <a class="skip-link" href={`#${props.skipTo ?? "main"}`}>
            Skip to content
          </a>
          <SiteHeader path={props.path} actions={props.headerActions} />
          {props.children}
          <SiteFooter />
        </body>
      </html>
    </>
  );
}
