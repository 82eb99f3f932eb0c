// The header and footer every page shares, so a visitor can always reach the demo, the
// reference, the pricing and their dashboard from wherever they are.
import type { Child } from "hono/jsx";

const NAV_LINKS = [
  { href: "/docs", label: "API reference" },
  { href: "/#pricing", label: "Pricing" },
  { href: "/#mcp", label: "MCP" },
  { href: "/dashboard", label: "Dashboard" },
  { href: "/sign-in", label: "Sign in" },
];

const MARK_PATHS = `<rect x="2" y="4" width="20" height="16" rx="3" fill="#1d4ed8"/><path d="M10 8.5v7l6-3.5z" fill="#fff"/>`;

/** The brand mark as the site's icon, so browsers do not ask for a /favicon.ico we lack. */
export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">${MARK_PATHS}</svg>`;

/** A film frame with a play mark: the brand's only picture, drawn inline so it costs no request. */
function BrandMark() {
  return (
    <svg class="brand-mark" viewBox="0 0 24 24" width="24" height="24" aria-hidden="true">
      <rect x="2" y="4" width="20" height="16" rx="3" fill="currentColor" />
      <path d="M10 8.5v7l6-3.5z" fill="#fff" />
    </svg>
  );
}

/**
 * The header: the brand and the site's links on one line. On a narrow screen the links fold
 * into a menu (a <details>, so it opens without scripts too; site.css shows its list inline on
 * wide screens, and site.client.js closes it on Escape or a click elsewhere).
 */
export function SiteHeader(props: { path?: string; actions?: Child }) {
  return (
    <header class="site-header">
      <div class="wrap site-header-inner">
        <a class="brand" href="/" aria-current={props.path === "/" ? "page" : undefined}>
          <BrandMark />
          Stills
        </a>
        <nav aria-label="Main" class="site-nav-region">
          <details class="site-menu">
            <summary class="site-menu-button">
              <MenuIcon />
              Menu
            </summary>
            <ul class="site-nav">
              {NAV_LINKS.map((link) => (
                <li>
                  <a href={link.href} aria-current={props.path === link.href ? "page" : undefined}>
                    {link.label}
                  </a>
                </li>
              ))}
              {props.actions && <li>{props.actions}</li>}
            </ul>
          </details>
        </nav>
      </div>
    </header>
  );
}

function MenuIcon() {
  return (
    <svg class="menu-icon" viewBox="0 0 20 20" width="20" height="20" aria-hidden="true">
      <path d="M3 5h14M3 10h14M3 15h14" stroke="currentColor" stroke-width="2" fill="none" />
    </svg>
  );
}

export function SiteFooter() {
  return (
    <footer class="site-footer">
      <div class="wrap">
        <p>
          Stills turns a video link into still frames, each with its exact timestamp.{" "}
          <a href="/docs">API reference</a> · <a href="/v1/openapi.json">OpenAPI document</a> ·{" "}
          <a href="/v1/pricing">Pricing as JSON</a>
        </p>
      </div>
    </footer>
  );
}
