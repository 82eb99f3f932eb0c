// The local carrier (`npm start`, tests): the message is printed to the console and kept in
// D1's mail_outbox, where `npm run admin -- outbox` and the tests read the latest code.
import type { MailMessage, MailSender } from "./sender.ts";

export function localSender(env: Env): MailSender {
  return {
    async send(message: MailMessage) {
      await env.DB.prepare(
        "INSERT INTO mail_outbox (id, to_email, subject, text, code) VALUES (?, ?, ?, ?, ?)",
      )
        .bind(crypto.randomUUID(), message.to, message.subject, message.text, message.code ?? null)
        .run();
      console.log(
        JSON.stringify({
          level: "info",
          msg: "mail kept in the local outbox",
          to: message.to,
          subject: message.subject,
          text: message.text,
        }),
      );
    },
  };
}
