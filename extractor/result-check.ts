// JSON has no Infinity or NaN: JSON.stringify writes them as null, and the edge then refuses
// the whole result. A result is checked before it leaves, so such a number ends the job as a
// clear failure instead of a refused post.

/** The path of the first number in `value` that is not finite ("frames[2].timestamp"), or null. */
export function nonFiniteNumberIn(value: unknown, path = "result"): string | null {
  if (typeof value === "number") return Number.isFinite(value) ? null : path;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nonFiniteNumberIn(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      const found = nonFiniteNumberIn(inner, `${path}.${key}`);
      if (found) return found;
    }
  }
  return null;
}
