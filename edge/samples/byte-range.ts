// One byte range of a Range header (RFC 9110 §14), as the sample route serves it. A header we
// do not serve (several ranges, another unit, bad syntax) is ignored and the whole file is
// sent, which the RFC allows; a range that starts past the end is unsatisfiable (416).

export type ByteRange = { offset: number; length: number };

export function parseByteRange(
  header: string | undefined,
  size: number,
): ByteRange | "unsatisfiable" | null {
  const match = /^bytes=(\d*)-(\d*)$/.exec((header ?? "").trim());
  if (!match || (match[1] === "" && match[2] === "")) return null;
  if (match[1] === "") {
    // The last N bytes.
    const suffix = Number(match[2]);
    if (suffix === 0) return "unsatisfiable";
    const length = Math.min(suffix, size);
    return { offset: size - length, length };
  }
  const first = Number(match[1]);
  const last = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (match[2] !== "" && Number(match[2]) < first) return null;
  if (first >= size) return "unsatisfiable";
  return { offset: first, length: last - first + 1 };
}
