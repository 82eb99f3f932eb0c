// One way to send mail, whatever carries it: MAIL_SENDER (edge/config.ts) chooses the carrier
// ("local": the console and the local outbox, what `npm start` and the tests use; "resend":
// Resend's HTTP API in production). Callers build a MailMessage and never see which it is.
import { edgeConfig, type MailSenderName } from "../config.ts";
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
} satisfies Record<MailSenderName, (env: Env) => MailSender>;

/**
 * The sender MAIL_SENDER names. An unknown name never gets this far: the settings refuse it
 * (EdgeConfigError, naming the value and the known carriers).
 */
export function mailSenderFor(env: Env): MailSender {
  return MAIL_SENDERS[edgeConfig(env).mail.sender](env);
}

export function mailUnavailable(message: string): ApiError {
  return new ApiError("ServiceUnavailable", `Mail could not be sent: ${message}`, {
    userMessage: "We couldn't send the e-mail just now. Please try again in a minute.",
  });
}
