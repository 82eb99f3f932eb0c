// What an MCP connector may register at /oauth/register (RFC 7591 dynamic client registration),
// bounded field by field: registration needs no account, and every client is kept in OAUTH_KV,
// so without bounds one request could store a thousand redirect URIs or a megabyte of name.
// The OAuth provider checks each field's type and meaning; these are only the sizes.
import { z } from "zod";

export const CLIENT_REGISTRATION_LIMITS = {
  /** The whole registration document. */
  bodyBytes: 16 * 1024,
  redirectUris: 10,
  uriLength: 2_000,
  /** A connector's key is named "MCP: <client name>", cut at 80 characters. */
  clientNameLength: 100,
  contacts: 5,
  contactLength: 320,
  /** grant_types, response_types and the like: a few short names each. */
  names: 5,
  nameLength: 100,
  scopeLength: 1_000,
  /** Localized variants (`client_name#fr`, `tos_uri#de` …), all fields together. */
  localizedFields: 10,
} as const;

const L = CLIENT_REGISTRATION_LIMITS;

const uri = z.string().max(L.uriLength, `at most ${L.uriLength} characters`);
const names = z
  .array(z.string().max(L.nameLength, `each at most ${L.nameLength} characters`))
  .max(L.names, `at most ${L.names} entries`);

/** The fields the provider keeps, each bounded. */
const fields = {
  redirect_uris: z
    .array(uri)
    .max(L.redirectUris, `at most ${L.redirectUris} redirect URIs`)
    .optional(),
  client_name: z
    .string()
    .max(L.clientNameLength, `at most ${L.clientNameLength} characters`)
    .optional(),
  client_uri: uri.optional(),
  logo_uri: uri.optional(),
  policy_uri: uri.optional(),
  tos_uri: uri.optional(),
  jwks_uri: uri.optional(),
  contacts: z
    .array(z.string().max(L.contactLength, `each at most ${L.contactLength} characters`))
    .max(L.contacts, `at most ${L.contacts} contacts`)
    .optional(),
  grant_types: names.optional(),
  response_types: names.optional(),
  token_endpoint_auth_methods_supported: names.optional(),
  token_endpoint_auth_signing_alg_values_supported: names.optional(),
  token_endpoint_auth_method: z.string().max(L.nameLength).optional(),
  token_endpoint_auth_signing_alg: z.string().max(L.nameLength).optional(),
  scope: z.string().max(L.scopeLength, `at most ${L.scopeLength} characters`).optional(),
};

/**
 * Field by field. Fields the provider does not keep (software_statement …) are bounded by the
 * document's size alone.
 */
export const ClientRegistrationSchema = z.looseObject(fields).superRefine((document, ctx) => {
  const localized = Object.keys(document).filter((name) => name.includes("#"));
  if (localized.length > L.localizedFields) {
    ctx.addIssue({
      code: "custom",
      message: `at most ${L.localizedFields} localized fields (name#language)`,
    });
  }
  for (const name of localized) {
    const value = document[name];
    const most = name.startsWith("client_name#") ? L.clientNameLength : L.uriLength;
    if (typeof value === "string" && value.length > most) {
      ctx.addIssue({ code: "custom", path: [name], message: `at most ${most} characters` });
    }
  }
});
