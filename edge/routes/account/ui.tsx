// The frame of the sign-in and dashboard pages: the shared layout with the dashboard's own
// stylesheet and script, the dashboard's navigation, and the few formatting helpers they share.
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { AppEnv } from "../../context.ts";
import { CSS_TYPE, JS_TYPE, staticAsset } from "../../pages/assets.ts";
import { contentSecurityPolicy, Page } from "../../pages/layout.tsx";
import { LocalTime } from "../../pages/local-time.tsx";
import { baseUrl } from "../../request.ts";
import dashboardScript from "./assets/dashboard.client.js";
import dashboardCss from "./assets/dashboard.css";

export const DASHBOARD_CSS = staticAsset("/assets/dashboard.css", CSS_TYPE, dashboardCss);
export const DASHBOARD_JS = staticAsset("/assets/dashboard.js", JS_TYPE, dashboardScript);

/** What every account page handler gets: the request with its session account. */
export type PageContext = Context<AppEnv>;

/**
 * Answers with a whole HTML page. Pages of an account are never cached (they show keys and
 * secrets). Frame images are signed URLs on PUBLIC_BASE_URL: when that is another origin than
 * the page's, the policy names it for images, and nothing else widens.
 */
export async function renderPage(
  c: Context<AppEnv>,
  page: ReturnType<typeof Page>,
  status: 200 | 400 | 404 | 429 | 503 = 200,
) {
  c.header("Cache-Control", "no-store");
  const filesOrigin = new URL(baseUrl(c)).origin;
  if (filesOrigin !== new URL(c.req.url).origin) {
    c.header("Content-Security-Policy", contentSecurityPolicy({ imageOrigins: [filesOrigin] }));
  }
  return c.html(page, status);
}

function SignOutForm() {
  return (
    <form method="post" action="/sign-out" class="sign-out-form">
      <button type="submit" class="button-link">
        Sign out
      </button>
    </form>
  );
}

/** Pages outside the dashboard proper (sign-in, code): the site's frame, a narrow column. */
export function AccountPage(props: { title: string; children?: Child }) {
  return (
    <Page
      title={`${props.title} · Stills`}
      path="/sign-in"
      styles={[DASHBOARD_CSS.path]}
      scripts={[DASHBOARD_JS.path]}
    >
      <main id="main" class="wrap account-narrow">
        {props.children}
      </main>
    </Page>
  );
}

const SECTIONS = [
  { href: "/dashboard", label: "Overview" },
  { href: "/dashboard/jobs", label: "Jobs" },
  { href: "/dashboard/batches", label: "Batches" },
  { href: "/dashboard/usage", label: "Usage" },
  { href: "/dashboard/requests", label: "Requests" },
  { href: "/dashboard/keys", label: "API keys" },
  { href: "/dashboard/billing", label: "Plan & billing" },
  { href: "/dashboard/webhooks", label: "Webhooks" },
  { href: "/dashboard/activity", label: "Activity" },
] as const;

export type Section = (typeof SECTIONS)[number]["href"];

/** A dashboard page: who is signed in, the sections, and the page's own content. */
export function DashboardPage(props: {
  title: string;
  section: Section;
  email: string;
  notice?: Child;
  children?: Child;
}) {
  return (
    <Page
      title={`${props.title} · Stills dashboard`}
      path="/dashboard"
      styles={[DASHBOARD_CSS.path]}
      scripts={[DASHBOARD_JS.path]}
      headerActions={<SignOutForm />}
    >
      <main id="main" class="wrap dashboard">
        <div class="dashboard-head">
          <h1>{props.title}</h1>
          <p class="muted signed-in-as">
            Signed in as <strong>{props.email}</strong>
          </p>
        </div>
        <nav class="dashboard-nav" aria-label="Dashboard">
          <ul class="scroll-tabs">
            {SECTIONS.map((section) => (
              <li>
                <a
                  href={section.href}
                  aria-current={section.href === props.section ? "page" : undefined}
                >
                  {section.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        {props.notice}
        {props.children}
      </main>
    </Page>
  );
}

/** The 404 page of one job or batch: this account has none with that id; a link to the list. */
export function notFoundPage(c: PageContext, noun: "job" | "batch", list: Section) {
  const title = `${noun === "job" ? "Job" : "Batch"} not found`;
  const page = (
    <DashboardPage title={title} section={list} email={c.get("account").email}>
      <p>This account has no {noun} with that id.</p>
      <p>
        <a href={list}>All {noun}s</a>
      </p>
    </DashboardPage>
  );
  return renderPage(c, page, 404);
}

export function Notice(props: { kind: "success" | "error" | "info"; children?: Child }) {
  const role = props.kind === "error" ? "alert" : "status";
  const kindClass = props.kind === "info" ? "" : ` message-${props.kind}`;
  return (
    <div class={`message${kindClass}`} role={role}>
      {props.children}
    </div>
  );
}

/** A moment, in the visitor's zone once the page's script runs (UTC before, and on hover). */
export function When(props: { iso: string | null; empty?: string; dateOnly?: boolean }) {
  return <LocalTime iso={props.iso} empty={props.empty} dateOnly={props.dateOnly} />;
}

export function count(value: number): string {
  return value.toLocaleString("en-US");
}

/** +12 / −3 / 0 for ledger deltas, with a real minus sign. */
export function signed(value: number): string {
  if (value > 0) return `+${count(value)}`;
  if (value < 0) return `−${count(-value)}`;
  return "0";
}

/** Links to earlier and later pages of a list (keeping the list's own `query`, a search). */
export function Pager(props: {
  path: string;
  page: number;
  pageSize: number;
  total: number;
  query?: Record<string, string>;
}) {
  const pages = Math.max(1, Math.ceil(props.total / props.pageSize));
  if (pages <= 1) return null;
  const link = (page: number) => {
    const query = new URLSearchParams(props.query);
    if (page > 1) query.set("page", String(page));
    const search = query.toString();
    return search ? `${props.path}?${search}` : props.path;
  };
  return (
    <nav class="pager" aria-label="Pages">
      {props.page > 1 ? <a href={link(props.page - 1)}>← Newer</a> : <span />}
      <span class="muted">
        Page {props.page} of {pages}
      </span>
      {props.page < pages ? <a href={link(props.page + 1)}>Older →</a> : <span />}
    </nav>
  );
}

/** `?page=` as a whole number from 1, whatever was sent. */
export function pageNumber(raw: string | undefined): number {
  const page = Number.parseInt(raw ?? "1", 10);
  return Number.isFinite(page) && page >= 1 && page <= 100_000 ? page : 1;
}
