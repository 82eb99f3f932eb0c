// The import rules of Stills (docs/decisions/0170-import-rules-checked.md), checked by
// `npm run deps` and so by `npm test` and CI. Known violations that are not fixed yet are
// listed, each by name, in .dependency-cruiser-known-violations.json (when there are any) and
// in the decision record; anything new fails.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      comment:
        "No import cycles, type-only imports included: a cycle means two modules are one, and " +
        "its order of evaluation decides which of them sees the other half-built.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "routes-are-a-leaf",
      comment:
        "Only the entry (edge/index.ts) and the route tree itself import edge/routes/. What a " +
        "service needs from a route (a key's creation, the plan catalog, attempt tokens) lives " +
        "in the domain (edge/jobs/, edge/auth/ …) or in schema/. Tests may reach in.",
      severity: "error",
      from: { pathNot: "^(edge/index[.]ts|edge/routes/|test/)" },
      to: { path: "^edge/routes/" },
    },
    {
      name: "jobs-do-not-call-queue-consumers",
      comment:
        "edge/jobs/ owns a job's life; the queue consumers (edge/queues/) are thin adapters that " +
        "call it, never the other way round, so following a result from its route to its " +
        "settlement never goes back to queues/.",
      severity: "error",
      from: { path: "^edge/jobs/" },
      to: { path: "^edge/queues/" },
    },
    {
      name: "domain-takes-no-hono",
      comment:
        "Domain and storage functions take env, a D1Database or a small context object built by " +
        "the route adapters (edge/request.ts), never Hono's `c` (decision 0270): edge/jobs/, the " +
        "storage modules (but the D1-session middleware), credits, usage, webhooks and the cron " +
        "do not import hono.",
      severity: "error",
      from: {
        path: "^edge/(jobs/|storage/|credits[.]ts|usage[.]ts|webhooks[.]ts|webhook-deliveries[.]ts|webhook-send[.]ts|maintenance[.]ts)",
        pathNot: "^edge/storage/d1-sessions[.]ts$",
      },
      to: { path: "(^|/)node_modules/hono/" },
    },
    {
      name: "schema-is-the-base",
      comment:
        "schema/ holds the shapes both sides share; it imports nothing above it (only schema/ " +
        "itself and libraries).",
      severity: "error",
      from: { path: "^schema/" },
      to: { path: "^(edge|extractor|scripts|test)/" },
    },
    {
      name: "edge-does-not-import-extractor",
      comment:
        "The edge and the extractor meet only in schema/ (the wire contract); tests may import both.",
      severity: "error",
      from: { path: "^edge/" },
      to: { path: "^extractor/" },
    },
    {
      name: "extractor-does-not-import-edge",
      comment:
        "The edge and the extractor meet only in schema/ (the wire contract); tests may import both.",
      severity: "error",
      from: { path: "^extractor/" },
      to: { path: "^edge/" },
    },
    {
      name: "no-unresolvable-imports",
      comment:
        "An import the checker cannot resolve is an import no rule can judge: fix the path or " +
        "tell the checker how it resolves.",
      severity: "error",
      from: { path: "^(edge|extractor|schema|scripts|test)/" },
      to: {
        couldNotResolve: true,
        // Runtime modules with no file: the Workers runtime's and the test pool's own.
        pathNot: "^(cloudflare:|node:)",
      },
    },
  ],
  options: {
    // Packages are listed but not followed: a rule can name one (domain-takes-no-hono).
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(dist|[.]wrangler)/" },
    // Type-only imports are dependencies too: a schema that imports a type from edge/ is as
    // tied to it as one that imports a value.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      extensions: [".ts", ".tsx", ".mts", ".mjs", ".js", ".json", ".d.ts"],
      // Packages resolve through their "exports" (hono/factory, the MCP SDK's subpaths).
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "workerd", "worker", "default", "types"],
      mainFields: ["module", "main", "types"],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
