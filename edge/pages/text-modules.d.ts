// Files wrangler.toml's module rules bundle as text (see edge/pages/assets.ts).
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*.client.js" {
  const text: string;
  export default text;
}
declare module "*/@scalar/api-reference/dist/browser/standalone.js" {
  const text: string;
  export default text;
}
