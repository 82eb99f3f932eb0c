// The landing page: what Stills does, the live demo (landing.client.js drives it through the
// public POST /v1/demo and GET /v1/demo/{id}, exactly as any other client would), a curl
// sample, the pricing table and the MCP setup.
import type { Context } from "hono";
import type { DemoAllowance } from "../../../schema/api.ts";
import { CATALOG } from "../../../schema/plans.ts";
import { sampleUrl } from "../../../schema/samples.ts";
import type { AppEnv } from "../../context.ts";
import { demoAllowanceLeft } from "../../jobs/demo-allowance.ts";
import landingScript from "../../pages/assets/landing.client.js";
import landingStyles from "../../pages/assets/landing.css";
import { CSS_TYPE, JS_TYPE, staticAsset } from "../../pages/assets.ts";
import { CodeSamples, jobSamples } from "../../pages/code-samples.tsx";
import { COPY_JS } from "../../pages/copyable-code.tsx";
import { contentSecurityPolicy, Page } from "../../pages/layout.tsx";
import { McpSetup } from "../../pages/mcp-setup.tsx";
import { publicOrigin } from "./origin.ts";
import { PricingTable } from "./pricing-table.tsx";

export const LANDING_JS = staticAsset("/assets/landing.js", JS_TYPE, landingScript);
export const LANDING_CSS = staticAsset("/assets/landing.css", CSS_TYPE, landingStyles);

const SOURCES = "YouTube, TikTok, Instagram, Facebook, X, Vimeo or Google Drive";

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

/** "3 of 5 free previews left today": the page says it at once; the script keeps it current. */
function allowanceText(allowance: DemoAllowance): string {
  return `${allowance.remaining} of ${allowance.limit} free previews left today.`;
}

function Demo(props: { origin: string; allowance: DemoAllowance }) {
  const demo = CATALOG.demo;
  const sample = sampleUrl(props.origin);
  // The API call the preview stands for, shown after a success with the visitor's own link.
  const apiBody = { url: sample, count: demo.frames, max_width: demo.max_width };
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
              aria-describedby="demo-url-hint demo-allowance demo-error"
              required
            />
            <button id="demo-submit" type="submit">
              Get {demo.frames} frames
            </button>
          </div>
          <p id="demo-url-hint" class="hint">
            A public {SOURCES} video, or a direct link to an .mp4, .mov or .webm file.
          </p>
          <p class="demo-sample">
            No video at hand?{" "}
            <button
              id="demo-sample"
              type="button"
              class="button-secondary"
              data-url={sample}
              aria-describedby="demo-sample-about"
            >
              Try a sample video
            </button>{" "}
            <span id="demo-sample-about" class="hint">
              A 30-second clip in five scenes, served by Stills itself.
            </span>
          </p>
          <p
            id="demo-allowance"
            class="hint"
            data-limit={props.allowance.limit}
            data-remaining={props.allowance.remaining}
          >
            {allowanceText(props.allowance)} A preview that fails doesn't count.
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
        <p class="hint">Select a frame to open it large.</p>
        <dialog id="demo-viewer" class="frame-viewer" aria-labelledby="demo-viewer-title">
          <div class="frame-viewer-bar">
            <h3 id="demo-viewer-title">Frame</h3>
            <form method="dialog">
              <button type="submit" class="button-secondary">
                Close
              </button>
            </form>
          </div>
          <img id="demo-viewer-image" alt="" />
          <p>
            <a id="demo-viewer-link" href="#demo" target="_blank" rel="noopener">
              Open the image in a new tab
            </a>
          </p>
        </dialog>
        {/* On the page from the start, so a success changes its text but moves nothing. */}
        <div id="demo-next" class="demo-next">
          <h3 id="demo-next-heading">The same through the API</h3>
          <p>
            With an API key, this call makes what the preview makes ({demo.frames} evenly spaced
            frames, at most {demo.max_width} px wide) and waits for the job. It asks for the sample
            video until a preview succeeds, then for the link you tried.{" "}
            <a href="/sign-in">Get a free API key</a>: 60 credits a month, no card needed.
          </p>
          <div data-demo-api-call data-sample-url={sample}>
            <CodeSamples
              id="demo-api"
              label="API call"
              samples={jobSamples({ origin: props.origin, body: apiBody })}
            />
          </div>
        </div>
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
            month, then put it in the environment variable <code>STILLS_API_KEY</code> and run one
            of these: each asks for six frames of our sample video. The answer is a job whose{" "}
            <code>frames</code> each carry a <code>timestamp</code> in seconds and a signed{" "}
            <code>url</code>.
          </p>
          <p>
            Every option (a frame every N seconds, N evenly spaced, exact timestamps, a range,
            format, resolution, ZIP, webhooks) is in the <a href="/docs">API reference</a>.
          </p>
        </div>
        <div>
          <CodeSamples
            id="start-sample"
            label="First call"
            samples={jobSamples({ origin: props.origin })}
          />
        </div>
      </div>
    </section>
  );
}

export async function landingPage(c: Context<AppEnv>) {
  const origin = publicOrigin(c);
  // The visitor's own allowance: the page is never cached (no Cache-Control is sent for it).
  const allowance = await demoAllowanceLeft(c.env, c.get("clientIp"));
  c.header("Cache-Control", "private, no-cache");
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
        <Demo origin={origin} allowance={allowance} />
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
