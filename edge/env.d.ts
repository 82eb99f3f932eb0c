// Bindings wrangler.toml cannot declare: secrets (set with `wrangler secret put` in
// production, handed over by scripts/start.mjs locally) and the production-only container.
interface StillsSecrets {
  /** Shared secret of the edge ⇄ extractor calls. */
  INTERNAL_TOKEN: string;
  /** HMAC key of the signed file URLs. */
  FILE_URL_SECRET: string;
  /** Production only: the extractor as a Cloudflare Container (edge/dispatch.ts). */
  EXTRACTOR?: DurableObjectNamespace;
}

interface Env extends StillsSecrets {}

declare namespace Cloudflare {
  interface Env extends StillsSecrets {}
}
