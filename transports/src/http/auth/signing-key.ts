import { createPrivateKey, webcrypto, type KeyObject } from "node:crypto";
import { ConfigError } from "@mcpd/protocol";

/** Each JWS algorithm `private_key_jwt` can use: the key type it needs, and its WebCrypto import parameters. */
const ALGORITHMS: Readonly<
  Record<
    string,
    { key: string; curve?: string; params: webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams | webcrypto.Algorithm }
  >
> = {
  RS256: { key: "rsa", params: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } },
  RS384: { key: "rsa", params: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-384" } },
  RS512: { key: "rsa", params: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-512" } },
  PS256: { key: "rsa", params: { name: "RSA-PSS", hash: "SHA-256" } },
  PS384: { key: "rsa", params: { name: "RSA-PSS", hash: "SHA-384" } },
  PS512: { key: "rsa", params: { name: "RSA-PSS", hash: "SHA-512" } },
  ES256: { key: "ec", curve: "prime256v1", params: { name: "ECDSA", namedCurve: "P-256" } },
  ES384: { key: "ec", curve: "secp384r1", params: { name: "ECDSA", namedCurve: "P-384" } },
  ES512: { key: "ec", curve: "secp521r1", params: { name: "ECDSA", namedCurve: "P-521" } },
  EdDSA: { key: "ed25519", params: { name: "Ed25519" } },
};

/** The JWS algorithms `private_key_jwt` can use. */
export const JWT_ALGORITHMS: readonly string[] = Object.keys(ALGORITHMS);

/** Reads a PEM private key. @throws ConfigError when it is not one (the key itself is never quoted). */
export function readPrivateKey(pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    throw new ConfigError(`auth: "privateKey" is not a PEM private key (PKCS#8 or PKCS#1): ${(err as Error).message}`);
  }
}

/**
 * The algorithm to sign with: the configured one, else the first the server supports that fits the key,
 * else the key's natural one (RS256, ES256/384/512 by curve, EdDSA).
 * @throws ConfigError when the configured algorithm is unknown or does not fit the key.
 */
export function chooseAlgorithm(key: KeyObject, configured: string | undefined, supported: readonly string[] | undefined): string {
  const fits = (alg: string): boolean => {
    const spec = ALGORITHMS[alg];
    return spec?.key === key.asymmetricKeyType && (spec.curve === undefined || spec.curve === key.asymmetricKeyDetails?.namedCurve);
  };
  if (configured !== undefined && !fits(configured)) {
    throw new ConfigError(
      `auth: "signingAlgorithm" ${JSON.stringify(configured)} does not fit a ${key.asymmetricKeyType ?? "unknown"} key (one of ${JWT_ALGORITHMS.join(", ")})`,
    );
  }
  const chosen = configured ?? supported?.find(fits) ?? JWT_ALGORITHMS.find((alg) => fits(alg) && !alg.startsWith("PS"));
  if (!chosen) throw new ConfigError(`auth: a ${key.asymmetricKeyType ?? "unknown"} key cannot sign a client assertion`);
  return chosen;
}

/**
 * The PEM key as a non-extractable WebCrypto key (what oauth4webapi's `PrivateKeyJwt` signs with), and
 * the algorithm for the assertion's header (oauth4webapi would name an Ed25519 key `Ed25519`, RFC 9864; servers
 * know it as `EdDSA`).
 */
export async function importSigningKey(
  pem: string,
  configured: string | undefined,
  supported: readonly string[] | undefined,
): Promise<{ key: webcrypto.CryptoKey; alg: string }> {
  const key = readPrivateKey(pem);
  const alg = chooseAlgorithm(key, configured, supported);
  const der = key.export({ type: "pkcs8", format: "der" });
  return { key: await webcrypto.subtle.importKey("pkcs8", der, ALGORITHMS[alg]!.params, false, ["sign"]), alg };
}
