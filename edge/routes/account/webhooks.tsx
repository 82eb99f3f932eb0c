// The account's webhooks: the signing secret (Standard Webhooks, `whsec_…`), hidden until asked
// for with a click (a POST, so no link or prefetch shows it) and rotated with another; a test
// event; and the delivery log (webhook-deliveries.tsx). After a rotation the replaced secret
// signs beside the new one for a day (decision 0211), and the page says until when.

import type { WebhookDelivery } from "../../../schema/webhook-deliveries.ts";
import { PREVIOUS_SECRET_HOURS } from "../../../schema/webhook-deliveries.ts";
import { eventOrigin, recordAccountEvent } from "../../auth/account-events.ts";
import { lastDeliveryUrl } from "../../storage/webhooks.ts";
import { listWebhookDeliveries, rotateWebhookSecret } from "../../webhook-deliveries.ts";
import { previousSecretActive } from "../../webhooks.ts";
import { liveAccount } from "./data.ts";
import type { PageContext } from "./ui.tsx";
import { DashboardPage, Notice, Pager, pageNumber, renderPage, When } from "./ui.tsx";
import { DeliveryTable, submitTestEvent } from "./webhook-deliveries.tsx";

const DELIVERIES_PER_PAGE = 20;

interface WebhooksView {
  email: string;
  secret?: string;
  rotated?: boolean;
  /** While the replaced secret still signs: until when. */
  previousUntil: string | null;
  deliveries: WebhookDelivery[];
  total: number;
  page: number;
  testUrl: string;
  testError?: string;
}

function SecretSection(props: { secret?: string }) {
  return (
    <section aria-labelledby="secret-title" class="dashboard-section">
      <h2 id="secret-title">Signing secret</h2>
      <p>
        Jobs created with a <code>webhook_url</code> send <code>job.completed</code> or{" "}
        <code>job.failed</code> there, signed with this secret as{" "}
        <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> describes (headers{" "}
        <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>).
        Check the signature before trusting a delivery.
      </p>
      {props.secret ? (
        <div class="secret-row">
          <label for="webhook-secret" class="sr-only">
            Webhook signing secret
          </label>
          <input
            id="webhook-secret"
            class="secret-value"
            type="text"
            readonly
            value={props.secret}
            spellcheck={false}
            autocomplete="off"
          />
          <button type="button" class="button-secondary" data-copy-from="webhook-secret" hidden>
            Copy<span class="sr-only"> the signing secret</span>
          </button>
          <span class="copy-status" role="status" />
        </div>
      ) : (
        <form method="post" action="/dashboard/webhooks/reveal" class="secret-row">
          <span class="secret-value secret-hidden" aria-hidden="true">
            whsec_••••••••••••••••••••••••••••••••
          </span>
          <button type="submit" class="button-secondary">
            Reveal<span class="sr-only"> the signing secret</span>
          </button>
        </form>
      )}
    </section>
  );
}

function TestSection(props: { url: string; error?: string }) {
  return (
    <section aria-labelledby="test-title" class="dashboard-section">
      <h2 id="test-title">Send a test event</h2>
      <p>
        A <code>webhook.test</code> event, signed and sent exactly as a job's events are, so you can
        check your endpoint and its signature check without running a job.
      </p>
      {props.error && (
        <p class="message message-error" id="test-url-error" role="alert">
          {props.error}
        </p>
      )}
      <form method="post" action="/dashboard/webhooks/test" class="inline-form" novalidate>
        <div class="field">
          <label for="test-url">
            Endpoint URL<span class="hint">An https:// address that accepts POST</span>
          </label>
          <input
            id="test-url"
            name="url"
            type="url"
            required
            inputmode="url"
            placeholder="https://example.com/webhooks/stills"
            value={props.url}
            autocomplete="url"
            aria-invalid={props.error ? "true" : undefined}
            aria-describedby={props.error ? "test-url-error" : undefined}
          />
        </div>
        <button type="submit">Send a test event</button>
      </form>
    </section>
  );
}

function WebhooksPage(props: WebhooksView) {
  return (
    <DashboardPage
      title="Webhooks"
      section="/dashboard/webhooks"
      email={props.email}
      notice={
        props.rotated && (
          <Notice kind="success">
            A new secret is in use. Deliveries carry the old secret's signature too until{" "}
            <When iso={props.previousUntil} />: update your receiver before then.
          </Notice>
        )
      }
    >
      <SecretSection secret={props.secret} />
      {props.previousUntil && !props.rotated && (
        <Notice kind="info">
          The secret was rotated: deliveries also carry a signature with the previous secret until{" "}
          <When iso={props.previousUntil} />.
        </Notice>
      )}
      <TestSection url={props.testUrl} error={props.testError} />
      <section aria-labelledby="deliveries-title" class="dashboard-section">
        <h2 id="deliveries-title">Recent deliveries</h2>
        <p class="muted">
          The last 30 days, newest first. Open one to see each attempt and the body sent, and to
          resend it. The API lists them too: <code>GET /v1/webhook-deliveries</code>.
        </p>
        <DeliveryTable deliveries={props.deliveries} />
        <Pager
          path="/dashboard/webhooks"
          page={props.page}
          pageSize={DELIVERIES_PER_PAGE}
          total={props.total}
        />
      </section>
      <section aria-labelledby="rotate-title" class="dashboard-section">
        <h2 id="rotate-title">Rotate</h2>
        <p>
          A new secret replaces this one. For the next {PREVIOUS_SECRET_HOURS} hours deliveries
          carry two signatures, the new secret's and this one's, so receivers keep working while you
          update them. Rotate when the secret may have leaked.
        </p>
        <form
          method="post"
          action="/dashboard/webhooks/rotate"
          data-confirm={`Replace the signing secret? The old one keeps signing beside the new one for ${PREVIOUS_SECRET_HOURS} hours, then only the new one does.`}
        >
          <button type="submit" class="button-danger">
            Rotate the secret
          </button>
        </form>
      </section>
    </DashboardPage>
  );
}

/** Everything the page shows but the secret itself. */
async function view(c: PageContext, extra: Partial<WebhooksView> = {}): Promise<WebhooksView> {
  const account = await liveAccount(c.get("db"), c.get("account").id);
  const page = pageNumber(c.req.query("page"));
  const list = await listWebhookDeliveries(c.env, account.id, {
    limit: DELIVERIES_PER_PAGE,
    skip: (page - 1) * DELIVERIES_PER_PAGE,
  });
  return {
    email: account.email,
    previousUntil: previousSecretActive(account, Date.now())
      ? account.previousWebhookSecretUntil
      : null,
    deliveries: list.data,
    total: list.total,
    page,
    testUrl: (await lastDeliveryUrl(c.env.DB, account.id)) ?? "",
    ...extra,
  };
}

export async function webhooksPage(c: PageContext) {
  return renderPage(c, <WebhooksPage {...(await view(c))} />);
}

export async function revealSigningSecret(c: PageContext) {
  const account = await liveAccount(c.get("db"), c.get("account").id);
  await recordAccountEvent(c.env, account.id, "webhook_secret_revealed", eventOrigin(c));
  return renderPage(c, <WebhooksPage {...(await view(c, { secret: account.webhookSecret }))} />);
}

export async function rotateSigningSecret(c: PageContext) {
  const account = c.get("account");
  const { secret, previousUntil } = await rotateWebhookSecret(c.env, account.id);
  await recordAccountEvent(c.env, account.id, "webhook_secret_rotated", eventOrigin(c));
  const shown = await view(c, { secret, rotated: true, previousUntil });
  return renderPage(c, <WebhooksPage {...shown} />);
}

export function submitWebhookTest(c: PageContext) {
  return submitTestEvent(c, async (message, url) =>
    renderPage(c, <WebhooksPage {...(await view(c, { testUrl: url, testError: message }))} />, 400),
  );
}
