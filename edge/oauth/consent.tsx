// The consent page: which client asks, where its tokens will go, what it may do, as whom.
// Every string from the client is self-asserted; hono/jsx escapes it.
import type { ConsentDescription } from "@cloudflare/workers-oauth-provider";
import { Page } from "../pages/layout.tsx";
import { AUTHORIZE_PATH } from "./server.ts";

export function ConsentPage(props: { consent: ConsentDescription; handle: string; email: string }) {
  const { consent } = props;
  return (
    <Page title="Connect an app to Stills" path={AUTHORIZE_PATH}>
      <main id="main" class="wrap narrow">
        <h1>Connect {consent.clientName} to Stills?</h1>
        <p>
          <strong>{consent.clientName}</strong> asks to use Stills as <strong>{props.email}</strong>
          . It will be able to extract frames from videos, which spends this account's credits, and
          to read its jobs, frames and usage.
        </p>
        <dl class="facts">
          <dt>Sends you back to</dt>
          <dd>
            <code>{consent.redirectHost}</code>
          </dd>
          {consent.clientDomain && (
            <>
              <dt>Client's verified domain</dt>
              <dd>{consent.clientDomain}</dd>
            </>
          )}
        </dl>
        {consent.redirectIsLoopback && (
          <p role="note">
            This client runs on your own computer. Approve only if you just started connecting it
            yourself: any program on this computer could be listening there.
          </p>
        )}
        <p>
          Approving adds a key named “MCP: {consent.clientName}” to your account. Revoke that key in
          your dashboard to disconnect the client.
        </p>
        <form method="post" action={AUTHORIZE_PATH}>
          <input type="hidden" name="handle" value={props.handle} />
          <button type="submit" name="decision" value="approve">
            Approve
          </button>{" "}
          <button type="submit" name="decision" value="deny" class="secondary">
            Deny
          </button>
        </form>
      </main>
    </Page>
  );
}

export function AuthorizationProblem(props: { message: string }) {
  return (
    <Page title="Can't connect this app" path={AUTHORIZE_PATH}>
      <main id="main" class="wrap narrow">
        <h1>This connection request can't be completed</h1>
        <p>{props.message}</p>
        <p>Start connecting again from the app you were using.</p>
      </main>
    </Page>
  );
}
