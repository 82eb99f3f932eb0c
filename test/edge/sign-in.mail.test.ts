// The mail senders: production's Resend sender checked against a stand-in for Resend's API
// (what it is sent, and what happens when it refuses), a whole sign-in with it, and the clear
// error of a sender that is not configured.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../edge/errors.ts";
import { app } from "../../edge/index.ts";
import { mailSenderFor } from "../../edge/mail/sender.ts";
import { ORIGIN } from "./support/api.ts";
import { setOutbound } from "./support/fake-extractor.ts";

const RESEND_KEY = "re_test_0123456789";

interface Sent {
  url: string;
  method: string;
  headers: Headers;
  body: Record<string, unknown>;
}

/** Resend's API as a stand-in: records each request and answers with `status`. */
function standInResend(status = 200) {
  const sent: Sent[] = [];
  setOutbound(async (request) => {
    sent.push({
      url: request.url,
      method: request.method,
      headers: request.headers,
      body: (await request.json()) as Record<string, unknown>,
    });
    return status === 200
      ? Response.json({ id: crypto.randomUUID() })
      : Response.json({ name: "validation_error", message: "domain not verified" }, { status });
  });
  return sent;
}

const resendEnv = (extra: Partial<Env> = {}): Env => ({
  ...env,
  MAIL_SENDER: "resend",
  RESEND_API_KEY: RESEND_KEY,
  MAIL_FROM: "Stills <sign-in@stills.test>",
  ...extra,
});

describe("the Resend sender", () => {
  it("posts the message to Resend's API with the key as a bearer token", async () => {
    const sent = standInResend();
    await mailSenderFor(resendEnv()).send({ to: "ada@example.com", subject: "Hi", text: "Body" });
    expect(sent).toHaveLength(1);
    expect(sent[0].url).toBe("https://api.resend.com/emails");
    expect(sent[0].method).toBe("POST");
    expect(sent[0].headers.get("authorization")).toBe(`Bearer ${RESEND_KEY}`);
    expect(sent[0].headers.get("content-type")).toBe("application/json");
    expect(sent[0].body).toEqual({
      from: "Stills <sign-in@stills.test>",
      to: ["ada@example.com"],
      subject: "Hi",
      text: "Body",
    });
  });

  it("a refusal from Resend is ServiceUnavailable, without the key in it", async () => {
    standInResend(422);
    const error = await mailSenderFor(resendEnv())
      .send({ to: "ada@example.com", subject: "Hi", text: "Body" })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).apiName).toBe("ServiceUnavailable");
    expect((error as ApiError).message).toContain("422");
    expect(JSON.stringify((error as ApiError).toBody())).not.toContain(RESEND_KEY);
  });

  it("without RESEND_API_KEY it says so instead of sending", async () => {
    const sent = standInResend();
    const error = await mailSenderFor(resendEnv({ RESEND_API_KEY: "" }))
      .send({ to: "ada@example.com", subject: "Hi", text: "Body" })
      .catch((err: unknown) => err);
    expect((error as ApiError).message).toContain("RESEND_API_KEY");
    expect(sent).toHaveLength(0);
  });

  it("an unknown MAIL_SENDER is a clear configuration error", () => {
    expect(() => mailSenderFor({ ...env, MAIL_SENDER: "carrier-pigeon" })).toThrowError(
      /MAIL_SENDER is "carrier-pigeon", not one of local, resend/,
    );
  });
});

describe("signing in with the Resend sender", () => {
  async function post(workerEnv: Env, path: string, form: Record<string, string>) {
    const ctx = createExecutionContext();
    const response = await app.fetch(
      new Request(`${ORIGIN}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          origin: ORIGIN,
          "cf-connecting-ip": `198.51.100.${Math.floor(Math.random() * 200) + 1}`,
        },
        body: new URLSearchParams(form),
        redirect: "manual",
      }),
      workerEnv,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    return response;
  }

  it("mails the code through Resend (not the local outbox), and that code signs in", async () => {
    const sent = standInResend();
    const email = `${crypto.randomUUID()}@example.com`;
    const asked = await post(resendEnv(), "/sign-in", { email });
    expect(asked.status).toBe(303);
    expect(sent).toHaveLength(1);
    expect(sent[0].body.to).toEqual([email]);
    const code = /\b(\d{6})\b/.exec(String(sent[0].body.text))?.[1] ?? "";
    expect(String(sent[0].body.subject)).toContain(code);
    const local = await env.DB.prepare("SELECT count(*) AS n FROM mail_outbox WHERE to_email = ?")
      .bind(email)
      .first<{ n: number }>();
    expect(local?.n).toBe(0);

    const signedIn = await post(resendEnv(), "/sign-in/code", { email, code });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.getSetCookie().join()).toContain("__Host-stills_session=");
  });

  it("when Resend refuses, the page says the mail could not be sent (503)", async () => {
    standInResend(500);
    const response = await post(resendEnv(), "/sign-in", {
      email: `${crypto.randomUUID()}@example.com`,
    });
    expect(response.status).toBe(503);
    const page = await response.text();
    expect(page).toContain("send the e-mail just now");
    expect(page).not.toContain(RESEND_KEY);
  });
});
