// Production carrier: Resend's HTTP API (https://resend.com/docs/api-reference/emails/send-email).
// The key is the RESEND_API_KEY secret; the sender address is MAIL_FROM, on a domain verified
// with Resend (both read through edge/config.ts).
import { edgeConfig } from "../config.ts";
import { logEvent } from "../log.ts";
import { type MailMessage, type MailSender, mailUnavailable } from "./message.ts";

export const RESEND_ENDPOINT = "https://api.resend.com/emails";
const SEND_TIMEOUT_MS = 10_000;

export function resendSender(env: Env): MailSender {
  return {
    async send(message: MailMessage) {
      const { resendApiKey: apiKey, from } = edgeConfig(env).mail;
      if (!apiKey) throw mailUnavailable('MAIL_SENDER is "resend" but RESEND_API_KEY is not set');
      let response: Response;
      try {
        response = await fetch(RESEND_ENDPOINT, {
          method: "POST",
          headers: {
            authorization: `Bearer ${apiKey}`,
            "content-type": "application/json",
          },
          body: JSON.stringify({
            from,
            to: [message.to],
            subject: message.subject,
            text: message.text,
          }),
          signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
        });
      } catch (err) {
        throw mailUnavailable(`Resend could not be reached (${String(err)})`);
      }
      if (!response.ok) {
        // Resend's error body names the problem (an unverified domain, a bad key); it is ours
        // to read in the logs, not the visitor's.
        const detail = (await response.text()).slice(0, 500);
        logEvent("error", "mail.refused", { carrier: "resend", status: response.status, detail });
        throw mailUnavailable(`Resend answered ${response.status}`);
      }
      await response.body?.cancel();
    },
  };
}
