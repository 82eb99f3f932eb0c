// The sign-in mail: short, with the code where a phone's mail preview shows it, and what to do
// when it was not you who asked.
import type { MailMessage } from "./message.ts";

export function signInCodeMail(to: string, code: string, validMinutes: number): MailMessage {
  return {
    to,
    subject: `${code} is your Stills sign-in code`,
    code,
    text: [
      `Your Stills sign-in code is ${code}`,
      "",
      `Enter it on the sign-in page within ${validMinutes} minutes. It works once.`,
      "",
      "If you did not ask to sign in, ignore this message: nobody can sign in without the code.",
    ].join("\n"),
  };
}
