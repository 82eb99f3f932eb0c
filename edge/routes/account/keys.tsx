// API keys: create one with a name, list them by hint, revoke one (refused by the API within
// the rate limiter's 2-second lease; see edge/middleware/auth.ts). Creating answers with a
// redirect to the list, which shows the new key once, from a one-time store (key-reveals.ts),
// with ready-to-run samples carrying it: reloading that page creates nothing and shows nothing.

import { firstProblem, KEY_NAME_MAX, KeyNameFormSchema } from "../../../schema/sign-in.ts";
import { eventOrigin } from "../../auth/account-events.ts";
import { createKey, MAX_ACTIVE_KEYS, revokeKey } from "../../auth/keys.ts";
import { CodeSamples, jobSamples } from "../../pages/code-samples.tsx";
import { formOf } from "../../pages/forms.ts";
import { baseUrl } from "../../request.ts";
import { activeKeys, type KeyListRow } from "../../storage/accounts.ts";
import { keepForOneShowing, takeForShowing } from "./key-reveals.ts";
import type { PageContext } from "./ui.tsx";
import { DashboardPage, Notice, renderPage, When } from "./ui.tsx";

const NOTICES: Record<string, { kind: "success" | "error" | "info"; text: string }> = {
  revoked: {
    kind: "success",
    text: "The key is revoked: requests with it are refused everywhere within two seconds.",
  },
  "not-found": { kind: "error", text: "That key was already revoked or is not one of yours." },
  "shown-once": {
    kind: "info",
    text: "A new key is shown once, right after it is created, and never again. If you did not copy it, revoke it below and create another.",
  },
};

/** Where the creating POST sends the browser: the list, with the token of the one showing. */
const SHOW_PARAM = "new";

function NewKey(props: { keyValue: string; name: string; origin: string }) {
  return (
    <section class="new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title">Your new key “{props.name}”</h2>
      <p>
        <strong>Copy it now: this is the only time it is shown.</strong> We keep only a hash of it,
        so nobody can show it to you again, and reloading this page will not show it either. If you
        lose it, revoke it and create another.
      </p>
      <div class="secret-row">
        <label for="new-key-value" class="sr-only">
          New API key
        </label>
        <input
          id="new-key-value"
          class="secret-value"
          type="text"
          readonly
          value={props.keyValue}
          spellcheck={false}
          autocomplete="off"
        />
        <button type="button" class="button-secondary" data-copy-from="new-key-value" hidden>
          Copy<span class="sr-only"> the new key</span>
        </button>
        <span class="copy-status" role="status" />
      </div>
      <p class="hint">
        Send it as <code>Authorization: Bearer …</code> or <code>X-API-Key: …</code>. Keep it in an
        environment variable, <code>STILLS_API_KEY</code>, as every example in our docs does.
      </p>
      <h3 class="new-key-samples-title">Try it now</h3>
      <p>
        Six frames of our sample video, with your key filled in (each call spends about one credit):
      </p>
      <CodeSamples
        id="new-key-sample"
        label="Sample with your key"
        samples={jobSamples({ origin: props.origin, apiKey: props.keyValue })}
      />
    </section>
  );
}

function KeyList(props: { keys: KeyListRow[] }) {
  if (props.keys.length === 0) {
    return (
      <div class="empty-state">
        <p>
          <strong>No keys yet.</strong> Create one above to call the API.
        </p>
      </div>
    );
  }
  return (
    <div class="table-scroll">
      <table class="stack-table">
        <caption class="sr-only">Your API keys</caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Name</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span class="sr-only">Revoke</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((key) => (
            <tr>
              <td class="key-hint">
                <code>{key.hint}</code>
              </td>
              <td class="break" data-label="Name">
                {key.name || <span class="muted">(no name)</span>}
              </td>
              <td data-label="Created">
                <When iso={key.createdAt} />
              </td>
              <td data-label="Last used">
                <When iso={key.lastUsedAt} empty="never" />
              </td>
              <td class="row-action">
                <form
                  method="post"
                  action={`/dashboard/keys/${key.id}/revoke`}
                  data-confirm={`Revoke the key ${key.hint}? Requests with it will be refused within two seconds.`}
                >
                  <button type="submit" class="button-danger button-small">
                    Revoke<span class="sr-only"> {key.hint}</span>
                  </button>
                </form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function KeysPage(props: {
  email: string;
  keys: KeyListRow[];
  created?: { keyValue: string; name: string; origin: string };
  notice?: { kind: "success" | "error" | "info"; text: string };
  error?: string;
  name?: string;
}) {
  const atCap = props.keys.length >= MAX_ACTIVE_KEYS;
  return (
    <DashboardPage
      title="API keys"
      section="/dashboard/keys"
      email={props.email}
      notice={props.notice && <Notice kind={props.notice.kind}>{props.notice.text}</Notice>}
    >
      {props.created && <NewKey {...props.created} />}
      <section aria-labelledby="create-key-title" class="dashboard-section">
        <h2 id="create-key-title">Create a key</h2>
        {props.error && (
          <Notice kind="error">
            <span id="key-name-error">{props.error}</span>
          </Notice>
        )}
        {atCap ? (
          <p>
            You have {MAX_ACTIVE_KEYS} keys, the most an account can hold. Revoke one you no longer
            use to create another.
          </p>
        ) : (
          <form method="post" action="/dashboard/keys" class="inline-form" novalidate>
            <div class="field">
              <label for="key-name">
                Name<span class="hint">Where it is used, e.g. “production server”</span>
              </label>
              <input
                id="key-name"
                name="name"
                type="text"
                required
                maxlength={KEY_NAME_MAX}
                value={props.name ?? ""}
                autocomplete="off"
                aria-invalid={props.error ? "true" : undefined}
                aria-describedby={props.error ? "key-name-error" : undefined}
              />
            </div>
            <button type="submit">Create key</button>
          </form>
        )}
      </section>
      <section aria-labelledby="keys-title" class="dashboard-section">
        <h2 id="keys-title">Your keys</h2>
        <KeyList keys={props.keys} />
      </section>
    </DashboardPage>
  );
}

export async function keysPage(c: PageContext) {
  const account = c.get("account");
  const token = c.req.query(SHOW_PARAM);
  // Taken (and deleted) before the list is read, so the list is never older than the key.
  const showing = token === undefined ? undefined : await takeForShowing(c.env, account.id, token);
  const keys = await activeKeys(c.env.DB, account.id);
  const notice = NOTICES[showing && !showing.shown ? "shown-once" : (c.req.query("notice") ?? "")];
  const created = showing?.shown
    ? { keyValue: showing.key, name: showing.name, origin: baseUrl(c) }
    : undefined;
  return renderPage(
    c,
    <KeysPage email={account.email} keys={keys} notice={notice} created={created} />,
  );
}

export async function submitNewKey(c: PageContext) {
  const account = c.get("account");
  const form = await formOf(c);
  const parsed = KeyNameFormSchema.safeParse(form);
  if (!parsed.success) {
    const keys = await activeKeys(c.env.DB, account.id);
    const name = typeof form.name === "string" ? form.name.slice(0, KEY_NAME_MAX * 2) : "";
    const page = (
      <KeysPage
        email={account.email}
        keys={keys}
        error={firstProblem(parsed.error).message}
        name={name}
      />
    );
    return renderPage(c, page, 400);
  }
  const created = await createKey(c.env, account.id, parsed.data.name, eventOrigin(c));
  if (!created) {
    const keys = await activeKeys(c.env.DB, account.id);
    const error = `An account holds at most ${MAX_ACTIVE_KEYS} keys. Revoke one to create another.`;
    return renderPage(c, <KeysPage email={account.email} keys={keys} error={error} />, 400);
  }
  // POST, redirect, GET: the page that shows the key is a GET, so reloading it (or going back
  // to it) sends no form again; the key waits for that one GET in the one-time store.
  const token = await keepForOneShowing(c.env, account.id, created.keyId, created.key);
  return c.redirect(`/dashboard/keys?${SHOW_PARAM}=${token}`, 303);
}

export async function submitKeyRevocation(c: PageContext) {
  const id = c.req.param("id") ?? "";
  const revoked = await revokeKey(c.env, c.get("account").id, id, eventOrigin(c));
  return c.redirect(`/dashboard/keys?notice=${revoked ? "revoked" : "not-found"}`, 303);
}
