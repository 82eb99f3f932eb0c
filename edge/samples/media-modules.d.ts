// Videos wrangler.toml's "Data" rule bundles as bytes (edge/samples/, docs/decisions/0130).
declare module "*.mp4" {
  const bytes: ArrayBuffer;
  export default bytes;
}
