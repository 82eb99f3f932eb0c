// The account's webhook signing secret (Standard Webhooks, `whsec_…`): hidden until asked for
// with a click (a POST, so no link or prefetch shows it), and rotated with another.
import { eventOrigin, recordAccountEvent } from "../../auth/account-events.ts";
import { liveAccount, rotateWebhookSecret } from "./data.ts";
import type { PageContext } from "./ui.tsx";
import { DashboardPage, Notice, renderPage } from "./ui.tsx";

function WebhooksPage(props: { email: string; secret?: string; rotated?: boolean }) {
  return (
    <DashboardPage
      title="Webhooks"
      section="/dashboard/webhooks"
      email={props.email}
      notice={
        props.rotated && (
          <Notice kind="success">
            A new secret is in use: webhooks are signed with it from now on. Update your receiver.
          </Notice>
        )
      }
    >
      <section aria-labelledby="secret-title" class="dashboard-section">
        <h2 id="secret-title">Signing secret</h2>
        <p>
          Jobs created with a <code>webhook_url</code> send <code>job.completed</code> or{" "}
          <code>job.failed</code> there, signed with this secret as{" "}
          <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> describes (headers{" "}
          <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>
          ). Check the signature before trusting a delivery.
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
      <section aria-labelledby="rotate-title" class="dashboard-section">
        <h2 id="rotate-title">Rotate</h2>
        <p>
          A new secret replaces this one at once: deliveries after that are signed only with the new
          one. Rotate when the secret may have leaked.
        </p>
        <form
          method="post"
          action="/dashboard/webhooks/rotate"
          data-confirm="Replace the signing secret? Receivers that check the old one will refuse new deliveries until they are updated."
        >
          <button type="submit" class="button-danger">
            Rotate the secret
          </button>
        </form>
      </section>
    </DashboardPage>
  );
}

export function webhooksPage(c: PageContext) {
  return renderPage(c, <WebhooksPage email={c.get("account").email} />);
}

export async function revealSigningSecret(c: PageContext) {
  const account = await liveAccount(c.get("db"), c.get("account").id);
  await recordAccountEvent(c.env, account.id, "webhook_secret_revealed", eventOrigin(c));
  return renderPage(c, <WebhooksPage email={account.email} secret={account.webhookSecret} />);
}

export async function rotateSigningSecret(c: PageContext) {
  const account = c.get("account");
  const secret = await rotateWebhookSecret(c.get("db"), account.id);
  await recordAccountEvent(c.env, account.id, "webhook_secret_rotated", eventOrigin(c));
  return renderPage(c, <WebhooksPage email={account.email} secret={secret} rotated />);
}
