// The landing page: what Stills does, the live demo (landing.client.js drives it through the
// public POST /v1/demo and GET /v1/demo/{id}, exactly as any other client would), a curl
// sample, the pricing table and the MCP setup.
import type { Context } from "hono";
import type { AppEnv } from "../../context.ts";
import landingScript from "../../pages/assets/landing.client.js";
import landingStyles from "../../pages/assets/landing.css";
import { CSS_TYPE, JS_TYPE, staticAsset } from "../../pages/assets.ts";
import { COPY_JS, CopyableCode } from "../../pages/copyable-code.tsx";
import { contentSecurityPolicy, Page } from "../../pages/layout.tsx";
import { McpSetup } from "../../pages/mcp-setup.tsx";
import { CATALOG } from "../pricing/index.ts";
import { publicOrigin } from "./origin.ts";
import { PricingTable } from "./pricing-table.tsx";

export const LANDING_JS = staticAsset("/assets/landing.js", JS_TYPE, landingScript);
export const LANDING_CSS = staticAsset("/assets/landing.css", CSS_TYPE, landingStyles);

const SOURCES = "YouTube, TikTok, Instagram, Facebook, X, Vimeo or Google Drive";

export function curlSample(origin: string): string {
  return [
    `curl -X POST "${origin}/v1/jobs?wait=true" \\`,
    `  -H "Authorization: Bearer YOUR_API_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '{"url": "https://example.com/talk.mp4", "count": 6}'`,
  ].join("\n");
}

function DemoSlots(props: { count: number }) {
  return (
    <ol id="demo-frames" class="frames" aria-label="Preview frames">
      {Array.from({ length: props.count }, (_, i) => (
        <li class="frame-slot">
          <figure>
            <div class="frame-box">
              <span class="frame-placeholder">{i + 1}</span>
            </div>
            <figcaption>
              <span class="frame-label">Frame {i + 1}</span>
              <span class="frame-time">–</span>
            </figcaption>
          </figure>
        </li>
      ))}
    </ol>
  );
}

function Demo() {
  const demo = CATALOG.demo;
  return (
    <section id="demo" class="section" aria-labelledby="demo-heading">
      <div class="wrap">
        <h2 id="demo-heading">Try it: paste a video link</h2>
        <p>
          A free preview, no sign-up: {demo.frames} evenly spaced frames, at most {demo.max_width}{" "}
          px wide, from the first {demo.max_video_minutes} minutes of the video.
        </p>
        <form id="demo-form" class="demo-form" novalidate>
          <label for="demo-url">Video link</label>
          <div class="demo-row">
            <input
              id="demo-url"
              name="url"
              type="url"
              inputmode="url"
              autocomplete="url"
              spellcheck={false}
              placeholder="https://www.youtube.com/watch?v=…"
              aria-describedby="demo-url-hint demo-error"
              required
            />
            <button id="demo-submit" type="submit">
              Get {demo.frames} frames
            </button>
          </div>
          <p id="demo-url-hint" class="hint">
            A public {SOURCES} video, or a direct link to an .mp4, .mov or .webm file.
          </p>
        </form>
        <div class="demo-feedback">
          {/* The status text and the meter sit in columns of their own, so neither moves the other. */}
          <div class="demo-progress-row">
            <p id="demo-status" role="status" />
            <span class="demo-meter">
              <progress id="demo-progress" aria-label="Preview in progress" hidden />
              <span id="demo-elapsed" class="muted" aria-hidden="true" />
            </span>
          </div>
          <p id="demo-error" class="message message-error" role="alert" />
        </div>
        <DemoSlots count={demo.frames} />
        <noscript>
          <p class="message">
            The demo needs JavaScript. Without it, call <code>POST /v1/demo</code> yourself: see the{" "}
            <a href="/docs">API reference</a>.
          </p>
        </noscript>
      </div>
    </section>
  );
}

function Start(props: { origin: string }) {
  return (
    <section id="start" class="section" aria-labelledby="start-heading">
      <div class="wrap split">
        <div>
          <h2 id="start-heading">Call it from your code</h2>
          <p>
            <a href="/sign-in">Sign in with your e-mail</a> to get an API key and 60 free credits a
            month, then replace <code>YOUR_API_KEY</code> below with it. The answer is a job whose{" "}
            <code>frames</code> each carry a <code>timestamp</code> in seconds and a signed{" "}
            <code>url</code>.
          </p>
          <p>
            Every option (a frame every N seconds, N evenly spaced, exact timestamps, a range,
            format, resolution, ZIP, webhooks) is in the <a href="/docs">API reference</a>.
          </p>
        </div>
        <div>
          <CopyableCode id="curl-sample" label="curl command">
            {curlSample(props.origin)}
          </CopyableCode>
        </div>
      </div>
    </section>
  );
}

export function landingPage(c: Context<AppEnv>) {
  const origin = publicOrigin(c);
  // Frame URLs are signed for PUBLIC_BASE_URL, which may be another host than this page's.
  c.header("Content-Security-Policy", contentSecurityPolicy({ imageOrigins: [origin] }));
  return c.html(
    <Page
      title="Stills: still frames from any video link"
      description="Turn a video link into still frames, each with its exact timestamp."
      path="/"
      styles={[LANDING_CSS.path]}
      scripts={[LANDING_JS.path, COPY_JS.path]}
    >
      <main id="main">
        <section class="hero" aria-labelledby="hero-heading">
          <div class="wrap">
            <h1 id="hero-heading">Still frames from any video link</h1>
            <p class="lead">
              Stills turns a {SOURCES} link, or a direct video file, into JPG, PNG or WebP frames,
              each with its exact timestamp, through one API call.
            </p>
            <p class="hero-actions">
              <a class="button" href="#demo">
                Try the demo
              </a>
              <a class="button button-secondary" href="/docs">
                API reference
              </a>
              <a href="/sign-in">Get a free API key</a>
            </p>
          </div>
        </section>
        <Demo />
        <Start origin={origin} />
        <section id="pricing" class="section" aria-labelledby="pricing-heading">
          <div class="wrap">
            <h2 id="pricing-heading">Pricing</h2>
            <p>
              Pay in credits; the demo is free. Plans renew monthly and reset their credits. The
              same numbers, as JSON, are at <a href="/v1/pricing">/v1/pricing</a>.
            </p>
            <PricingTable />
          </div>
        </section>
        <div class="section">
          <div class="wrap">
            <div class="narrow">
              <McpSetup origin={origin} />
            </div>
          </div>
        </div>
      </main>
    </Page>,
  );
}
