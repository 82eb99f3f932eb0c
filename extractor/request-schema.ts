// POST /extract's body, validated before anything runs, with the one schema of that boundary
// (schema/messages.ts): the edge builds the request, the extractor trusts nothing it did not
// check.
import type { ExtractRequest } from "../schema/messages.ts";
import { ExtractRequestSchema } from "../schema/messages.ts";

export { ExtractRequestSchema as extractRequestSchema };

export function parseExtractRequest(
  body: unknown,
): { ok: true; request: ExtractRequest } | { ok: false; issues: string[] } {
  const parsed = ExtractRequestSchema.safeParse(body);
  if (parsed.success) return { ok: true, request: parsed.data };
  return {
    ok: false,
    issues: parsed.error.issues.map(
      (issue) => `${issue.path.join(".") || "body"}: ${issue.message}`,
    ),
  };
}
