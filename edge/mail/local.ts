// The local carrier (`npm start`, tests): the message is printed to the console and kept in
// D1's mail_outbox, where `npm run admin -- outbox` and the tests read the latest code.
import { logEvent } from "../log.ts";
import { keepLocalMail } from "../storage/accounts.ts";
import type { MailMessage, MailSender } from "./message.ts";

export function localSender(env: Env): MailSender {
  return {
    async send(message: MailMessage) {
      await keepLocalMail(env.DB, message);
      // The whole text, code included: locally the console is where the person reads it.
      logEvent("info", "mail.kept_locally", {
        to: message.to,
        subject: message.subject,
        text: message.text,
      });
    },
  };
}
