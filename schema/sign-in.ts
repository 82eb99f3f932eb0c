// The forms of sign-in and the dashboard: what a browser may post, parsed once at the edge.
// Everything here comes from outside, so each field is bounded and normalised.
import { z } from "zod";

/** Where a signed-in visitor lands when `next` is missing or not one of our own paths. */
export const DEFAULT_NEXT = "/dashboard";

const NEXT_BASE = "https://next.invalid";

function isUnsafeInPath(ch: string): boolean {
  const code = ch.charCodeAt(0);
  return ch === "\\" || code < 0x20 || code === 0x7f;
}

/**
 * `next` only ever names a path on this origin: an absolute URL, a scheme-relative `//host`,
 * a backslash trick (`/\host`, which browsers read as `//host`) or a control character all
 * fall back to the dashboard, so a sign-in link cannot send anyone elsewhere.
 */
export function safeNextPath(next: unknown): string {
  if (typeof next !== "string" || next.length > 2000) return DEFAULT_NEXT;
  if (!next.startsWith("/") || next.startsWith("//") || [...next].some(isUnsafeInPath)) {
    return DEFAULT_NEXT;
  }
  const url = new URL(next, NEXT_BASE);
  if (url.origin !== NEXT_BASE) return DEFAULT_NEXT;
  const path = `${url.pathname}${url.search}${url.hash}`;
  // The checks above read the raw string; normalising can still make `//host` of it
  // (`/.//evil.com`, `/..//evil.com`, `/%2e//evil.com`), which a browser reads as another host.
  return path.startsWith("//") ? DEFAULT_NEXT : path;
}

const nextPath = z.unknown().optional().transform(safeNextPath);

export const EmailSchema = z
  .string({ error: "Enter your e-mail address." })
  .trim()
  .toLowerCase()
  .max(254, { error: "That address is too long." })
  .pipe(z.email({ error: "That doesn't look like an e-mail address." }));

export const SignInFormSchema = z.object({ email: EmailSchema, next: nextPath });

export const CODE_LENGTH = 6;

export const CodeFormSchema = z.object({
  email: EmailSchema,
  // People paste "123 456" or "123-456" from a mail: spaces and dashes are not part of a code.
  code: z
    .string({ error: "Enter the code from the e-mail." })
    .transform((value) => value.replace(/[\s-]/g, ""))
    .pipe(z.string().regex(/^\d{6}$/, { error: `The code is ${CODE_LENGTH} digits.` })),
  next: nextPath,
});

export const KEY_NAME_MAX = 60;

export const KeyNameFormSchema = z.object({
  name: z
    .string({ error: "Give the key a name." })
    .trim()
    .min(1, { error: "Give the key a name, e.g. where it will be used." })
    .max(KEY_NAME_MAX, { error: `A key name is at most ${KEY_NAME_MAX} characters.` }),
});

export const PURCHASES = ["starter", "pro", "scale", "pack"] as const;

export const PurchaseFormSchema = z.object({
  purchase: z.enum(PURCHASES, { error: "Choose a plan or the credit pack." }),
});

/** The first message of a failed parse, for the form to show next to its field. */
export function firstProblem(error: z.ZodError): { field: string; message: string } {
  const issue = error.issues[0];
  return { field: String(issue?.path[0] ?? ""), message: issue?.message ?? "Invalid input." };
}
