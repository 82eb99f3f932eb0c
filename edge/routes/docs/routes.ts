// Where the OpenAPI 3.1 document is served and what it declares besides the routes: the
// security schemes every authenticated route names (AUTH_SECURITY in ../responses.ts).

export const API_BASE_PATH = "/v1";
/** Where the document is served, relative to the API's base path. */
export const DOCUMENT_PATH = "/openapi.json";
export const OPENAPI_PATH = `${API_BASE_PATH}${DOCUMENT_PATH}`;

export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: "http",
    scheme: "bearer",
    description: "Authorization: Bearer stills_live_…",
  },
  apiKeyHeader: { type: "apiKey", in: "header", name: "X-API-Key" },
} as const;
