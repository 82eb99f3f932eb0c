// The webhook delivery log on the dashboard (decision 0210): the list on the webhooks page, a
// delivery's own page with each attempt and the body sent, and the Resend and test-event forms.
// Both forms only queue a message: the webhook consumer signs and sends it as it does a job's.
import type { WebhookDelivery } from "../../../schema/webhook-deliveries.ts";
import { ApiError } from "../../errors.ts";
import { formOf } from "../../pages/forms.ts";
import { readWebhookDelivery, resendDelivery, sendTestEvent } from "../../webhook-deliveries.ts";
import type { PageContext } from "./ui.tsx";
import { count, DashboardPage, Notice, renderPage, When } from "./ui.tsx";

const EVENT_LABELS: Record<WebhookDelivery["type"], string> = {
  "job.completed": "job.completed",
  "job.failed": "job.failed",
  "batch.completed": "batch.completed",
  "webhook.test": "webhook.test",
};

export function deliveryPath(id: string): string {
  return `/dashboard/webhooks/deliveries/${encodeURIComponent(id)}`;
}

/** The last attempt's outcome as a badge: the status code, or why there was none. */
function Outcome(props: { status: number | null; error: string | null; pending?: boolean }) {
  if (props.pending) return <span class="status status-queued">Queued</span>;
  if (props.status !== null) {
    const ok = props.status >= 200 && props.status < 300;
    return (
      <span class={`status ${ok ? "status-completed" : "status-failed"}`}>{props.status}</span>
    );
  }
  return <span class="status status-failed">{props.error ? "No answer" : "—"}</span>;
}

function JobLink(props: { jobId: string | null; type: string }) {
  if (!props.jobId) {
    return <span class="muted">{props.type === "webhook.test" ? "Test event" : "A batch"}</span>;
  }
  return (
    <a href={`/dashboard/jobs/${props.jobId}`} class="mono-id">
      {props.jobId.slice(0, 8)}
      <span class="sr-only"> (job {props.jobId})</span>
    </a>
  );
}

export function DeliveryTable(props: { deliveries: WebhookDelivery[] }) {
  if (props.deliveries.length === 0) {
    return (
      <div class="empty-state">
        <p>
          <strong>No deliveries yet.</strong> Jobs created with a <code>webhook_url</code> show
          their events here for 30 days, each with every attempt. Send a test event above to try
          your endpoint now.
        </p>
      </div>
    );
  }
  return (
    <div class="table-scroll">
      <table class="stack-table deliveries-table">
        <caption class="sr-only">Webhook deliveries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Job</th>
            <th scope="col" class="num">
              Attempts
            </th>
            <th scope="col">Last status</th>
            <th scope="col">When</th>
          </tr>
        </thead>
        <tbody>
          {props.deliveries.map((delivery) => (
            <tr>
              <td data-label="Event">
                <a href={deliveryPath(delivery.id)}>
                  {EVENT_LABELS[delivery.type]}
                  <span class="sr-only"> delivery {delivery.id}</span>
                </a>
              </td>
              <td data-label="Job">
                <JobLink jobId={delivery.job_id} type={delivery.type} />
              </td>
              <td data-label="Attempts" class="num">
                {count(delivery.attempts_count)}
              </td>
              <td data-label="Last status">
                <Outcome
                  status={delivery.last_status_code}
                  error={delivery.attempts.at(-1)?.error ?? null}
                  pending={delivery.state === "pending"}
                />
              </td>
              <td data-label="When">
                <When iso={delivery.attempts.at(-1)?.attempted_at ?? delivery.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const STATE_LABELS: Record<WebhookDelivery["state"], string> = {
  pending: "Queued, not sent yet",
  delivered: "Delivered",
  failing: "Not delivered",
};

/** The body as sent, indented for reading when it is whole JSON. */
function readableBody(delivery: WebhookDelivery): string {
  if (delivery.body === null) return "";
  if (delivery.body_truncated) return delivery.body;
  try {
    return JSON.stringify(JSON.parse(delivery.body), null, 2);
  } catch {
    return delivery.body;
  }
}

function DeliveryDetails(props: { delivery: WebhookDelivery }) {
  const { delivery } = props;
  return (
    <>
      <p>
        <a href="/dashboard/webhooks">← Webhooks</a>
      </p>
      <dl class="facts">
        <div>
          <dt>Event</dt>
          <dd>
            <code>{delivery.type}</code>
          </dd>
        </div>
        <div>
          <dt>Job</dt>
          <dd>
            <JobLink jobId={delivery.job_id} type={delivery.type} />
          </dd>
        </div>
        <div>
          <dt>State</dt>
          <dd>{STATE_LABELS[delivery.state]}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <When iso={delivery.created_at} />
          </dd>
        </div>
        <div class="fact-wide">
          <dt>Sent to</dt>
          <dd class="break">{delivery.url}</dd>
        </div>
        <div class="fact-wide">
          <dt>webhook-id</dt>
          <dd class="break">
            <code>{delivery.id}</code>
          </dd>
        </div>
      </dl>
      <form method="post" action={`${deliveryPath(delivery.id)}/resend`} class="resend-form">
        <button type="submit" class="button-secondary">
          Resend<span class="sr-only"> this delivery</span>
        </button>
        <p class="hint">
          One more attempt with the same <code>webhook-id</code>, signed now. A receiver that
          already has the event can drop it by that id.
        </p>
      </form>
      <section aria-labelledby="attempts-title" class="dashboard-section">
        <h2 id="attempts-title">Attempts</h2>
        <AttemptTable delivery={delivery} />
      </section>
      <section aria-labelledby="body-title" class="dashboard-section">
        <h2 id="body-title">Body sent</h2>
        {delivery.body === null ? (
          <p class="muted">Nothing was sent yet.</p>
        ) : (
          <>
            {delivery.body_truncated && (
              <p class="hint">The body was long: only its start is kept here.</p>
            )}
            <pre class="delivery-body" tabindex={0}>
              <code>{readableBody(delivery)}</code>
            </pre>
          </>
        )}
      </section>
    </>
  );
}

const TRIGGER_LABELS = { automatic: "Automatic", resend: "Resend", test: "Test" } as const;

function AttemptTable(props: { delivery: WebhookDelivery }) {
  const { attempts, attempts_count } = props.delivery;
  if (attempts.length === 0) {
    return <p class="muted">No attempt yet: the queue sends it within a few seconds.</p>;
  }
  return (
    <>
      {attempts_count > attempts.length && (
        <p class="hint">
          The last {attempts.length} of {attempts_count} attempts.
        </p>
      )}
      <div class="table-scroll">
        <table class="stack-table attempts-table">
          <caption class="sr-only">Attempts, oldest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Response</th>
              <th scope="col" class="num">
                Latency
              </th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {attempts.map((attempt) => (
              <tr>
                <td data-label="When">
                  <When iso={attempt.attempted_at} />
                </td>
                <td data-label="Response">
                  <Outcome status={attempt.status_code} error={attempt.error} />
                  {attempt.error && <span class="hint break"> {attempt.error}</span>}
                </td>
                <td data-label="Latency" class="num">
                  {count(attempt.latency_ms)} ms
                </td>
                <td data-label="Why">{TRIGGER_LABELS[attempt.trigger]}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

const SENT_NOTICES: Record<string, string> = {
  test: "A test event is queued: its attempt shows here within a few seconds (reload).",
  resend: "Queued for one more attempt: it shows here within a few seconds (reload).",
};

export async function deliveryPage(c: PageContext) {
  const account = c.get("account");
  const delivery = await readWebhookDelivery(c.env, account.id, c.req.param("id") ?? "");
  const sent = SENT_NOTICES[c.req.query("sent") ?? ""];
  const page = (
    <DashboardPage
      title="Webhook delivery"
      section="/dashboard/webhooks"
      email={account.email}
      notice={sent && <Notice kind="success">{sent}</Notice>}
    >
      {delivery ? (
        <DeliveryDetails delivery={delivery} />
      ) : (
        <p>
          No such delivery: it may be older than 30 days. <a href="/dashboard/webhooks">Back</a>
        </p>
      )}
    </DashboardPage>
  );
  return renderPage(c, page, delivery ? 200 : 404);
}

export async function submitResend(c: PageContext) {
  const id = c.req.param("id") ?? "";
  const queued = await resendDelivery(c.env, c.get("account").id, id);
  if (!queued) return deliveryPage(c);
  return c.redirect(`${deliveryPath(id)}?sent=resend`, 303);
}

/** The test event's form: queued and shown, or the webhooks page again saying what is wrong. */
export async function submitTestEvent(
  c: PageContext,
  showError: (message: string, url: string) => Promise<Response>,
) {
  const form = await formOf(c);
  const url = typeof form.url === "string" ? form.url.trim() : "";
  if (!url) return showError("Enter the URL of your endpoint.", url);
  try {
    const id = await sendTestEvent(c.env, c.get("account").id, url);
    return c.redirect(`${deliveryPath(id)}?sent=test`, 303);
  } catch (err) {
    if (err instanceof ApiError) return showError(err.userMessage, url);
    throw err;
  }
}
