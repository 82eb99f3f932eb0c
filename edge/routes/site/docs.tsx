// /docs: the interactive reference of the OpenAPI document, rendered by Scalar's standalone
// bundle served from our own origin (no CDN, so no third-party host and nothing to pin with
// subresource integrity), with the MCP setup beside it.
//
// Scalar inserts its stylesheet as <style> elements at run time. It gives the main one the
// nonce of <meta property="csp-nonce">, and docs.client.js hands the same nonce to the few
// others, so style elements need one per-response nonce, not 'unsafe-inline'. Scalar's
// highlighted code samples are HTML strings carrying style="" attributes (line-number widths),
// which no nonce can cover: this page alone allows inline style attributes. Scripts stay
// 'self' only, and the page shows nothing but our own OpenAPI document.
import type { Context } from "hono";
import scalarBundle from "../../../node_modules/@scalar/api-reference/dist/browser/standalone.js";
import { sessionAccount } from "../../auth/session.ts";
import type { AppEnv } from "../../context.ts";
import docsScript from "../../pages/assets/docs.client.js";
import docsStyles from "../../pages/assets/docs.css";
import { CSS_TYPE, JS_TYPE, staticAsset } from "../../pages/assets.ts";
import { COPY_JS } from "../../pages/copyable-code.tsx";
import { contentSecurityPolicy, Page } from "../../pages/layout.tsx";
import { McpSetup } from "../../pages/mcp-setup.tsx";
import { OPENAPI_PATH } from "../docs/index.ts";
import { GuidesNav } from "./guides.tsx";
import { publicOrigin } from "./origin.ts";

// The bundle ends by pointing at a source map we do not serve; drop that line.
const scalarSource = scalarBundle.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n");

export const SCALAR_JS = staticAsset("/assets/scalar-api-reference.js", JS_TYPE, scalarSource);
export const DOCS_JS = staticAsset("/assets/docs.js", JS_TYPE, docsScript);
export const DOCS_CSS = staticAsset("/assets/docs.css", CSS_TYPE, docsStyles);

function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}

export async function docsPage(c: Context<AppEnv>) {
  const nonce = newNonce();
  const signedIn = (await sessionAccount(c)) !== undefined;
  c.header(
    "Content-Security-Policy",
    contentSecurityPolicy({ styleNonce: nonce, styleAttributes: true }),
  );
  return c.html(
    <Page
      title="Stills API reference"
      description="The Stills API: endpoints, request and response shapes, errors, and MCP setup."
      path="/docs"
      styles={[DOCS_CSS.path]}
      scripts={[DOCS_JS.path, SCALAR_JS.path, COPY_JS.path]}
      head={<meta property="csp-nonce" content={nonce} />}
      skipTo="reference-start"
    >
      {/* Not <main>: Scalar renders its own main landmark inside the reference. */}
      <div class="docs">
        {/* The skip link's target. Not "api-reference": Scalar reads that element as a document. */}
        <div class="docs-reference" id="reference-start">
          {/* Empty: Scalar hydrates server-rendered markup when the mount point has children. */}
          <div id="reference" data-url={OPENAPI_PATH} />
          <noscript>
            <p class="wrap docs-loading">
              The interactive reference needs JavaScript. The same content is in the{" "}
              <a href={OPENAPI_PATH}>OpenAPI document</a>.
            </p>
          </noscript>
        </div>
        <aside class="docs-aside" aria-label="Guides, your key and MCP setup">
          <GuidesNav current="reference" />
          {signedIn && <TryWithYourKey />}
          <McpSetup origin={publicOrigin(c)} headingLevel={2} />
        </aside>
      </div>
    </Page>,
  );
}

/**
 * For a signed-in visitor: "Test Request" can send one of their keys. Stills keeps only keys'
 * hashes, so the visitor pastes the key they choose; docs.client.js keeps it in this tab's
 * sessionStorage and hands it to the reference as the bearer token (never to our server
 * except in the requests they send).
 */
function TryWithYourKey() {
  return (
    <form class="docs-key" id="docs-key-form">
      <h2>Test with your key</h2>
      <label for="docs-key">An API key of yours ("Test Request" sends it)</label>
      <input
        id="docs-key"
        name="key"
        type="password"
        autocomplete="off"
        spellcheck={false}
        placeholder="stills_live_…"
        pattern="stills_live_[A-Za-z0-9]{38}"
      />
      <p class="hint">
        Keys are shown once, when created on the <a href="/dashboard/keys">dashboard</a>. This one
        stays in this tab only.
      </p>
      <button type="submit" class="button">
        Use this key
      </button>{" "}
      <button type="button" class="button button-secondary" id="docs-key-forget">
        Forget it
      </button>
    </form>
  );
}
