// Sign-in by e-mail code: ask for a code, enter it, and a session starts (the account is made
// on the first sign-in, with the free plan's credits). Sign-out ends the session in D1.
import { accountStatements } from "../../../schema/accounts.ts";
import {
  CodeFormSchema,
  DEFAULT_NEXT,
  EmailSchema,
  firstProblem,
  SignInFormSchema,
  safeNextPath,
} from "../../../schema/sign-in.ts";
import { eventOrigin, recordAccountEvent } from "../../auth/account-events.ts";
import {
  checkNewAccountAllowance,
  countNewAccount,
  limitCodeRequests,
} from "../../auth/code-limits.ts";
import {
  CODE_MAX_TRIES,
  CODE_VALID_MINUTES,
  checkSignInCode,
  issueSignInCode,
} from "../../auth/codes.ts";
import { endSession, sessionAccount, startSession } from "../../auth/session.ts";
import { edgeConfig } from "../../config.ts";
import { ApiError } from "../../errors.ts";
import { mailSenderFor } from "../../mail/sender.ts";
import { signInCodeMail } from "../../mail/sign-in-mail.ts";
import { enforceIpRate } from "../../middleware/rate-limit.ts";
import { formOf } from "../../pages/forms.ts";
import { accountIdByEmail, writeSignIn } from "../../storage/accounts.ts";
import type { PageContext } from "./ui.tsx";
import { AccountPage, Notice, renderPage } from "./ui.tsx";

function codePagePath(email: string, next: string) {
  const query = new URLSearchParams({ email });
  if (next !== DEFAULT_NEXT) query.set("next", next);
  return `/sign-in/code?${query}`;
}

function SignInForm(props: { next: string; email?: string; error?: string; notice?: string }) {
  return (
    <AccountPage title="Sign in">
      <h1>Sign in</h1>
      <p class="lead">
        We e-mail you a six-digit code; no password. New to Stills? The same code creates your
        account, with 60 free credits every month.
      </p>
      {props.notice && <Notice kind="success">{props.notice}</Notice>}
      {props.error && (
        <Notice kind="error">
          <span id="email-error">{props.error}</span>
        </Notice>
      )}
      <form method="post" action="/sign-in" class="account-form" novalidate>
        <input type="hidden" name="next" value={props.next} />
        <div class="field">
          <label for="email">E-mail address</label>
          <input
            id="email"
            name="email"
            type="email"
            autocomplete="email"
            required
            maxlength={254}
            value={props.email ?? ""}
            aria-invalid={props.error ? "true" : undefined}
            aria-describedby={props.error ? "email-error" : undefined}
          />
        </div>
        <button type="submit">Send me a code</button>
      </form>
    </AccountPage>
  );
}

function CodeForm(props: { email: string; next: string; localMail: boolean; error?: string }) {
  return (
    <AccountPage title="Enter your code">
      <h1>Check your e-mail</h1>
      <p class="lead">
        We sent a six-digit code to <strong>{props.email}</strong>. It works for{" "}
        {CODE_VALID_MINUTES} minutes.
      </p>
      {props.localMail && (
        <Notice kind="info">
          This server keeps its mail locally: the code is in the server's console, and{" "}
          <code>npm run --silent admin -- outbox --email {props.email}</code> prints it.
        </Notice>
      )}
      {props.error && (
        <Notice kind="error">
          <span id="code-error">{props.error}</span>
        </Notice>
      )}
      <form method="post" action="/sign-in/code" class="account-form" novalidate>
        <input type="hidden" name="email" value={props.email} />
        <input type="hidden" name="next" value={props.next} />
        <div class="field">
          <label for="code">Six-digit code</label>
          <input
            id="code"
            name="code"
            type="text"
            inputmode="numeric"
            autocomplete="one-time-code"
            required
            maxlength={9}
            class="code-input"
            aria-invalid={props.error ? "true" : undefined}
            aria-describedby={props.error ? "code-error" : undefined}
          />
        </div>
        <button type="submit">Sign in</button>
      </form>
      <div class="account-alternatives">
        <form method="post" action="/sign-in">
          <input type="hidden" name="email" value={props.email} />
          <input type="hidden" name="next" value={props.next} />
          <button type="submit" class="button-secondary">
            Send a new code
          </button>
        </form>
        <a
          href={`/sign-in${props.next === DEFAULT_NEXT ? "" : `?next=${encodeURIComponent(props.next)}`}`}
        >
          Use another address
        </a>
      </div>
    </AccountPage>
  );
}

const NOTICES: Record<string, string> = {
  "signed-out": "You are signed out.",
};

export async function signInPage(c: PageContext) {
  const next = safeNextPath(c.req.query("next"));
  if (await sessionAccount(c)) return c.redirect(next, 303);
  const notice = NOTICES[c.req.query("notice") ?? ""];
  return renderPage(c, <SignInForm next={next} notice={notice} />);
}

export async function sendSignInCode(c: PageContext) {
  const form = await formOf(c);
  const parsed = SignInFormSchema.safeParse(form);
  if (!parsed.success) {
    const next = safeNextPath(form.next);
    const email = typeof form.email === "string" ? form.email.slice(0, 254) : "";
    return renderPage(
      c,
      <SignInForm next={next} email={email} error={firstProblem(parsed.error).message} />,
      400,
    );
  }
  const { email, next } = parsed.data;
  try {
    await limitCodeRequests(c, email);
    const issued = await issueSignInCode(c.env, email);
    await mailSenderFor(c.env).send(signInCodeMail(email, issued.code, issued.validMinutes));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (err.retryAfter !== undefined) c.header("Retry-After", String(err.retryAfter));
    const status = err.status === 429 ? 429 : 503;
    return renderPage(c, <SignInForm next={next} email={email} error={err.userMessage} />, status);
  }
  return c.redirect(codePagePath(email, next), 303);
}

export async function codePage(c: PageContext) {
  const next = safeNextPath(c.req.query("next"));
  const email = EmailSchema.safeParse(c.req.query("email"));
  if (!email.success) return c.redirect(`/sign-in?next=${encodeURIComponent(next)}`, 303);
  return renderPage(
    c,
    <CodeForm
      email={email.data}
      next={next}
      localMail={edgeConfig(c.env).mail.sender === "local"}
    />,
  );
}

export async function signInWithCode(c: PageContext) {
  // Guesses count against the client too, so many addresses cannot be tried at once.
  await enforceIpRate(c);
  const form = await formOf(c);
  const parsed = CodeFormSchema.safeParse(form);
  if (!parsed.success) {
    const email = EmailSchema.safeParse(form.email);
    if (!email.success) return c.redirect("/sign-in", 303);
    const page = (
      <CodeForm
        email={email.data}
        next={safeNextPath(form.next)}
        localMail={edgeConfig(c.env).mail.sender === "local"}
        error={firstProblem(parsed.error).message}
      />
    );
    return renderPage(c, page, 400);
  }
  const { email, code, next } = parsed.data;
  const localMail = edgeConfig(c.env).mail.sender === "local";
  const existing = await accountIdByEmail(c.env.DB, email);
  // A new account is capped per network: asked before the code is used, so whoever is
  // refused keeps their code, and counted once it has signed in.
  const refused = async (open: () => Promise<void>) => {
    try {
      await open();
      return undefined;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 429) throw err;
      if (err.retryAfter !== undefined) c.header("Retry-After", String(err.retryAfter));
      const page = (
        <CodeForm email={email} next={next} localMail={localMail} error={err.userMessage} />
      );
      return renderPage(c, page, 429);
    }
  };
  if (!existing) {
    const capped = await refused(() => checkNewAccountAllowance(c));
    if (capped) return capped;
  }
  const check = await checkSignInCode(c.env, email, code);
  if (!check.ok) {
    const error =
      check.reason === "wrong"
        ? `That code is not right. ${check.triesLeft} ${check.triesLeft === 1 ? "try" : "tries"} left.`
        : check.reason === "no-tries-left"
          ? `That was the last of ${CODE_MAX_TRIES} tries: this code no longer works. Send a new one.`
          : `This code has expired (codes work for ${CODE_VALID_MINUTES} minutes). Send a new one.`;
    const page = <CodeForm email={email} next={next} localMail={localMail} error={error} />;
    return renderPage(c, page, 400);
  }
  if (!existing) {
    const capped = await refused(() => countNewAccount(c));
    if (capped) return capped;
  }
  const account = await accountStatements({ email });
  const origin = eventOrigin(c);
  await writeSignIn(c.env.DB, account, [
    ...(existing ? [] : [{ kind: "account_created" as const, origin }]),
    { kind: "sign_in", origin },
  ]);
  await startSession(c, account.accountId);
  return c.redirect(next, 303);
}

export async function signOut(c: PageContext) {
  const account = await sessionAccount(c);
  await endSession(c);
  if (account) await recordAccountEvent(c.env, account.id, "sign_out", eventOrigin(c));
  return c.redirect("/sign-in?notice=signed-out", 303);
}
