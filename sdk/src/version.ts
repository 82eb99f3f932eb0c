/** The SDK's version: the API's OpenAPI `info.version` for major and minor (test/sdk/types.test.ts). */
export const VERSION = "1.0.0";
