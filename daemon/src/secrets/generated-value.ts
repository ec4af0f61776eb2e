/** Prefixes of well-known generated credentials (GitHub, GitLab, OpenAI/Stripe, Slack, AWS, Google, JWT, ...). */
const KNOWN_PREFIX = new RegExp(
  "^(?:gh[pousr]_|github_pat_|glpat-|sk-|sk_(?:live|test)_|rk_(?:live|test)_|pk_live_|xox[abposr]-|xapp-|hf_|npm_|pypi-" +
    "|AKIA|ASIA|AIza|ya29\\.|dop_v1_|shp(?:at|ss|ca|pa)_|SG\\.|eyJ)",
);

/** Bits of Shannon entropy per character. */
function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / text.length) * Math.log2(n / text.length);
  return bits;
}

/** Character class for {@link looksGenerated}: lower, upper, digit, other. */
function charClass(ch: string): number {
  if (ch >= "a" && ch <= "z") return 0;
  if (ch >= "A" && ch <= "Z") return 1;
  if (ch >= "0" && ch <= "9") return 2;
  return 3;
}

/**
 * Whether a value looks like a generated credential: a well-known token prefix (`ghp_`, `sk-`,
 * `xoxb-`, `AKIA`, a JWT, ...; 12+ characters, no space), 32+ hex digits, a UUID, or 16+ characters of
 * the base64/base64url alphabet that mix letters and digits the way random strings do (the character
 * class changes at 30%+ of positions, 20%+ from 32 characters on, and parts between `-`/`_` are not
 * plain words or numbers). Paths, flags (`--x=y`), dotted versions, e-mail addresses, URLs and words
 * joined by dashes never match.
 */
export function looksGenerated(value: string): boolean {
  if (/\s/.test(value)) return false;
  if (value.length >= 12 && KNOWN_PREFIX.test(value)) return true;
  if (/^[0-9a-f]{32,}$/i.test(value)) return true;
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return true;
  // `=` only as base64 padding; a leading `-` or `/` is a flag or a path.
  if (value.length < 16 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(value) || /^[-/]/.test(value)) return false;
  if (!/[0-9]/.test(value) || !/[A-Za-z]/.test(value)) return false;
  // Words and numbers joined by separators (`node_modules_v18_2024`) are names, not randomness.
  const parts = value.split(/[-_]+/).filter((p) => p.length >= 4);
  if (value.split(/[-_]+/).length > 1 && parts.every((p) => /^[A-Za-z]+$/.test(p) || /^[0-9]+$/.test(p))) return false;
  let changes = 0;
  for (let i = 1; i < value.length; i++) if (charClass(value[i] as string) !== charClass(value[i - 1] as string)) changes++;
  // Random text over 36-64 symbols changes class at 40-60% of positions; names and words far less.
  return changes / (value.length - 1) >= (value.length >= 32 ? 0.2 : 0.3) && entropy(value) >= 3;
}
