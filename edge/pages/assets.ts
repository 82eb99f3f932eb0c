// Static files the pages load (stylesheets, small scripts, the reference UI), bundled into the
// worker as text by wrangler.toml's module rules and served from our own origin. Each URL
// carries a fingerprint of its content, so browsers may keep it for a year and a new deploy
// is fetched at once.
import type { Context } from "hono";
import siteScript from "./assets/site.client.js";
import siteCss from "./assets/site.css";
import { ICON_SVG } from "./chrome.tsx";

export interface StaticAsset {
  /** The route it is served at, e.g. "/assets/site.css". */
  readonly route: string;
  /** The route with its fingerprint: what pages link to. */
  readonly path: string;
  readonly contentType: string;
  readonly body: string;
}

const YEAR_SECONDS = 365 * 24 * 3600;

/** FNV-1a over UTF-16 code units: a cheap, stable fingerprint (not a security measure). */
function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}

export function staticAsset(route: string, contentType: string, body: string): StaticAsset {
  let path: string | undefined;
  return {
    route,
    contentType,
    body,
    // Computed on first use: the reference UI is megabytes, and most requests never link it.
    get path() {
      path ??= `${route}?v=${fingerprint(body)}`;
      return path;
    },
  };
}

/** Answers with the file; immutable for a year when asked for by its current fingerprint. */
export function serveAsset(c: Context, asset: StaticAsset): Response {
  const current = c.req.query("v") === asset.path.slice(asset.route.length + 3);
  return c.body(asset.body, 200, {
    "Content-Type": asset.contentType,
    "Cache-Control": current ? `public, max-age=${YEAR_SECONDS}, immutable` : "public, max-age=300",
    "X-Content-Type-Options": "nosniff",
  });
}

export const CSS_TYPE = "text/css; charset=utf-8";
export const JS_TYPE = "text/javascript; charset=utf-8";

export const SITE_CSS = staticAsset("/assets/site.css", CSS_TYPE, siteCss);
/** Copy buttons, code tabs, local times and the header's menu (site.client.js): every page. */
export const SITE_JS = staticAsset("/assets/site.js", JS_TYPE, siteScript);
export const SITE_ICON = staticAsset("/assets/icon.svg", "image/svg+xml", ICON_SVG);
