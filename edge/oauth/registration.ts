// Dynamic client registration (/oauth/register) is open to anyone, and every client it accepts
// is kept in OAUTH_KV: a registration is held to the bounds of schema/oauth-client.ts, and one
// past them is refused with RFC 7591's invalid_client_metadata (400) naming the field.
import type {
  ClientRegistrationCallbackOptions,
  ClientRegistrationCallbackResult,
} from "@cloudflare/workers-oauth-provider";
import { CLIENT_REGISTRATION_LIMITS, ClientRegistrationSchema } from "../../schema/oauth-client.ts";

export async function checkClientRegistration({
  clientMetadata,
  request,
}: ClientRegistrationCallbackOptions): Promise<ClientRegistrationCallbackResult | undefined> {
  const bytes = new TextEncoder().encode(await request.text()).byteLength;
  const most = CLIENT_REGISTRATION_LIMITS.bodyBytes;
  if (bytes > most) {
    return refused(`the registration is ${bytes} bytes; at most ${most / 1024} KiB is accepted`);
  }
  const checked = ClientRegistrationSchema.safeParse(clientMetadata);
  if (checked.success) return undefined;
  const issue = checked.error.issues[0];
  const field = issue?.path.join(".") || "the registration";
  return refused(`${field}: ${issue?.message ?? "too large"}`);
}

function refused(description: string): ClientRegistrationCallbackResult {
  return { code: "invalid_client_metadata", description, status: 400 };
}
