// What every mail carrier (./local.ts, ./resend.ts) takes and how it says it failed; the
// carrier is chosen in ./sender.ts.
import { ApiError } from "../errors.ts";

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

export function mailUnavailable(message: string): ApiError {
  return new ApiError("ServiceUnavailable", `Mail could not be sent: ${message}`, {
    userMessage: "We couldn't send the e-mail just now. Please try again in a minute.",
  });
}
