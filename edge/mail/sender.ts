// One way to send mail, whatever carries it: MAIL_SENDER chooses the carrier once per request
// ("local": the console and the local outbox, what `npm start` and the tests use; "resend":
// Resend's HTTP API in production). Callers build a MailMessage and never see which it is.
import { ApiError } from "../errors.ts";
import { localSender } from "./local.ts";
import { resendSender } from "./resend.ts";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** The one-time sign-in code the message carries, kept apart for the local outbox. */
  code?: string;
}

export interface MailSender {
  send(message: MailMessage): Promise<void>;
}

export const MAIL_SENDERS = {
  local: localSender,
  resend: resendSender,
} satisfies Record<string, (env: Env) => MailSender>;

/** The sender MAIL_SENDER names; an unknown name is a configuration error, said plainly. */
export function mailSenderFor(env: Env): MailSender {
  const name = (env.MAIL_SENDER ?? "").trim();
  if (!Object.hasOwn(MAIL_SENDERS, name)) {
    console.error(
      JSON.stringify({
        level: "error",
        msg: "mail sender not configured",
        mail_sender: name,
        known: Object.keys(MAIL_SENDERS),
      }),
    );
    throw mailUnavailable(
      `MAIL_SENDER is "${name}", not one of ${Object.keys(MAIL_SENDERS).join(", ")}`,
    );
  }
  return MAIL_SENDERS[name as keyof typeof MAIL_SENDERS](env);
}

export function mailUnavailable(message: string): ApiError {
  return new ApiError("ServiceUnavailable", `Mail could not be sent: ${message}`, {
    userMessage: "We couldn't send the e-mail just now. Please try again in a minute.",
  });
}
