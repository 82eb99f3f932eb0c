import { defineConfig } from "drizzle-kit";

// Migrations land where wrangler.toml's migrations_dir points, so `wrangler d1 migrations
// apply` and the test setup read the same files drizzle-kit writes.
export default defineConfig({
  dialect: "sqlite",
  schema: "./schema/db.ts",
  out: "./schema/migrations",
});
