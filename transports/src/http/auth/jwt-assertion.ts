import { constants, createPrivateKey, sign, type KeyObject } from "node:crypto";
import { ConfigError } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../../defaults.js";
import { base64url, randomState } from "./pkce.js";

/** How each supported JWS algorithm signs: the digest, and the key type it needs. */
const ALGORITHMS: Readonly<Record<string, { hash: string | null; key: string; pss?: true; curve?: string }>> = {
  RS256: { hash: "sha256", key: "rsa" },
  RS384: { hash: "sha384", key: "rsa" },
  RS512: { hash: "sha512", key: "rsa" },
  PS256: { hash: "sha256", key: "rsa", pss: true },
  PS384: { hash: "sha384", key: "rsa", pss: true },
  PS512: { hash: "sha512", key: "rsa", pss: true },
  ES256: { hash: "sha256", key: "ec", curve: "prime256v1" },
  ES384: { hash: "sha384", key: "ec", curve: "secp384r1" },
  ES512: { hash: "sha512", key: "ec", curve: "secp521r1" },
  EdDSA: { hash: null, key: "ed25519" },
};

/** The JWS algorithms `private_key_jwt` can use. */
export const JWT_ALGORITHMS: readonly string[] = Object.keys(ALGORITHMS);

/**
 * Reads a PEM private key. @throws ConfigError (`MCPD_CONFIG_INVALID`) when it is not one (the key itself
 * is never quoted).
 */
export function readPrivateKey(pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    throw new ConfigError(`auth: "privateKey" is not a PEM private key (PKCS#8 or PKCS#1): ${(err as Error).message}`);
  }
}

/**
 * The algorithm to sign with: the configured one, else the first the server supports that fits the key
 * (`supported`), else the key's natural one (RS256, ES256/384/512 by curve, EdDSA).
 * @throws ConfigError when the configured algorithm is unknown or does not fit the key.
 */
export function chooseAlgorithm(key: KeyObject, configured: string | undefined, supported: readonly string[] | undefined): string {
  const fits = (alg: string): boolean => {
    const spec = ALGORITHMS[alg];
    if (!spec || spec.key !== key.asymmetricKeyType) return false;
    return spec.curve === undefined || spec.curve === key.asymmetricKeyDetails?.namedCurve;
  };
  if (configured !== undefined) {
    if (!fits(configured)) {
      throw new ConfigError(
        `auth: "signingAlgorithm" ${JSON.stringify(configured)} does not fit a ${key.asymmetricKeyType ?? "unknown"} key (one of ${JWT_ALGORITHMS.join(", ")})`,
      );
    }
    return configured;
  }
  const offered = supported?.find(fits);
  if (offered) return offered;
  const natural = JWT_ALGORITHMS.find((alg) => fits(alg) && !ALGORITHMS[alg]!.pss);
  if (!natural) throw new ConfigError(`auth: a ${key.asymmetricKeyType ?? "unknown"} key cannot sign a client assertion`);
  return natural;
}

/**
 * A client assertion (RFC 7523 section 2.2) for `private_key_jwt`: `iss` and `sub` the client id, `aud`
 * the authorization server's issuer, a fresh `jti`, `iat` now and `exp` after
 * `TRANSPORT_DEFAULTS.oauthAssertionLifetimeMs`.
 */
export function clientAssertion(key: KeyObject, algorithm: string, clientId: string, audience: string, now = Date.now()): string {
  const spec = ALGORITHMS[algorithm];
  if (!spec) throw new ConfigError(`auth: unknown signing algorithm ${JSON.stringify(algorithm)}`);
  const iat = Math.floor(now / 1000);
  const header = { alg: algorithm, typ: "JWT" };
  const payload = {
    iss: clientId,
    sub: clientId,
    aud: audience,
    jti: randomState(),
    iat,
    exp: iat + Math.floor(TRANSPORT_DEFAULTS.oauthAssertionLifetimeMs / 1000),
  };
  const input = `${base64url(Buffer.from(JSON.stringify(header)))}.${base64url(Buffer.from(JSON.stringify(payload)))}`;
  const signature = sign(spec.hash, Buffer.from(input), {
    key,
    // JWS wants ECDSA signatures as r||s, not DER.
    ...(spec.key === "ec" ? { dsaEncoding: "ieee-p1363" as const } : {}),
    ...(spec.pss ? { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST } : {}),
  });
  return `${input}.${base64url(signature)}`;
}
