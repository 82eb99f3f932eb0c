// One way to send mail, whatever carries it: MAIL_SENDER (edge/config.ts) chooses the carrier
// ("local": the console and the local outbox, what `npm start` and the tests use; "resend":
// Resend's HTTP API in production). Callers build a MailMessage and never see which it is.
import { edgeConfig, type MailSenderName } from "../config.ts";
import { localSender } from "./local.ts";
import type { MailSender } from "./message.ts";
import { resendSender } from "./resend.ts";

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
