// Language tags from three worlds compared as one: clients send BCP 47 ("en-US"), platforms
// name their tracks in BCP 47 or close to it ("en", "pt-BR", "en-orig"), and MP4/Matroska tag
// tracks in ISO 639-2 ("eng", "ger" or "deu"). Everything is reduced to a primary subtag.

// ISO 639-2 (bibliographic and terminology codes) → ISO 639-1, for the languages most tracks use.
const THREE_TO_TWO: Record<string, string> = {
  ara: "ar",
  ben: "bn",
  bul: "bg",
  cat: "ca",
  ces: "cs",
  cze: "cs",
  chi: "zh",
  zho: "zh",
  dan: "da",
  deu: "de",
  ger: "de",
  ell: "el",
  gre: "el",
  eng: "en",
  est: "et",
  fas: "fa",
  per: "fa",
  fin: "fi",
  fra: "fr",
  fre: "fr",
  heb: "he",
  hin: "hi",
  hrv: "hr",
  hun: "hu",
  ind: "id",
  ita: "it",
  jpn: "ja",
  kor: "ko",
  lav: "lv",
  lit: "lt",
  msa: "ms",
  may: "ms",
  nld: "nl",
  dut: "nl",
  nor: "no",
  nob: "nb",
  nno: "nn",
  pol: "pl",
  por: "pt",
  ron: "ro",
  rum: "ro",
  rus: "ru",
  slk: "sk",
  slo: "sk",
  slv: "sl",
  spa: "es",
  srp: "sr",
  swe: "sv",
  tam: "ta",
  tel: "te",
  tha: "th",
  tur: "tr",
  ukr: "uk",
  urd: "ur",
  vie: "vi",
  fil: "fil",
  tgl: "tl",
  isl: "is",
  ice: "is",
  gle: "ga",
  cym: "cy",
  wel: "cy",
  eus: "eu",
  baq: "eu",
  glg: "gl",
  afr: "af",
  swa: "sw",
};

/** A tag as clients should see it (BCP 47 shape), or null for "undetermined" and junk. */
export function normalizeLanguage(tag: string | null | undefined): string | null {
  if (!tag) return null;
  const cleaned = tag.trim().replace(/_/g, "-");
  if (!/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/.test(cleaned) || cleaned.length > 35) return null;
  const [primary, ...rest] = cleaned.split("-");
  const lower = primary.toLowerCase();
  if (lower === "und" || lower === "mul" || lower === "zxx" || lower === "mis") return null;
  const two = lower.length === 3 ? (THREE_TO_TWO[lower] ?? lower) : lower;
  return [two, ...rest].join("-");
}

export function primarySubtag(tag: string | null | undefined): string | null {
  return normalizeLanguage(tag)?.split("-")[0] ?? null;
}

/**
 * Of the candidates' tags, the best for `wanted` (exact, case-insensitive), else the first with
 * the same primary subtag; -1 when none.
 */
export function bestLanguageMatch(tags: (string | null)[], wanted: string | null): number {
  const want = normalizeLanguage(wanted);
  if (!want) return -1;
  const normalized = tags.map((tag) => normalizeLanguage(tag)?.toLowerCase() ?? null);
  const exact = normalized.indexOf(want.toLowerCase());
  if (exact >= 0) return exact;
  const primary = want.split("-")[0].toLowerCase();
  return normalized.findIndex((tag) => tag !== null && tag.split("-")[0] === primary);
}
