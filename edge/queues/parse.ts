// Queue messages come back from outside the worker's memory (a message queued by an older
// deploy, or by hand with wrangler), so each consumer reads them through the one schema in
// schema/messages.ts. A message that does not parse never will: it is logged once and acked,
// instead of being retried until it becomes a dead letter.
import type { z } from "zod";
import { logEvent } from "../log.ts";

/** The part of a queue message the consumers use, with a body that passed its schema. */
export interface ParsedMessage<T> {
  readonly body: T;
  readonly attempts: number;
  ack(): void;
  retry(options?: QueueRetryOptions): void;
}

/** The batch's messages whose bodies parse by `schema`; the others are acked and logged. */
export function parsedMessages<S extends z.ZodType>(
  batch: MessageBatch<unknown>,
  schema: S,
): ParsedMessage<z.infer<S>>[] {
  const parsed: ParsedMessage<z.infer<S>>[] = [];
  for (const message of batch.messages) {
    const result = schema.safeParse(message.body);
    if (result.success) {
      parsed.push({
        body: result.data,
        attempts: message.attempts,
        ack: () => message.ack(),
        retry: (options) => message.retry(options),
      });
      continue;
    }
    logEvent("error", "queue.message_unreadable", {
      queue: batch.queue,
      job: jobIdOf(message.body),
      message_id: message.id,
      issue: result.error.issues[0]?.message,
      body: message.body,
    });
    message.ack();
  }
  return parsed;
}

/** The job a message names, when it names one, so a grep of the job id finds the line. */
export function jobIdOf(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const { id, job_id } = body as { id?: unknown; job_id?: unknown };
  if (typeof id === "string") return id;
  return typeof job_id === "string" ? job_id : undefined;
}
