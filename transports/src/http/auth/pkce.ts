import { createHash, randomBytes } from "node:crypto";

/** A PKCE pair (RFC 7636): the verifier kept for the token request, the S256 challenge sent ahead. */
export interface Pkce {
  verifier: string;
  challenge: string;
  method: "S256";
}

/** base64url without padding (RFC 7636 appendix A). */
export function base64url(bytes: Buffer): string {
  return bytes.toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A fresh verifier of 43 characters (32 random bytes) and its S256 challenge, BASE64URL(SHA256(verifier)). */
export function createPkce(): Pkce {
  const verifier = base64url(randomBytes(32));
  return { verifier, challenge: base64url(createHash("sha256").update(verifier).digest()), method: "S256" };
}

/** An unguessable `state` value (or JWT id): 16 random bytes, base64url. */
export function randomState(): string {
  return base64url(randomBytes(16));
}
