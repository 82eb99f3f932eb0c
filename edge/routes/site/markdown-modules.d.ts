// The guides (docs/guides/*.md), bundled as text by wrangler.toml's module rules.
declare module "*.md" {
  const text: string;
  export default text;
}
