// Bindings wrangler.toml cannot declare: secrets, set with `wrangler secret put` in production
// and handed over by scripts/start.mjs locally (README "Configuration").
interface StillsSecrets {
  /** Shared secret of the edge ⇄ extractor calls. */
  INTERNAL_TOKEN: string;
  /** HMAC key of the signed file URLs. */
  FILE_URL_SECRET: string;
  /** Stripe's secret API key; without it buying is off and the admin command grants. */
  STRIPE_SECRET_KEY?: string;
  /** Signing secret of Stripe's webhook endpoint (`whsec_…`). */
  STRIPE_WEBHOOK_SECRET?: string;
  /** API key of the transactional mail service when MAIL_SENDER = "resend". */
  RESEND_API_KEY?: string;
  /**
   * R2 API token (Object Read only, this bucket) whose S3 credentials sign frame and ZIP URLs
   * for R2's S3 endpoint. Without both, file URLs stay on the edge's /files/*.
   */
  R2_ACCESS_KEY_ID?: string;
  R2_SECRET_ACCESS_KEY?: string;
}

interface Env extends StillsSecrets {}

declare namespace Cloudflare {
  interface Env extends StillsSecrets {}
}
